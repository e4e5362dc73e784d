#include "render/Expiry.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("the expiry is the state's creation time plus the lifetime, in RFC 3339 UTC") {
    Spec s;
    s.life.lifetime_s = 12 * 3600 + 30;
    CHECK(expiry_stamp(s, "2026-11-27T18:00:00Z", 0) == "2026-11-28T06:00:30Z");
    // Before the cluster is created (plan, render): from now.
    CHECK(expiry_stamp(s, "", 1'795'000'000) == "2026-11-18T23:07:10Z");
    CHECK(expiry_stamp(s, "not a time", 1'795'000'000) == "2026-11-18T23:07:10Z");
}

TEST_CASE("without a lifetime nothing is recorded") {
    Spec s;
    CHECK(expiry_stamp(s, "2026-11-27T18:00:00Z", 0).empty());
}
