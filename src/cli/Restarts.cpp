#include "cli/Restarts.hpp"

#include "cli/CommandTable.hpp"
#include "cli/Cordon.hpp"
#include "cli/ForegroundRecord.hpp"
#include "cli/HealthChecks.hpp"
#include "core/Diagnostics.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>

namespace ddl::cli {

void add_restart_options(CLI::App& sub, RestartPolicy& p) {
    sub.add_option("--max-restarts", p.max_restarts,
                   "When a rank fails: stop every rank, cordon nodes failing the health checks (when the job "
                   "fits without them), start again; at most N times")
        ->check(CLI::Range(0, 1000));
    sub.add_option(
           "--restart-on", p.restart_on,
           "any: every failed rank restarts the job; node-fault: only when its node fails a health check")
        ->check(CLI::IsMember({"any", "node-fault"}))
        ->capture_default_str();
}

std::string checkpoint_dir(const Context& ctx) {
    if (!ctx.spec.services.nfs) return {};
    return ctx.spec.services.nfs_mount + "/checkpoints/" + ctx.state.cluster;
}

std::vector<std::string> attempt_env(const Context& ctx, int attempt) {
    std::vector<std::string> env{"DDL_RESTART_COUNT=" + std::to_string(attempt)};
    if (auto dir = checkpoint_dir(ctx); !dir.empty()) env.push_back("DDL_CHECKPOINT_DIR=" + dir);
    return env;
}

RestartDecision decide_restart(const RestartPolicy& p, const runtime::LaunchResult& failed,
                               const std::vector<NodeState>& nodes, const std::vector<std::string>& failing,
                               int np) {
    RestartDecision d;
    if (failed.failed_rank < 0 && failed.message.find("interrupted") != std::string::npos) {
        d.why = "interrupted: not restarted";
        return d;
    }
    const NodeState* host = nullptr;
    for (const auto& n : nodes)
        if (n.name == failed.failed_host || n.cluster_address() == failed.failed_host ||
            n.address == failed.failed_host || n.hostname == failed.failed_host)
            host = &n;
    const auto is_failing = [&](const std::string& name) {
        return std::find(failing.begin(), failing.end(), name) != failing.end();
    };
    const bool node_fault = host && is_failing(host->name);
    if (p.restart_on == "node-fault" && !node_fault) {
        d.why = "its node " + (host ? host->name : failed.failed_host) +
                " passes the health checks (an application failure; --restart-on any restarts those too)";
        return d;
    }
    d.restart = true;
    int slots_left = 0;
    std::vector<std::string> cordon;
    for (const auto& n : nodes) {
        if (!n.gets_ranks()) continue;
        if (is_failing(n.name))
            cordon.push_back(n.name);
        else
            slots_left += n.slots;
    }
    const bool fits = slots_left > 0 && (np == 0 || slots_left >= np);
    if (!cordon.empty() && fits) {
        d.cordon = cordon;
        d.why = "cordoning " + join(cordon, ", ") + " (failing the health checks)";
    } else if (!cordon.empty()) {
        d.why = join(cordon, ", ") + " fail the health checks, but the job does not fit without them";
    } else {
        d.why = "every node passes the health checks";
    }
    return d;
}

namespace {

std::vector<std::string> failing_nodes(const Context& ctx, const std::vector<Finding>& findings) {
    std::set<std::string> bad;
    for (const auto& f : findings)
        if (f.status == HealthStatus::failed && ctx.state.node(f.node)) bad.insert(f.node);
    return {bad.begin(), bad.end()};
}

} // namespace

int run_with_restarts(const Invocation& inv, Context& ctx, const RunArgs& given, const RestartPolicy& p) {
    for (int attempt = 0;; ++attempt) {
        RunArgs a = given;
        auto env = attempt_env(ctx, attempt);
        a.env.insert(a.env.begin(), env.begin(), env.end()); // the user's -x come later and win
        auto prepared = prepare_launch(ctx, a);
        if (!prepared)
            return inv.fail(prepared.error().message,
                            attempt == 0 ? exit_code::k_bad_input : exit_code::k_failure);
        // The spec's literal env under -x (a -x of the same name wins). Values read from the environment
        // (secrets) are left to detached jobs and setup: a foreground rank's variables are on its command
        // line on the node (SshRankTransport), where `ps` shows them.
        for (const auto& v : ctx.spec.work.env)
            if (v.from_env.empty()) prepared->opts.extra_env.emplace(v.name, v.value);
        ForegroundRecord record(ctx, a);
        runtime::Launcher launcher(*prepared->transport);
        auto result = launcher.run(prepared->opts);
        record.end(result ? result->exit_code : 1, result ? result->failed_rank : -1);
        if (!result) return inv.fail(result.error().message, exit_code::k_bad_input);
        if (result->exit_code == 0) return exit_code::k_ok;
        // Stopped by a signal to ddl itself (Ctrl-C): 128 + the signal, as a shell reports it; not restarted.
        if (result->failed_rank < 0 && result->exit_code > 128)
            return inv.fail(result->message, result->exit_code);
        const std::string after = attempt > 0 ? " (after " + std::to_string(attempt) + " restart(s))" : "";
        if (attempt >= p.max_restarts) return inv.fail(result->message + after, exit_code::k_failure);
        const auto findings = run_health_checks(ctx);
        auto d = decide_restart(p, *result, ctx.state.nodes, failing_nodes(ctx, findings), a.np);
        if (!d.restart)
            return inv.fail(result->message + after + "; not restarted: " + d.why, exit_code::k_failure);
        if (!d.cordon.empty()) {
            if (auto s = cordon_with_lock(inv, ctx, d.cordon); !s)
                return inv.fail(result->message + "; cannot cordon: " + s.error().message,
                                exit_code::k_failure);
        }
        inv.say(result->message + "; restarting (" + std::to_string(attempt + 1) + " of " +
                std::to_string(p.max_restarts) + "): " + d.why);
    }
}

} // namespace ddl::cli
