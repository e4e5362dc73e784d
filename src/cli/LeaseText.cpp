#include "cli/LeaseText.hpp"

#include <ctime>

namespace ddl::cli {

std::string lease_text(std::optional<std::chrono::system_clock::time_point> end,
                       std::chrono::system_clock::time_point now) {
    if (!end) return "no lease (the nodes stay until destroyed)";
    std::time_t t = std::chrono::system_clock::to_time_t(*end);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const bool past = *end < now;
    const auto left = std::chrono::duration_cast<std::chrono::minutes>(past ? now - *end : *end - now);
    const std::string span =
        std::to_string(left.count() / 60) + "h " + std::to_string(left.count() % 60) + "m";
    return past ? std::string("lease ended ") + when + " (" + span + " ago)"
                : std::string("lease ends ") + when + " (in " + span + ")";
}

} // namespace ddl::cli
