#include "core/Log.hpp"

#include "util/Process.hpp"
#include "util/Redactor.hpp"

#include <fcntl.h>
#include <mutex>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ddl::log {
namespace {

std::mutex g_mutex;
std::shared_ptr<spdlog::logger> g_logger;
std::shared_ptr<spdlog::sinks::sink> g_file_sink;
Level g_level = Level::normal;

spdlog::logger& logger() {
    std::lock_guard lock(g_mutex);
    if (!g_logger) {
        auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        sink->set_pattern("%v");
        sink->set_level(spdlog::level::info);
        g_logger = std::make_shared<spdlog::logger>("ddl", spdlog::sinks_init_list{sink});
        g_logger->set_level(spdlog::level::debug);
    }
    return *g_logger;
}

} // namespace

void init(Level level) {
    g_level = level;
    auto& l = logger();
    auto& sink = l.sinks().front();
    sink->set_level(level == Level::quiet     ? spdlog::level::warn
                    : level == Level::verbose ? spdlog::level::debug
                                              : spdlog::level::info);
    set_process_observer([](const std::string& argv) { debug("run: " + argv); });
}

void add_file(const std::string& path) {
    close_file();
    // Create the file owner-only before spdlog opens it for appending.
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        fchmod(fd, 0600);
        close(fd);
    }
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, false);
    sink->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
    sink->set_level(spdlog::level::debug);
    auto& l = logger();
    std::lock_guard lock(g_mutex);
    l.sinks().push_back(sink);
    g_file_sink = sink;
}

void close_file() {
    auto& l = logger();
    std::lock_guard lock(g_mutex);
    if (!g_file_sink) return;
    auto& sinks = l.sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), g_file_sink), sinks.end());
    g_file_sink->flush();
    g_file_sink.reset();
}

void register_secret(const std::string& secret) {
    redaction::register_secret(secret);
}

std::string redact(std::string text) {
    return redaction::redact(std::move(text));
}

void info(const std::string& msg) {
    logger().info(redact(msg));
}
void warn(const std::string& msg) {
    logger().warn(redact(msg));
}
void error(const std::string& msg) {
    logger().error(redact(msg));
}
void debug(const std::string& msg) {
    logger().debug(redact(msg));
}
void file_only(const std::string& msg) {
    std::shared_ptr<spdlog::sinks::sink> sink;
    {
        std::lock_guard lock(g_mutex);
        sink = g_file_sink;
    }
    if (!sink) return;
    const std::string text = redact(msg);
    spdlog::details::log_msg m("ddl", spdlog::level::info, spdlog::string_view_t(text.data(), text.size()));
    sink->log(m);
}
bool verbose() {
    return g_level == Level::verbose;
}
bool quiet() {
    return g_level == Level::quiet;
}

} // namespace ddl::log
