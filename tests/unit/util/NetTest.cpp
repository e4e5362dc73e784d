#include "util/Net.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace ddl;

TEST_CASE("host addresses: IPv4, IPv6 and RFC 1123 names; all-digit last labels are not names") {
    for (const char* good : {"10.0.0.1", "::1", "2001:db8::10", "a", "gpu1", "x-1.example.org",
                             "node.example.", "1node.example.org", "123abc"}) {
        INFO(good);
        CHECK(is_host_address(good));
    }
    std::string long_label(64, 'a'), long_name;
    for (int i = 0; i < 64; ++i)
        long_name += "abc.";
    long_name += "org";
    for (const std::string& bad :
         {std::string("999.1.1.1"), std::string("10.0.0"), std::string("1.2.3.4.5"), std::string(""),
          std::string("."), std::string("-a"), std::string("a-"), std::string("a..b"), std::string("a_b"),
          std::string("[::1]"), std::string("a b"), long_label, long_name}) {
        INFO(bad);
        CHECK_FALSE(is_host_address(bad));
    }
}
