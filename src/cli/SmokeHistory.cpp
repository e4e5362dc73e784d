#include "cli/SmokeHistory.hpp"

#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace ddl::cli {
namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

// The median of the last `window` runs' figure `key`; nullopt when none has it.
std::optional<double> median_of(const History& h, const std::string& key, std::size_t window) {
    std::vector<double> v;
    for (auto it = h.runs.rbegin(); it != h.runs.rend() && v.size() < window; ++it) {
        const auto& f = (*it)["figures"];
        if (f.is_object() && f.contains(key) && f[key].is_number()) v.push_back(f[key].get<double>());
    }
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct Figure {
    const char* key;
    const char* check;
    const char* unit;
    bool higher_is_better;
};

} // namespace

Result<History> read_history(const std::string& path) {
    History h;
    if (!path_exists(path)) return h;
    auto text = read_file_limited(path, std::size_t{64} * 1024 * 1024);
    if (!text) return Error{"--history " + path + ": " + text.error().message};
    for (const auto& line : split_lines(*text)) {
        if (trim(line).empty()) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            ++h.unreadable_lines;
        else
            h.runs.push_back(std::move(j));
    }
    return h;
}

Status append_history(const std::string& path, const SmokeReport& report, const std::string& time_iso) {
    nlohmann::json line{{"time", time_iso},
                        {"cluster", report.cluster},
                        {"passed", report.passed()},
                        {"figures", report.figures}};
    if (!report.currency.empty()) line["currency"] = report.currency;
    const std::string text = line.dump() + "\n";
    // O_APPEND: one write per run, so two runs sharing a cache do not interleave their lines.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return errno_error("cannot open --history " + path);
    const auto n = ::write(fd, text.data(), text.size());
    const bool ok = n == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!ok) return Error{"cannot append to --history " + path};
    return {};
}

std::vector<CheckResult> regression_checks(const History& past, const std::map<std::string, double>& now,
                                           const HistoryLimits& limits) {
    std::vector<CheckResult> out;
    for (const Figure& f : {Figure{"busbw_gbs", "regression (busbw)", "GB/s", true},
                            Figure{"deploy_s", "regression (deploy time)", "s", false}}) {
        auto it = now.find(f.key);
        auto median = median_of(past, f.key, limits.window);
        if (it == now.end()) {
            out.push_back(
                {"checks", f.check, CheckStatus::skipped, 0, "this run has no " + std::string(f.key)});
            continue;
        }
        if (!median) {
            out.push_back({"checks", f.check, CheckStatus::skipped, 0,
                           "no earlier run in the history has " + std::string(f.key)});
            continue;
        }
        const double v = it->second;
        const double limit = f.higher_is_better ? *median * (1 - limits.max_busbw_drop)
                                                : *median * (1 + limits.max_deploy_growth);
        const bool bad = f.higher_is_better ? v < limit : v > limit;
        const int digits = f.higher_is_better ? 4 : 1;
        std::string text = fixed(v, digits) + " " + f.unit + " against a median of " +
                           fixed(*median, digits) + " " + f.unit + " over the last " +
                           std::to_string(std::min(limits.window, past.runs.size())) + " run(s); limit " +
                           fixed(limit, digits) + " " + f.unit;
        out.push_back({"checks", f.check, bad ? CheckStatus::failed : CheckStatus::passed, 0, text});
    }
    return out;
}

} // namespace ddl::cli
