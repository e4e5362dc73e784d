#include "targets/local/LocalTarget.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("the shaped link's bucket is two milliseconds of line rate and never under 128 KiB") {
    CHECK(LocalTarget::tbf_burst_bytes(1'000'000'000) == 250'000);
    CHECK(LocalTarget::tbf_burst_bytes(10'000'000'000) == 2'500'000);
    CHECK(LocalTarget::tbf_burst_bytes(100'000'000) == 128 * 1024);
}
