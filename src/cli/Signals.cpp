#include "cli/Signals.hpp"

#include <signal.h>

namespace ddl::cli {

std::atomic<bool> g_interrupted{false};

namespace {

void on_signal(int) {
    g_interrupted = true;
}

} // namespace

// SIGINT/SIGTERM stop long commands at the next safe point instead of killing them mid-write.
void install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
}

} // namespace ddl::cli
