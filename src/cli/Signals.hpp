#pragma once
// SIGINT/SIGTERM for long commands: a flag they check at safe points instead of dying mid-write.
#include <atomic>

namespace ddl::cli {

// Set by SIGINT/SIGTERM once install_signal_handlers() ran.
extern std::atomic<bool> g_interrupted;
// SIGINT/SIGTERM set g_interrupted; SIGPIPE is ignored (a closed pipe becomes a write error).
void install_signal_handlers();

} // namespace ddl::cli
