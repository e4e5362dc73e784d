// --history: the JSON lines a smoke test appends and the regression checks against the median of the last
// runs (planted figures: a busbw that halved fails, one within the limit passes; no history: skipped).
#include "cli/SmokeHistory.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;
using namespace ddl::cli;

namespace {

History past(const std::vector<std::pair<double, double>>& busbw_deploy) {
    History h;
    for (const auto& [b, d] : busbw_deploy)
        h.runs.push_back({{"figures", {{"busbw_gbs", b}, {"deploy_s", d}}}});
    return h;
}

const CheckResult& named(const std::vector<CheckResult>& rs, const std::string& name) {
    for (const auto& r : rs)
        if (r.name == name) return r;
    FAIL("no check " << name);
    return rs.front();
}

} // namespace

TEST_CASE("a busbw below the median of the last 5 by more than the limit fails the regression check") {
    // The oldest run (0.01) is outside the window of 5: the median is 0.110.
    auto h = past({{0.01, 10}, {0.11, 10}, {0.10, 12}, {0.12, 11}, {0.11, 10}, {0.115, 30}});
    auto rs = regression_checks(h, {{"busbw_gbs", 0.055}, {"deploy_s", 12}}, HistoryLimits{});
    const auto& busbw = named(rs, "regression (busbw)");
    CHECK(busbw.status == CheckStatus::failed);
    CHECK(busbw.message.find(
              "0.0550 GB/s against a median of 0.1100 GB/s over the last 5 run(s); limit 0.0990") !=
          std::string::npos);
    CHECK(named(rs, "regression (deploy time)").status == CheckStatus::passed); // median 11, limit 16.5
    auto within = regression_checks(h, {{"busbw_gbs", 0.1}, {"deploy_s", 17}}, HistoryLimits{});
    CHECK(named(within, "regression (busbw)").status == CheckStatus::passed);
    CHECK(named(within, "regression (deploy time)").status == CheckStatus::failed);
    HistoryLimits lax;
    lax.max_deploy_growth = 1.0;
    CHECK(named(regression_checks(h, {{"deploy_s", 17}}, lax), "regression (deploy time)").status ==
          CheckStatus::passed);
}

TEST_CASE("without earlier runs or without this run's figure the regression checks are skipped") {
    auto none = regression_checks(History{}, {{"busbw_gbs", 0.1}, {"deploy_s", 5}}, HistoryLimits{});
    CHECK(named(none, "regression (busbw)").status == CheckStatus::skipped);
    auto missing = regression_checks(past({{0.1, 5}}), {{"deploy_s", 5}}, HistoryLimits{});
    CHECK(named(missing, "regression (busbw)").status == CheckStatus::skipped);
    CHECK(named(missing, "regression (deploy time)").status == CheckStatus::passed);
}

TEST_CASE("append_history writes one JSON line a run; read_history reads them back and skips garbage") {
    TempDir dir;
    const std::string path = dir.path() + "/h.jsonl";
    CHECK(read_history(path)->runs.empty());
    SmokeReport r;
    r.cluster = "ci-1";
    r.figures = {{"busbw_gbs", 0.11}, {"deploy_s", 12.5}};
    REQUIRE(append_history(path, r, "2026-11-25T10:00:00Z").ok());
    REQUIRE(write_file_atomic(path, *read_file(path) + "not json\n").ok());
    REQUIRE(append_history(path, r, "2026-11-25T11:00:00Z").ok());
    auto h = read_history(path);
    REQUIRE(h.ok());
    REQUIRE(h->runs.size() == 2);
    CHECK(h->unreadable_lines == 1);
    CHECK(h->runs[1]["time"] == "2026-11-25T11:00:00Z");
    CHECK(h->runs[0]["figures"]["deploy_s"] == 12.5);
    CHECK(h->runs[0]["passed"] == true);
    CHECK_FALSE(h->runs[0].contains("currency")); // no price table, no unit
}

TEST_CASE("a run with a price table keeps its cost's currency beside the figures") {
    TempDir dir;
    const std::string path = dir.path() + "/h.jsonl";
    SmokeReport r;
    r.figures = {{"node_hours", 0.5}, {"gpu_hours", 2.0}, {"cost", 21.8}};
    r.currency = "EUR";
    REQUIRE(append_history(path, r, "2026-11-25T10:00:00Z").ok());
    auto h = read_history(path);
    REQUIRE(h.ok());
    REQUIRE(h->runs.size() == 1);
    CHECK(h->runs[0]["currency"] == "EUR");
    CHECK(h->runs[0]["figures"]["gpu_hours"] == 2.0);
    CHECK(h->runs[0]["figures"]["cost"] == 21.8);
}
