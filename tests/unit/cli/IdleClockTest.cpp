#include "cli/IdleClock.hpp"

#include "provision/TargetCapabilities.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;
using namespace ddl::cli;

namespace {

// 2026-11-18T11:06:40Z
const auto k_t0 = std::chrono::system_clock::from_time_t(1'795'000'000);

IdleRecord record(const nlohmann::json& j) {
    auto r = parse_idle_record(j);
    REQUIRE(r);
    return *r;
}

} // namespace

TEST_CASE("an idle record is read from ddl-idle's JSON and refused without its decision time") {
    auto r = record({{"checked_at", "2026-11-18T11:06:40Z"},
                     {"idle_since", "2026-11-18T10:56:40Z"},
                     {"busy", nlohmann::json::array()},
                     {"period_s", 60}});
    CHECK(r.checked_at == k_t0);
    CHECK(r.idle_since == k_t0 - std::chrono::minutes(10));
    CHECK(r.period_s == 60);
    auto again = parse_idle_record(idle_json(r));
    REQUIRE(again);
    CHECK(again->idle_since == r.idle_since);
    CHECK_FALSE(parse_idle_record(nlohmann::json::parse(R"({"idle_since": null})")));
    CHECK_FALSE(parse_idle_record(nullptr));
}

TEST_CASE("how long idle: from idle_since, unknown while busy or when the clock is silent") {
    auto idle = record({{"checked_at", "2026-11-18T11:06:40Z"}, {"idle_since", "2026-11-18T10:56:40Z"}});
    CHECK(idle_for_s(idle, k_t0 + std::chrono::seconds(30)) == 630);
    // Over three periods without a decision: it tells nothing about now.
    CHECK_FALSE(idle_for_s(idle, k_t0 + std::chrono::seconds(181)));
    auto busy = record(
        {{"checked_at", "2026-11-18T11:06:40Z"}, {"idle_since", nullptr}, {"busy", {"job 3 running"}}});
    CHECK_FALSE(idle_for_s(busy, k_t0));
}

TEST_CASE("the clock's line says idle, busy or silent, and what autostop does") {
    auto idle = record({{"checked_at", "2026-11-18T11:06:40Z"}, {"idle_since", "2026-11-18T10:56:40Z"}});
    AutostopSpec none;
    AutostopSpec destroy{.idle_minutes = 60};
    CHECK(idle_text(idle, none, k_t0) == "idle since 2026-11-18T10:56:40Z (10m)");
    CHECK(idle_text(idle, destroy, k_t0) ==
          "idle since 2026-11-18T10:56:40Z (10m); autostop destroys it after 60m idle (in 50m)");
    AutostopSpec short_one{.idle_minutes = 5};
    CHECK(idle_text(idle, short_one, k_t0) == "idle since 2026-11-18T10:56:40Z (10m); idle past "
                                              "autostop.idle_minutes (`ddl gc --expired` destroys it)");
    auto busy = record({{"checked_at", "2026-11-18T11:06:40Z"},
                        {"idle_since", nullptr},
                        {"busy", {"job 3 running", "w1: GPU utilisation 90% (above 10%)"}},
                        {"unanswered", {"w2: Connection refused"}}});
    CHECK(idle_text(busy, destroy, k_t0) == "busy: job 3 running; w1: GPU utilisation 90% (above 10%) (not "
                                            "answering the clock: w2: Connection refused)");
    CHECK(idle_text(idle, destroy, k_t0 + std::chrono::minutes(5))
              .rfind("idle clock silent since "
                     "2026-11-18T11:06:40Z",
                     0) == 0);
}

TEST_CASE("the record read last is kept in the cluster's folder") {
    TempDir tmp;
    const std::string dir = tmp.path();
    CHECK_FALSE(last_idle_record(dir));
    auto idle = record({{"checked_at", "2026-11-18T11:06:40Z"}, {"idle_since", "2026-11-18T10:56:40Z"}});
    REQUIRE(write_file_atomic(dir + "/idle.json", idle_json(idle).dump()));
    auto back = last_idle_record(dir);
    REQUIRE(back);
    CHECK(back->idle_since == idle.idle_since);
}

TEST_CASE(
    "an allocation the clock ended itself: its record says when and why, and keeps each node's source") {
    auto r = record({{"checked_at", "2026-11-18T11:06:40Z"},
                     {"idle_since", "2026-11-18T10:56:40Z"},
                     {"source", {{"master", "dcgm"}, {"worker1", "nvidia-smi"}}},
                     {"ended",
                      {{"at", "2026-11-18T11:06:40Z"},
                       {"by", "autostop"},
                       {"why", "idle since 2026-11-18T10:56:40Z, past autostop.idle_minutes 10"},
                       {"how", "scancel 42"}}}});
    REQUIRE(r.ended_at == k_t0);
    CHECK(r.ended_why == "idle since 2026-11-18T10:56:40Z, past autostop.idle_minutes 10 (scancel 42)");
    CHECK(idle_text(r, AutostopSpec{.idle_minutes = 10}, k_t0 + std::chrono::hours(5)) ==
          "ended by autostop at 2026-11-18T11:06:40Z: idle since 2026-11-18T10:56:40Z, past "
          "autostop.idle_minutes 10 (scancel 42)");
    // Kept by the controller (idle.json) and read back alike.
    auto again = parse_idle_record(idle_json(r));
    REQUIRE(again);
    CHECK(again->ended_at == k_t0);
    CHECK(again->ended_why == r.ended_why);
    CHECK(again->source["master"] == "dcgm");
    CHECK_FALSE(record({{"checked_at", "2026-11-18T11:06:40Z"}}).ended_at);
}

TEST_CASE("the clock's line in a job's log is found, the last one where there are several") {
    CHECK_FALSE(autostop_line("ddl: sshd for node master\n"));
    const std::string log =
        "ddl: holding\nddl-idle: autostop ends the allocation at 2026-11-18T11:00:00Z: a (b)\n"
        "x\nddl-idle: autostop ends the allocation at 2026-11-18T11:06:40Z: c (d)\ntail";
    CHECK(autostop_line(log) == "ddl-idle: autostop ends the allocation at 2026-11-18T11:06:40Z: c (d)");
}
