#pragma once
// Logging for the whole tool: human lines on stderr (verbosity from -v/-q) and, per cluster, a full log
// file. Every message passes through the shared redactor first, so registered secrets never reach a log.
#include <spdlog/spdlog.h>
#include <string>

namespace ddl::log {

enum class Level { quiet, normal, verbose };

void init(Level level);
// Adds a log file (mode 0600) that receives everything at debug level.
void add_file(const std::string& path);
void close_file();
// Values that must never be written to any log or printed (tokens, passwords); replaced by "***". The
// shared redactor (util/Redactor.hpp), which also masks what ddl prints on stdout and stderr.
void register_secret(const std::string& secret);
std::string redact(std::string text);

void info(const std::string& msg);
void warn(const std::string& msg);
void error(const std::string& msg);
void debug(const std::string& msg);
// Only into the cluster's log file (a line already shown on the terminal another way).
void file_only(const std::string& msg);
bool verbose();
bool quiet();

} // namespace ddl::log
