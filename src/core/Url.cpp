#include "core/Url.hpp"

#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <curl/curl.h>
#include <memory>

namespace ddl {
namespace {

struct UrlDeleter {
    void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct PartDeleter {
    void operator()(char* p) const { curl_free(p); }
};

// One part of a parsed URL; empty when the URL has none.
std::string part(CURLU* u, CURLUPart which) {
    char* raw = nullptr;
    if (curl_url_get(u, which, &raw, 0) != CURLUE_OK || !raw) return "";
    std::unique_ptr<char, PartDeleter> p(raw);
    return p.get();
}

} // namespace

Result<Url> parse_url(const std::string& text) {
    if (text.find_first_of(" \t\r\n\"'\\<>") != std::string::npos)
        return Error{"is not a URL (it holds a space, quote, backslash or angle bracket)"};
    std::unique_ptr<CURLU, UrlDeleter> u(curl_url());
    if (!u) return Error{"cannot be checked (libcurl out of memory)"};
    // Flags 0: a scheme is required and must be one libcurl supports.
    CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, text.c_str(), 0);
    if (rc != CURLUE_OK) return Error{std::string("is not a URL (") + curl_url_strerror(rc) + ")"};
    Url url;
    url.scheme = to_lower(part(u.get(), CURLUPART_SCHEME));
    url.host = to_lower(part(u.get(), CURLUPART_HOST));
    if (url.host.size() > 2 && url.host.front() == '[' && url.host.back() == ']')
        url.host = std::string(url.host.begin() + 1, url.host.end() - 1);
    if (url.host.empty()) return Error{"has no host"};
    if (auto p = part(u.get(), CURLUPART_PORT); !p.empty()) {
        auto n = parse_int(p);
        if (!n || *n < 1 || *n > 65535) return Error{"has a port outside 1-65535"};
        url.port = static_cast<int>(*n);
    }
    url.path = part(u.get(), CURLUPART_PATH);
    if (url.path.empty()) url.path.push_back('/');
    url.has_user_info = !part(u.get(), CURLUPART_USER).empty() || !part(u.get(), CURLUPART_PASSWORD).empty();
    return url;
}

bool url_host_is_loopback(const std::string& host) {
    if (host == "localhost" || host == "::1") return true;
    return is_ipv4(host) && starts_with(host, "127.");
}

Status check_service_url(const std::string& text, bool http_ok, bool http_loopback_ok) {
    auto url = parse_url(text);
    if (!url) return url.error();
    if (url->has_user_info)
        return Error{"carries a user name or password before its host (\"" + url->host +
                     "\" is the host it names); give credentials another way"};
    if (url->scheme == "https") return {};
    if (url->scheme == "http" && http_ok) return {};
    if (url->scheme == "http" && http_loopback_ok && url_host_is_loopback(url->host)) return {};
    std::string msg = "must be ";
    if (url->scheme == "http" && http_loopback_ok) {
        msg += "https:// (plain http only to this machine: localhost, 127.0.0.1, [::1]); the host is ";
        msg += url->host;
        return Error{msg};
    }
    msg += http_ok ? "an http:// or https:// URL, not " : "an https:// URL, not ";
    msg += url->scheme;
    msg += "://";
    return Error{msg};
}

} // namespace ddl
