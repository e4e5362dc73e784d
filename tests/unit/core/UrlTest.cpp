#include "core/Url.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace ddl;

TEST_CASE("URLs are read as libcurl reads them: scheme, host without brackets, port, user info") {
    auto u = parse_url("HTTPS://GPULab.example.org:8443/api/v3");
    REQUIRE(u.ok());
    CHECK(u->scheme == "https");
    CHECK(u->host == "gpulab.example.org");
    CHECK(u->port == 8443);
    CHECK(u->path == "/api/v3");
    CHECK_FALSE(u->has_user_info);
    auto v6 = parse_url("http://[::1]:9/");
    REQUIRE(v6.ok());
    CHECK(v6->host == "::1");
    auto tricky = parse_url("http://localhost:80@evil.example/");
    REQUIRE(tricky.ok());
    CHECK(tricky->host == "evil.example");
    CHECK(tricky->has_user_info);
    for (const char* bad : {"https://", "gpulab.example.org/api", "", "http://a b/", "https://x:99999/"}) {
        INFO(bad);
        CHECK_FALSE(parse_url(bad).ok());
    }
}

TEST_CASE("service URLs: https anywhere, plain http only where allowed, never credentials in the URL") {
    CHECK(check_service_url("https://hooks.example.org/x", false, false).ok());
    CHECK(check_service_url("http://127.0.0.1:8080/hook", false, true).ok());
    CHECK(check_service_url("http://localhost/hook", false, true).ok());
    CHECK(check_service_url("http://[::1]:9/", false, true).ok());
    CHECK(check_service_url("http://deb.debian.org/debian", true, false).ok());

    auto smuggled = check_service_url("http://localhost:80@evil.example/", false, true);
    REQUIRE_FALSE(smuggled.ok());
    CHECK(smuggled.error().message.find("evil.example") != std::string::npos);
    auto plain = check_service_url("http://chat.example.org/hook", false, true);
    REQUIRE_FALSE(plain.ok());
    CHECK(plain.error().message.find("plain http only to this machine") != std::string::npos);
    auto ftp = check_service_url("ftp://ftp.debian.org/debian", true, false);
    REQUIRE_FALSE(ftp.ok());
    CHECK(ftp.error().message == "must be an http:// or https:// URL, not ftp://");
    CHECK_FALSE(check_service_url("https://", false, false).ok());
    CHECK_FALSE(check_service_url("http://127.0.0.1.evil.example/", false, true).ok());
}
