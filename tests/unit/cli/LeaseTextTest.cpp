#include "cli/LeaseText.hpp"

#include <catch2/catch.hpp>

using namespace ddl::cli;

TEST_CASE("a lease is shown with its end in UTC and the time left or past") {
    const auto now = std::chrono::system_clock::from_time_t(1'795'000'000); // 2026-11-18T11:06:40Z
    CHECK(lease_text(now + std::chrono::minutes(185), now) == "lease ends 2026-11-18T14:11:40Z (in 3h 5m)");
    CHECK(lease_text(now - std::chrono::minutes(61), now) == "lease ended 2026-11-18T10:05:40Z (1h 1m ago)");
    CHECK(lease_text(std::nullopt, now) == "no lease (the nodes stay until destroyed)");
}
