#pragma once
// URLs as libcurl's URL API reads them (curl_url): the same parser that later fetches them, so what a
// check accepts is what is fetched. Scheme and host lower-cased; user info reported, never accepted
// silently: "http://localhost:80@evil.example/" has host evil.example.
#include "util/Result.hpp"

#include <string>

namespace ddl {

struct Url {
    std::string scheme; // "https"
    std::string host;   // "gpulab.ilabt.imec.be", "127.0.0.1", "::1" (no brackets)
    int port = 0;       // as written; 0 when none (the scheme's default)
    std::string path;   // "/" when none
    bool has_user_info = false;
};

// Parses an absolute URL with a host. Errors say what is wrong ("has no host", "is not a URL").
Result<Url> parse_url(const std::string& text);

// localhost, 127.0.0.0/8 or ::1.
bool url_host_is_loopback(const std::string& host);

// For a spec value or flag: an https URL with a host and no user info, or an http one to a loopback host
// when `http_loopback_ok`. The Error's message completes "<what> must be ...".
Status check_service_url(const std::string& text, bool http_ok, bool http_loopback_ok);

} // namespace ddl
