#include "targets/virtualwall/GeniIdentity.hpp"

#include "util/LoginPem.hpp"

#include <cstdio>
#include <ctime>
#include <regex>

namespace ddl {

Result<GeniIdentity> parse_user_urn(const std::string& urn) {
    // The authority may carry sub-authorities (a:b); names are the GENI URN characters.
    static const std::regex re(R"(urn:publicid:IDN\+([A-Za-z0-9.\-:_]+)\+user\+([A-Za-z0-9._\-]+))");
    std::smatch m;
    if (!std::regex_match(urn, m, re))
        return Error{"\"" + urn + "\" is not a GENI user URN (urn:publicid:IDN+AUTHORITY+user+NAME)"};
    return GeniIdentity{urn, m[1].str(), m[2].str()};
}

Result<GeniIdentity> geni_identity_from_pem(const std::string& path) {
    auto id = login_pem_identity(path);
    if (!id) return id.error();
    return parse_user_urn(id->urn);
}

std::string geni_slice_urn(const std::string& authority, const std::string& project,
                           const std::string& slice) {
    return "urn:publicid:IDN+" + authority + ":" + project + "+slice+" + slice;
}

std::string geni_project_urn(const std::string& authority, const std::string& project) {
    return "urn:publicid:IDN+" + authority + "+project+" + project;
}

std::string format_rfc3339(TimePoint t) {
    std::time_t s = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

Result<TimePoint> parse_rfc3339(const std::string& text) {
    static const std::regex re(
        R"((\d{4})-?(\d{2})-?(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?)");
    std::smatch m;
    if (!std::regex_match(text, m, re)) return Error{"\"" + text + "\" is not an RFC 3339 time"};
    std::tm tm{};
    tm.tm_year = std::stoi(m[1]) - 1900;
    tm.tm_mon = std::stoi(m[2]) - 1;
    tm.tm_mday = std::stoi(m[3]);
    tm.tm_hour = std::stoi(m[4]);
    tm.tm_min = std::stoi(m[5]);
    tm.tm_sec = std::stoi(m[6]);
    if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60)
        return Error{"\"" + text + "\" is not a valid time"};
    std::time_t t = timegm(&tm);
    std::string zone = m[7].str();
    if (!zone.empty() && zone != "Z") {
        const int sign = zone[0] == '-' ? -1 : 1;
        const int hh = std::stoi(zone.substr(1, 2));
        const int mm = std::stoi(zone.substr(zone.size() - 2));
        t -= static_cast<std::time_t>(sign) *
             (static_cast<std::time_t>(hh) * 3600 + static_cast<std::time_t>(mm) * 60);
    }
    return std::chrono::system_clock::from_time_t(t);
}

} // namespace ddl
