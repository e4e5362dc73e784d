#include "targets/virtualwall/GeniIdentity.hpp"

#include "util/Files.hpp"

#include <cstdio>
#include <ctime>
#include <memory>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
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
    // Only the certificate block is handed to OpenSSL; the private key stays in the file.
    auto text = read_file_limited(path, std::size_t{1024} * 1024);
    if (!text) return Error{path + ": " + text.error().message};
    const std::string begin = "-----BEGIN CERTIFICATE-----";
    const std::string end = "-----END CERTIFICATE-----";
    auto b = text->find(begin);
    auto e = text->find(end, b == std::string::npos ? 0 : b);
    if (b == std::string::npos || e == std::string::npos) return Error{path + " holds no certificate"};
    const std::string cert = text->substr(b, e + end.size() - b) + "\n";
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(cert.data(), static_cast<int>(cert.size())),
                                                  BIO_free);
    if (!bio) return Error{"cannot read the certificate of " + path};
    std::unique_ptr<X509, decltype(&X509_free)> x509(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr),
                                                     X509_free);
    if (!x509) return Error{"the certificate in " + path + " cannot be parsed"};
    using Names = STACK_OF(GENERAL_NAME);
    std::unique_ptr<Names, void (*)(Names*)> names(
        static_cast<Names*>(X509_get_ext_d2i(x509.get(), NID_subject_alt_name, nullptr, nullptr)),
        [](Names* n) { GENERAL_NAMES_free(n); });
    std::string found;
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
        const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
        if (n->type != GEN_URI) continue;
        const ASN1_IA5STRING* uri = n->d.uniformResourceIdentifier;
        std::string value(reinterpret_cast<const char*>(ASN1_STRING_get0_data(uri)),
                          static_cast<std::size_t>(ASN1_STRING_length(uri)));
        if (value.rfind("urn:publicid:IDN+", 0) == 0) {
            found = value;
            if (value.find("+user+") != std::string::npos) break;
        }
    }
    if (found.empty())
        return Error{"the certificate in " + path +
                     " has no GENI URN in its subjectAltName: use the login file your iLab.t account page "
                     "(or jFed) gives you"};
    return parse_user_urn(found);
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
