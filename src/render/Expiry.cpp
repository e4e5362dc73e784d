#include "render/Expiry.hpp"

#include "util/UtcTime.hpp"

namespace ddl {

std::string expiry_stamp(const Spec& spec, const std::string& created_at, long long now_s) {
    if (spec.life.lifetime_s <= 0) return "";
    const auto from = utc_parse(created_at);
    const long long start = from ? static_cast<long long>(*from) : now_s;
    return utc_text(static_cast<std::time_t>(start + spec.life.lifetime_s));
}

} // namespace ddl
