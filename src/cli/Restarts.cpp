#include "cli/Restarts.hpp"

#include "cli/CommandTable.hpp"
#include "cli/Cordon.hpp"
#include "cli/ForegroundRecord.hpp"
#include "cli/HealthChecks.hpp"
#include "cli/OpenCluster.hpp"
#include "core/Diagnostics.hpp"
#include "provision/Pipeline.hpp"
#include "targets/Registry.hpp"
#include "util/Format.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <set>

namespace ddl::cli {

void add_restart_options(CLI::App& sub, RestartPolicy& p) {
    sub.add_option("--max-restarts", p.max_restarts,
                   "When a rank fails: stop every rank, run the health checks, deal with the nodes failing "
                   "them (--on-node-fault), start again; at most N times")
        ->check(CLI::Range(0, 1000));
    sub.add_option(
           "--restart-on", p.restart_on,
           "any: every failed rank restarts the job; node-fault: only when its node fails a health check")
        ->check(CLI::IsMember({"any", "node-fault"}))
        ->capture_default_str();
    sub.add_option("--on-node-fault", p.on_node_fault,
                   "spare: a ready spare (nodes.spares) takes each failing node's place (the default where "
                   "there is one); replace: a new machine for each node failing a health check (default "
                   "where the target can make one); cordon: leave them out when the job fits without them "
                   "(default elsewhere); shrink: leave them out and go on with fewer ranks (see --min-nodes)")
        ->check(CLI::IsMember({"spare", "replace", "cordon", "shrink"}));
    sub.add_option("--min-nodes", p.min_nodes, "shrink: the fewest nodes with ranks the job goes on with")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
}

std::string node_fault_action(const RestartPolicy& p, bool can_replace, bool has_spare) {
    if (!p.on_node_fault.empty()) return p.on_node_fault;
    if (has_spare) return "spare";
    return can_replace ? "replace" : "cordon";
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

namespace {

// The failed rank's node, by any of the names a launcher reports a host by.
const NodeState* failed_node(const runtime::LaunchResult& failed, const std::vector<NodeState>& nodes) {
    for (const auto& n : nodes)
        if (n.name == failed.failed_host || n.cluster_address() == failed.failed_host ||
            n.address == failed.failed_host || n.hostname == failed.failed_host)
            return &n;
    return nullptr;
}

// What the action does with the failing nodes that get ranks (`bad`), `ready` the ready spares that pass
// the checks; `d.restart` is set by the caller.
void act_on(RestartDecision& d, const std::string& action, const std::vector<std::string>& bad,
            const std::vector<std::string>& ready, bool master_failing, int nodes_left, int slots_left,
            int np, int min_nodes) {
    const bool fits = slots_left > 0 && (np == 0 || slots_left >= np);
    if (action == "spare") {
        if (master_failing || ready.size() < bad.size()) {
            d.restart = false;
            d.why = join(bad, ", ") + " fail the health checks and ";
            if (master_failing)
                d.why += "a spare never takes the master's place";
            else if (ready.empty())
                d.why += "no spare is ready";
            else
                d.why += "only " + join(ready, ", ") +
                         (ready.size() == 1 ? " is a ready spare" : " are ready spares");
            d.why += "; `ddl deploy --replace NODE` makes a failed node anew";
            return;
        }
        std::vector<std::string> took;
        for (std::size_t i = 0; i < bad.size(); ++i) {
            d.swap.emplace_back(bad[i], ready[i]);
            took.push_back("spare " + ready[i] + " takes " + bad[i] + "'s place");
        }
        d.why = join(took, ", ") + " (failing the health checks)";
        return;
    }
    if (action == "replace") {
        d.replace = bad;
        d.why = "replacing " + join(bad, ", ") + " (failing the health checks)";
    } else if (action == "shrink") {
        if (nodes_left < min_nodes) {
            d.restart = false;
            d.why = join(bad, ", ") + " fail the health checks and " + std::to_string(nodes_left) +
                    " node(s) would be left, fewer than --min-nodes " + std::to_string(min_nodes);
            return;
        }
        d.cordon = bad;
        d.np = np == 0 || fits ? np : slots_left;
        d.why = "cordoning " + join(bad, ", ") + " (failing the health checks), going on with " +
                std::to_string(nodes_left) + " node(s)" +
                (d.np == np ? std::string()
                            : ", " + std::to_string(d.np) + " rank(s) instead of " + std::to_string(np));
    } else if (fits) {
        d.cordon = bad;
        d.why = "cordoning " + join(bad, ", ") + " (failing the health checks)";
    } else {
        d.why = join(bad, ", ") + " fail the health checks, but the job does not fit without them";
    }
}

} // namespace

RestartDecision decide_restart(const RestartPolicy& p, const runtime::LaunchResult& failed,
                               const std::vector<NodeState>& nodes, const std::vector<std::string>& failing,
                               int np, bool can_replace) {
    RestartDecision d;
    if (failed.failed_rank < 0 && failed.message.find("interrupted") != std::string::npos) {
        d.why = "interrupted: not restarted";
        return d;
    }
    const NodeState* host = failed_node(failed, nodes);
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
    int nodes_left = 0;
    std::vector<std::string> bad, ready;
    bool master_failing = false;
    for (const auto& n : nodes)
        if (n.ready_spare() && !is_failing(n.name)) ready.push_back(n.name);
    for (const auto& n : nodes) {
        if (!n.gets_ranks()) continue;
        if (is_failing(n.name)) {
            bad.push_back(n.name);
            master_failing = master_failing || n.group == "master";
        } else {
            slots_left += n.slots;
            ++nodes_left;
        }
    }
    if (bad.empty()) {
        d.why = "every node passes the health checks";
        return d;
    }
    // A spare by default only where spares can take every failing node's place (never the master's);
    // else what the target can do.
    const bool spares_suffice = !master_failing && !ready.empty() && ready.size() >= bad.size();
    act_on(d, node_fault_action(p, can_replace, spares_suffice), bad, ready, master_failing, nodes_left,
           slots_left, np, p.min_nodes);
    return d;
}

namespace {

std::vector<std::string> failing_nodes(const Context& ctx, const std::vector<Finding>& findings) {
    std::set<std::string> bad;
    for (const auto& f : findings)
        if (f.status == HealthStatus::failed && ctx.state.node(f.node)) bad.insert(f.node);
    return {bad.begin(), bad.end()};
}

bool target_replaces_nodes(const Context& ctx) {
    auto driver = make_target_driver(ctx.spec.target);
    return driver && (*driver)->node_replacement() != nullptr &&
           (*driver)->node_replacement()->replaces_one_node(ctx.spec);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `ddl deploy --replace`'s path for each of `names`, under the cluster's lock (the run holds it read-only):
// the target makes the machines, the phases from provision configure and probe them and rewrite the
// hostfiles, the workdir and setup reach them; then ctx.state takes the new nodes. The run's
// --on-node-fault replace is the approval.
Status replace_with_lock(const Invocation& inv, Context& ctx, const std::vector<std::string>& names) {
    auto locked = open_cluster(inv.g.state_dir, ctx.state.cluster, true,
                               "ddl run (replacing " + join(names, ", ") + ")");
    if (!locked) return locked.error();
    auto& lctx = *(*locked)->ctx;
    auto driver = make_target_driver(lctx.spec.target);
    if (!driver) return driver.error();
    lctx.options.yes = true;
    for (const auto& node : names)
        if (auto s = remove_node_for_replace(lctx, **driver, node); !s) return s;
    if (const int rc = run_deploy(lctx, **driver, DeployRequest{}); rc != exit_code::k_ok)
        return Error{"the deploy that replaces " + join(names, ", ") +
                     (rc == 130 ? " was interrupted" : " failed (exit " + std::to_string(rc) + ")") +
                     "; `ddl deploy` repairs the cluster"};
    // deliver_workdir says what failed itself.
    if (!lctx.spec.work.workdir.empty())
        if (const int rc = deliver_workdir(inv, lctx, true, nullptr); rc != exit_code::k_ok)
            return Error{"the workdir or setup did not reach the new " + join(names, ", ") + " (above)"};
    ctx.state = lctx.state;
    return {};
}

} // namespace

int run_with_restarts(const Invocation& inv, Context& ctx, const RunArgs& given, const RestartPolicy& p) {
    const bool can_replace = target_replaces_nodes(ctx);
    if (p.on_node_fault == "replace" && !can_replace)
        return inv.fail("--on-node-fault replace: target " + ctx.spec.target +
                            " cannot make one machine (`ddl deploy --replace`); use cordon or shrink",
                        exit_code::k_bad_input);
    if (p.on_node_fault == "spare" && ctx.spec.spares == 0)
        return inv.fail("--on-node-fault spare: cluster " + ctx.state.cluster +
                            " has no spares; set nodes.spares in its spec and deploy, or use replace, cordon "
                            "or shrink",
                        exit_code::k_bad_input);
    int np = given.np; // shrink lowers it
    for (int attempt = 0;; ++attempt) {
        RunArgs a = given;
        a.np = np;
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
        const auto t_checks = std::chrono::steady_clock::now();
        const auto findings = run_health_checks(ctx);
        const double checks_s = seconds_since(t_checks);
        auto d = decide_restart(p, *result, ctx.state.nodes, failing_nodes(ctx, findings), a.np, can_replace);
        if (!d.restart)
            return inv.fail(result->message + after + "; not restarted: " + d.why, exit_code::k_failure);
        inv.say(result->message + "; restarting (" + std::to_string(attempt + 1) + " of " +
                std::to_string(p.max_restarts) + "): " + d.why);
        std::string timing = "health checks " + strprintf("%.1f", checks_s) + " s";
        if (!d.cordon.empty()) {
            if (auto s = cordon_with_lock(inv, ctx, d.cordon); !s)
                return inv.fail(result->message + "; cannot cordon: " + s.error().message,
                                exit_code::k_failure);
        }
        if (!d.swap.empty()) {
            const auto t_swap = std::chrono::steady_clock::now();
            if (auto s = swap_with_lock(inv, ctx, d.swap); !s)
                return inv.fail(result->message + "; cannot take a spare: " + s.error().message,
                                exit_code::k_failure);
            std::vector<std::string> out;
            for (const auto& [failed, spare] : d.swap) {
                timing += ", " + spare + " in for " + failed;
                out.push_back(failed);
            }
            timing += " " + strprintf("%.1f", seconds_since(t_swap)) + " s";
            std::vector<std::string> fixes;
            fixes.reserve(out.size());
            for (const auto& n : out)
                fixes.push_back("`ddl deploy --replace " + n + "`");
            inv.say(join(out, ", ") + " out of service, now spare(s): " + join(fixes, ", then ") +
                    " makes each a ready spare again");
        }
        if (!d.replace.empty()) {
            const auto t_replace = std::chrono::steady_clock::now();
            if (auto s = replace_with_lock(inv, ctx, d.replace); !s)
                return inv.fail(result->message + "; cannot replace " + join(d.replace, ", ") + ": " +
                                    s.error().message,
                                exit_code::k_failure);
            timing += ", replacing " + join(d.replace, ", ") + " " +
                      strprintf("%.1f", seconds_since(t_replace)) + " s";
        }
        if (d.np >= 0) np = d.np;
        inv.say("healing before restart " + std::to_string(attempt + 1) + ": " + timing);
    }
}

} // namespace ddl::cli
