#include "cli/GcExpired.hpp"

#include <catch2/catch.hpp>

using namespace ddl;
using namespace ddl::cli;

namespace {

// 2026-11-18T11:06:40Z
const auto k_now = std::chrono::system_clock::from_time_t(1'795'000'000);

FoundCluster leaked(const std::string& expires, const std::string& state_dir = "/gone/.ddl/c1") {
    FoundCluster f;
    f.cluster = "c1";
    f.state_dir = state_dir;
    f.expires = expires;
    return f;
}

} // namespace

TEST_CASE("a recorded end that has passed, with no state folder left, is expired") {
    auto v = judge_target_expiry(leaked("2026-11-18T11:06:39Z"), "", "/here/c1", k_now);
    CHECK(v.what == TargetExpiry::expired);
    CHECK(v.why == "its lifetime ended 2026-11-18T11:06:39Z; its state folder /gone/.ddl/c1 is gone");
    // The very second it ends counts as ended, as for the state folder's lifetime.
    CHECK(judge_target_expiry(leaked("2026-11-18T11:06:40Z"), "", "/here/c1", k_now).what ==
          TargetExpiry::expired);
    // Servers that record no state folder but an end that has passed: the end is the deployer's word.
    auto old = judge_target_expiry(leaked("2026-11-18T10:00:00Z", ""), "", "/here/c1", k_now);
    CHECK(old.what == TargetExpiry::expired);
    CHECK(old.why == "its lifetime ended 2026-11-18T10:00:00Z; it records no state folder");
}

TEST_CASE("a recorded end still to come is named with the time left") {
    auto v = judge_target_expiry(leaked("2026-11-18T13:36:40Z"), "", "/here/c1", k_now);
    CHECK(v.what == TargetExpiry::not_yet);
    CHECK(v.why == "its lifetime ends 2026-11-18T13:36:40Z (in 2h 30m)");
}

TEST_CASE("a cluster that records no end, or one that does not read as a UTC time, is left alone") {
    CHECK(judge_target_expiry(leaked(""), "", "/here/c1", k_now).what == TargetExpiry::not_recorded);
    for (const char* bad :
         {"tomorrow", "2026-11-18 10:00:00", "2026-11-18T10:00:00+02:00", "2026-13-40T10:00:00Z"})
        CHECK(judge_target_expiry(leaked(bad), "", "/here/c1", k_now).what == TargetExpiry::unreadable);
}

TEST_CASE("a cluster whose state folder is still there is not destroyed from the target's side") {
    // In this state folder: its own check (lifetime from created_at, idle clock) decides.
    CHECK(
        judge_target_expiry(leaked("2026-11-18T10:00:00Z", "/here/c1"), "/here/c1", "/here/c1", k_now).what ==
        TargetExpiry::state_here);
    // In another state folder on this machine: gc --expired runs there.
    auto v = judge_target_expiry(leaked("2026-11-18T10:00:00Z", "/other/c1"), "/other/c1", "/here/c1", k_now);
    CHECK(v.what == TargetExpiry::state_elsewhere);
    CHECK(v.why == "its state is in /other/c1, where `ddl gc --expired` decides on it");
}
