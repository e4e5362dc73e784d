#include "util/UtcTime.hpp"

namespace ddl {

std::string utc_text(std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::optional<std::time_t> utc_parse(const std::string& text) {
    std::tm tm{};
    if (text.empty() || strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return std::nullopt;
    return timegm(&tm);
}

} // namespace ddl
