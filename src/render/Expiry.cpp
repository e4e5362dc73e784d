#include "render/Expiry.hpp"

#include <ctime>

namespace ddl {

std::string expiry_stamp(const Spec& spec, const std::string& created_at, long long now_s) {
    if (spec.life.lifetime_s <= 0) return "";
    std::tm tm{};
    long long from = now_s;
    if (!created_at.empty() && strptime(created_at.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr)
        from = static_cast<long long>(timegm(&tm));
    const auto end = static_cast<std::time_t>(from + spec.life.lifetime_s);
    std::tm out{};
    gmtime_r(&end, &out);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &out);
    return buf;
}

} // namespace ddl
