#include "cli/LeaseText.hpp"

#include <ctime>

namespace ddl::cli {

std::string time_left(std::chrono::system_clock::time_point end, std::chrono::system_clock::time_point now) {
    long long m = std::chrono::duration_cast<std::chrono::minutes>(end - now).count();
    if (m < 0) m = 0;
    if (m < 60) return std::to_string(m) + "m";
    if (m < 48LL * 60) return std::to_string(m / 60) + "h " + std::to_string(m % 60) + "m";
    return std::to_string(m / 1440) + "d " + std::to_string(m % 1440 / 60) + "h";
}

std::string iso_utc(std::chrono::system_clock::time_point t) {
    const std::time_t s = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

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
