#include "util/Url.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("percent_encode keeps RFC 3986's unreserved characters and writes every other byte as %XX") {
    CHECK(percent_encode("AZaz09-._~") == "AZaz09-._~");
    CHECK(percent_encode("ddl-cluster=a b/c") == "ddl-cluster%3Da%20b%2Fc");
    CHECK(percent_encode("+&*") == "%2B%26%2A");
    CHECK(percent_encode("\xC3\xA9") == "%C3%A9");
    CHECK(percent_encode("") == "");
}
