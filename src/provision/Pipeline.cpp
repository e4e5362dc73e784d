#include "provision/Pipeline.hpp"

#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "provision/Configure.hpp"
#include "provision/HostfileWriter.hpp"
#include "provision/NodeFiles.hpp"
#include "provision/Probe.hpp"
#include "render/Renderer.hpp"
#include "state/Spares.hpp"
#include "util/CpuTime.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <set>
#include <thread>

namespace ddl {
namespace {

// A target's provision makes ctx.state.nodes anew from what it made: what ddl decided about a node that is
// still the same machine (the same name at the same address) stays: its cordon, its spare mark, and the
// digest of its last configure. A node being replaced had its cordon and digest cleared before
// (remove_node_for_replace). Then exactly nodes.spares nodes are marked spare, new ones first.
void keep_node_marks(Context& ctx, const std::vector<NodeState>& before, std::vector<NodeState>& now) {
    std::set<std::string> fresh;
    for (auto& n : now) {
        bool kept = false;
        for (const auto& o : before)
            if (o.name == n.name && o.address == n.address && o.port == n.port) {
                kept = true;
                n.cordoned = n.cordoned || o.cordoned;
                n.spare = n.spare || o.spare;
                if (n.configured_inputs.empty()) n.configured_inputs = o.configured_inputs;
            }
        if (!kept) fresh.insert(n.name);
    }
    for (const auto& name : assign_spares(now, ctx.spec.spares, fresh)) {
        const NodeState* n = nullptr;
        for (const auto& x : now)
            if (x.name == name) n = &x;
        if (n)
            ctx.progress.note(
                name + (n->spare ? " is a spare: no ranks until a node fails" : " is no longer a spare"));
    }
}

Status phase_render(Context& ctx, TargetDriver& driver) {
    auto inputs = driver.render_inputs(ctx);
    if (!inputs) return inputs.error();
    auto files = driver.render(ctx.spec, *inputs);
    if (!files) return files.error();
    files->merge(render_common(ctx.spec));
    return write_rendered(*files, ctx.cluster_dir() + "/rendered");
}

Status phase_provision(Context& ctx, TargetDriver& driver) {
    if (auto s = driver.preflight(ctx); !s) return s;
    return driver.provision(ctx);
}

Status phase_wait_ssh(Context& ctx, TargetDriver&) {
    auto& nodes = ctx.state.nodes;
    if (nodes.empty()) return Error{"no nodes in state; run the provision phase first"};
    std::vector<Status> results(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        results[i] = ctx.remote.wait_ready(ctx.endpoint(nodes[i]), ctx.options.ssh_deadline);
        ctx.progress.node(nodes[i].name, results[i] ? "SSH ready" : results[i].error().message);
    });
    std::vector<std::string> failed;
    bool timed_out = false;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (results[i]) continue;
        failed.push_back(nodes[i].name);
        // A changed host key or a refused login stops at once; only a silent node waits out the deadline.
        timed_out = timed_out || results[i].error().message.find("not ready after") != std::string::npos;
    }
    if (!failed.empty())
        return Error{"SSH not reachable on " + join(failed, ", ") +
                     (timed_out ? " within " + std::to_string(ctx.options.ssh_deadline.count() / 1000) + " s"
                                : " (see the node lines above)")};
    return {};
}

Status phase_configure(Context& ctx, TargetDriver& driver) {
    auto r = run_configure(ctx);
    if (!r) {
        const auto* hints = driver.configure_hints();
        const std::string hint = hints ? hints->configure_failure_hint(ctx, r.error().message) : "";
        return hint.empty() ? r.error() : Error{r.error().message + "\n    " + hint};
    }
    return {};
}

Status phase_probe(Context& ctx, TargetDriver&) {
    return probe_nodes(ctx);
}

Status phase_hostfile(Context& ctx, TargetDriver&) {
    return write_hostfiles(ctx);
}

} // namespace

const std::vector<Phase>& deploy_phases() {
    static const std::vector<Phase> phases{
        {PhaseId::render,
         "inputs for the target's tools come first; they are reviewable before anything exists",
         phase_render},
        {PhaseId::provision, "machines must exist before anything can reach them", phase_provision},
        {PhaseId::wait_ssh, "new machines take a while to accept SSH; everything after needs it",
         phase_wait_ssh},
        {PhaseId::configure, "roles need SSH and shape the nodes before we measure them", phase_configure},
        {PhaseId::probe, "GPU counts are final only after drivers are configured", phase_probe},
        {PhaseId::hostfile, "slots come from the probed GPUs", phase_hostfile},
    };
    return phases;
}

std::vector<std::string> phase_names() {
    std::vector<std::string> out;
    for (const auto& p : deploy_phases())
        out.push_back(p.name);
    return out;
}

namespace {

// Drift: a deploy of a cluster whose phases are all recorded checks that every node still answers SSH
// (in parallel, a few seconds at most) before it says "already done". Nodes that do not answer make the
// phases from provision run again, which brings a target's machines back where it can (the local target
// restarts a node's sshd or namespace) and names the node where it cannot.
void check_drift(Context& ctx, TargetDriver& driver) {
    if (!ctx.state.phase_done("wait-ssh") || ctx.state.nodes.empty() || driver.job_steps()) return;
    auto& nodes = ctx.state.nodes;
    std::vector<Status> results(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        results[i] = ctx.remote.wait_ready(ctx.endpoint(nodes[i]), std::chrono::seconds(5));
    });
    std::vector<std::string> silent;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (results[i]) continue;
        silent.push_back(nodes[i].name);
        ctx.progress.node(nodes[i].name, "does not answer: " + results[i].error().message);
    }
    if (silent.empty()) return;
    ctx.progress.note("node(s) " + join(silent, ", ") +
                      " recorded as ready do not answer: running the phases from provision again to repair");
    ctx.state.reset_phases_from(phase_names(), "provision");
    (void)ctx.save();
}

} // namespace

int run_deploy(Context& ctx, TargetDriver& driver, const DeployRequest& req) {
    const auto& phases = deploy_phases();
    if (req.only_phase.empty()) check_drift(ctx, driver);
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const auto& phase = phases[i];
        if (!req.only_phase.empty() && phase.name != req.only_phase) continue;
        if (!req.only_phase.empty()) {
            for (std::size_t k = 0; k < i; ++k) {
                if (!ctx.state.phase_done(phases[k].name)) {
                    ctx.progress.phase_failed(phase.name,
                                              "phase " + phases[k].name +
                                                  " has not run yet; run `ddl deploy` without --only first");
                    return exit_code::k_failure;
                }
            }
        } else if (ctx.state.phase_done(phase.name)) {
            ctx.progress.phase_done(phase.name, 0, 0, true);
            continue;
        }
        if (ctx.stop_requested()) {
            ctx.progress.note("interrupted: stopped before " + phase.name +
                              "; `ddl deploy` resumes from here");
            return 130;
        }
        ctx.progress.phase_start(phase.name, phase.why);
        auto t0 = std::chrono::steady_clock::now();
        double cpu0 = cpu_seconds_used();
        auto* steps = driver.job_steps();
        const auto nodes_before = ctx.state.nodes;
        auto replaced = steps ? steps->replace_phase(phase.id, ctx) : std::nullopt;
        auto status = replaced ? *replaced : phase.run(ctx, driver);
        if (status && phase.id == PhaseId::provision) keep_node_marks(ctx, nodes_before, ctx.state.nodes);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double cpu = cpu_seconds_used() - cpu0;
        if (!status) {
            (void)ctx.save();
            ctx.progress.phase_failed(phase.name, status.error().message);
            // Stopped by Ctrl-C (or SIGTERM) inside the phase: 130, as the exit-code table says.
            if (ctx.stop_requested()) {
                ctx.progress.note("interrupted during " + phase.name + "; `ddl deploy` resumes from here");
                return 130;
            }
            ctx.progress.note(
                "fix the problem and run `ddl deploy` again: finished phases are kept; `ddl destroy " +
                ctx.state.cluster + "` removes what exists");
            return ctx.approval_needs_yes || status.error().refused ? exit_code::k_bad_input
                                                                    : exit_code::k_failure;
        }
        ctx.state.mark_done(phase.name, utc_now_iso());
        if (auto s = ctx.save(); !s) {
            ctx.progress.phase_failed(phase.name, "cannot save state: " + s.error().message);
            return exit_code::k_failure;
        }
        kill_point("deploy:after-" + phase.name);
        ctx.progress.phase_done(phase.name, secs, cpu, false);
    }
    return exit_code::k_ok;
}

Status remove_node_for_replace(Context& ctx, TargetDriver& driver, const std::string& node) {
    if (!ctx.state.node(node)) return Error{"no node \"" + node + "\" in cluster " + ctx.state.cluster};
    auto* replacement = driver.node_replacement();
    if (!replacement)
        return Error{
            "target " + ctx.spec.target +
            " cannot replace a node: ddl does not make its machines; repair or swap the machine, name "
            "it in the spec, then deploy again"};
    if (auto s = replacement->remove_for_replace(ctx, node); !s) return s;
    for (auto& n : ctx.state.nodes) {
        if (n.name != node) continue;
        n.configured_inputs.clear(); // a new machine: configure applies everything to it
        n.probed = false;
        n.cordoned = false;
    }
    ctx.state.reset_phases_from(phase_names(), "provision");
    return ctx.save();
}

int run_destroy(Context& ctx, TargetDriver& driver, int attempts) {
    ctx.state.destroying = true;
    (void)ctx.save();
    kill_point("destroy:marked");
    Status last;
    for (int attempt = 1; attempt <= attempts; ++attempt) {
        ctx.progress.phase_start("destroy",
                                 "attempt " + std::to_string(attempt) + " of " + std::to_string(attempts));
        auto t0 = std::chrono::steady_clock::now();
        double cpu0 = cpu_seconds_used();
        last = driver.destroy(ctx);
        if (last) {
            ctx.progress.phase_done(
                "destroy", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                cpu_seconds_used() - cpu0, false);
            log::close_file();
            kill_point("destroy:before-remove");
            if (auto s = ctx.store.remove(ctx.state.cluster); !s) {
                ctx.progress.phase_failed("destroy", s.error().message);
                return exit_code::k_failure;
            }
            return exit_code::k_ok;
        }
        ctx.progress.phase_failed("destroy", last.error().message);
        if (attempt < attempts) std::this_thread::sleep_for(std::chrono::seconds(attempt));
    }
    ctx.state.phases.clear();
    (void)ctx.save();
    ctx.progress.note("destroy did not finish; the state is kept in " + ctx.cluster_dir() +
                      " so `ddl destroy` can try again");
    return exit_code::k_failure;
}

} // namespace ddl
