#pragma once
// `ddl smoke-test --history FILE`: each run's figures appended as one JSON line, and the regression checks
// that compare this run with the median of the last runs (a weekly pipeline notices change over time).
#include "cli/SmokeReport.hpp"
#include "util/Result.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl::cli {

struct HistoryLimits {
    double max_busbw_drop = 0.10;    // a fraction of the median busbw
    double max_deploy_growth = 0.50; // a fraction of the median deploy time
    std::size_t window = 5;          // the last runs the median is taken over
};

struct History {
    std::vector<nlohmann::json> runs; // oldest first
    std::size_t unreadable_lines = 0; // lines that were not a JSON object (kept in the file, not used)
};

// The runs in FILE; an empty history when it does not exist yet.
Result<History> read_history(const std::string& path);
// One line appended: {"time", "cluster", "passed", "figures": {...}}. Created 0644 when missing.
Status append_history(const std::string& path, const SmokeReport& report, const std::string& time_iso);
// "regression (busbw)" and "regression (deploy time)" in suite "checks": failed when this run's figure is
// past the limit against the median of the last `window` runs that have it; skipped without either.
std::vector<CheckResult> regression_checks(const History& past, const std::map<std::string, double>& now,
                                           const HistoryLimits& limits);

} // namespace ddl::cli
