#include "provision/Progress.hpp"

#include "core/Log.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>
#include <unistd.h>

namespace ddl {
namespace {
std::mutex g_mutex;
}

ConsoleProgress::ConsoleProgress() {
    m_tty = isatty(STDERR_FILENO) != 0;
    const char* no_color = std::getenv("NO_COLOR");
    m_color = m_tty && !(no_color && *no_color);
}

std::string ConsoleProgress::paint(const std::string& text, const char* code) const {
    return m_color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
}

void ConsoleProgress::line(const std::string& text, bool always) {
    std::lock_guard lock(g_mutex);
    log::file_only(text);
    if (log::quiet() && !always) return;
    std::string out = log::redact(text);
    if (!m_tty) {
        std::time_t t = std::time(nullptr);
        std::tm tm{};
        gmtime_r(&t, &tm);
        char ts[32];
        std::strftime(ts, sizeof ts, "%H:%M:%S", &tm);
        out = std::string(ts) + " " + out;
    }
    // std::cerr, which run_app routes through the redactor too, keeps the order of lines written both ways.
    std::cerr << out << "\n";
}

void ConsoleProgress::phase_start(const std::string& phase, const std::string& why) {
    line(paint("==> " + phase, "1") + (log::verbose() ? "  (" + why + ")" : ""));
}

void ConsoleProgress::phase_done(const std::string& phase, double seconds, double cpu_seconds, bool skipped) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.1f s, %.1f CPU-s here", seconds, cpu_seconds);
    line(skipped ? paint("    " + phase + ": already done, skipped", "2")
                 : paint("    " + phase + ": ok", "32") + " (" + buf + ")");
}

void ConsoleProgress::phase_failed(const std::string& phase, const std::string& message) {
    line(paint("    " + phase + ": FAILED", "31") + ": " + message, true);
}

void ConsoleProgress::node(const std::string& node, const std::string& message) {
    line("    [" + node + "] " + message);
}

void ConsoleProgress::note(const std::string& message) {
    line(message);
}

} // namespace ddl
