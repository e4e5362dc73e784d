// `ddl doctor`: what is wrong with a deployed cluster and where (nodes, GPUs, the network between the
// nodes), each failure with what to do; exit 1 when anything fails. `--cordon` takes failing nodes out of
// the hostfiles.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Cordon.hpp"
#include "cli/HealthChecks.hpp"
#include "core/Diagnostics.hpp"
#include "util/Format.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

namespace ddl::cli {
namespace {

struct DoctorArgs {
    std::string cluster;
    bool cordon = false;
    bool all = false;
};

void add_options(CLI::App& sub, DoctorArgs& a) {
    sub.add_option("cluster", a.cluster, "Cluster name or spec file");
    sub.add_option("--cluster", a.cluster, "Cluster name or spec file");
    sub.add_flag("--cordon", a.cordon, "Cordon every node a check fails on (pairs that fail are only shown)");
    sub.add_flag("--all", a.all, "Show the checks that pass too");
}

void print_table(const std::vector<Finding>& findings, bool all) {
    std::size_t wn = 4, wc = 5;
    for (const auto& f : findings) {
        if (!all && f.status == HealthStatus::passed) continue;
        wn = std::max(wn, f.node.size());
        wc = std::max(wc, f.check.size());
    }
    std::cout << strprintf("%-*s  %-*s  %-6s %s\n", static_cast<int>(wn), "NODE", static_cast<int>(wc),
                           "CHECK", "STATUS", "FOUND / EXPECTED / WHAT TO DO");
    for (const auto& f : findings) {
        if (!all && f.status == HealthStatus::passed) continue;
        std::cout << strprintf("%-*s  %-*s  %-6s %s\n", static_cast<int>(wn), f.node.c_str(),
                               static_cast<int>(wc), f.check.c_str(), health_status_name(f.status),
                               f.found.c_str());
        const std::string pad(wn + wc + 12, ' ');
        if (!f.expected.empty()) std::cout << strprintf("%sexpected: %s\n", pad.c_str(), f.expected.c_str());
        if (!f.fix.empty()) std::cout << strprintf("%sfix: %s\n", pad.c_str(), f.fix.c_str());
    }
}

nlohmann::json to_json(const std::vector<Finding>& findings) {
    auto j = nlohmann::json::array();
    for (const auto& f : findings)
        j.push_back({{"node", f.node},
                     {"check", f.check},
                     {"status", f.status == HealthStatus::passed    ? "passed"
                                : f.status == HealthStatus::warning ? "warning"
                                : f.status == HealthStatus::failed  ? "failed"
                                                                    : "skipped"},
                     {"found", f.found},
                     {"expected", f.expected},
                     {"fix", f.fix}});
    return j;
}

// The nodes a failure names alone (a pair's failure names no single node to blame).
std::vector<std::string> failing_nodes(const Context& ctx, const std::vector<Finding>& findings) {
    std::set<std::string> bad;
    for (const auto& f : findings)
        if (f.status == HealthStatus::failed && ctx.state.node(f.node)) bad.insert(f.node);
    return {bad.begin(), bad.end()};
}

int doctor(const Invocation& inv, const DoctorArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    if (auto s = check_nodes_over_ssh(ctx.spec, "ddl doctor"); !s)
        return inv.fail(s.error().message, exit_code::k_bad_input);
    if (!ctx.state.phase_done("wait-ssh"))
        return inv.fail("cluster " + ctx.state.cluster +
                            " has no reachable nodes yet; run `ddl deploy` first",
                        exit_code::k_bad_input);
    const auto findings = run_health_checks(ctx);
    const bool failed = any_failed(findings);
    std::vector<std::string> cordoned;
    if (a.cordon && failed) {
        const auto bad = failing_nodes(ctx, findings);
        if (!bad.empty()) {
            if (auto s = cordon_with_lock(inv, ctx, bad); !s)
                return inv.fail(s.error().message, exit_code::k_failure);
            cordoned = bad;
        }
    }
    if (inv.g.json) {
        std::cout << nlohmann::json{{"cluster", ctx.state.cluster},
                                    {"failed", failed},
                                    {"cordoned", cordoned},
                                    {"findings", to_json(findings)}}
                         .dump(2)
                  << "\n";
    } else {
        std::size_t n_failed = 0, n_warn = 0;
        for (const auto& f : findings) {
            n_failed += f.status == HealthStatus::failed ? 1 : 0;
            n_warn += f.status == HealthStatus::warning ? 1 : 0;
        }
        if (n_failed + n_warn > 0 || a.all) print_table(findings, a.all);
        std::cout << strprintf("cluster %s: %zu checks on %zu nodes, %zu failed, %zu warnings\n",
                               ctx.state.cluster.c_str(), findings.size(), ctx.state.nodes.size(), n_failed,
                               n_warn);
        if (!cordoned.empty())
            std::cout << strprintf("cordoned %s: no rank runs there until `ddl uncordon`\n",
                                   join(cordoned, ", ").c_str());
    }
    return failed ? exit_code::k_failure : exit_code::k_ok;
}

} // namespace

CommandBody doctor_command() {
    auto a = std::make_shared<DoctorArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return doctor(inv, *a); }};
}

} // namespace ddl::cli
