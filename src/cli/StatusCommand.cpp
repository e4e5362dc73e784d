// `ddl status`: a cluster's phases and nodes (addresses, whether each answers now, GPUs, CPUs, slots, the
// CUDA chosen, OS), and when the testbed ends the nodes on its own.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/ForegroundRecord.hpp"
#include "cli/IdleClock.hpp"
#include "cli/LeaseText.hpp"
#include "cli/Lifetime.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "provision/Pipeline.hpp"
#include "remote/RemoteExecutor.hpp"
#include "targets/Registry.hpp"
#include "util/Format.hpp"
#include "util/Net.hpp"
#include "util/Redactor.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace ddl::cli {
namespace {

// The note after a node's row: cordoned, a ready spare, or a spare out of service (a failed node).
std::string status_node_mark(const NodeState& n) {
    if (n.spare && n.cordoned)
        return "  [spare, out of service: `ddl deploy --replace " + n.name + "` makes it a ready spare]";
    if (n.spare) return "  [spare: no ranks]";
    return n.cordoned ? "  [cordoned: no ranks]" : "";
}

struct StatusArgs {
    std::string cluster;
    bool show_secrets = false; // `--output json` leaves the secrets out unless asked for
    bool no_check = false;     // leave out whether the nodes answer (no network)
};

// Whether each node answers SSH now ("up" / "unreachable"), in parallel, 5 s at most; empty where nothing
// was provisioned yet or the target's nodes are not reached over SSH.
std::vector<std::string> reachability(Context& ctx) {
    const auto& nodes = ctx.state.nodes;
    if (nodes.empty() || !ctx.state.phase_done("wait-ssh") || !check_nodes_over_ssh(ctx.spec, "status"))
        return {};
    std::vector<std::string> out(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        out[i] =
            ctx.remote.wait_ready(ctx.endpoint(nodes[i]), std::chrono::seconds(5)) ? "up" : "unreachable";
    });
    return out;
}

// One line on stderr naming the nodes that do not answer, and the command that repairs them.
void warn_unreachable(const ClusterState& st, const std::vector<std::string>& reach) {
    std::vector<std::string> silent;
    for (std::size_t i = 0; i < reach.size(); ++i)
        if (reach[i] != "up") silent.push_back(st.nodes[i].name);
    if (silent.empty()) return;
    std::cerr << "ddl status: " << silent.size() << " node(s) do not answer: " << join(silent, ", ")
              << "\nhint: `ddl deploy` of the cluster's spec checks every node and repairs what it can\n";
}

void add_options(CLI::App& sub, StatusArgs& a) {
    add_cluster_ref(sub, a.cluster, ClusterRef::positional);
    sub.add_flag("--show-secrets", a.show_secrets,
                 "With --output json: include the cluster's secrets (the Jupyter token)");
    sub.add_flag("--no-check", a.no_check, "Do not check whether the nodes answer now");
}

// The master's idle clock: read now (kept for `ddl list`), or the record read last with --no-check or when
// the master does not answer.
std::optional<IdleRecord> idle_clock(const Invocation& inv, const StatusArgs& a,
                                     const std::vector<std::string>& reach,
                                     std::chrono::system_clock::time_point now) {
    const auto& st = inv.cluster->state;
    const auto dir = inv.cluster->store.cluster_dir(st.cluster);
    const NodeState* m = master_of(*inv.cluster->ctx);
    const bool master_silent = m && static_cast<std::size_t>(m - st.nodes.data()) < reach.size() &&
                               reach[static_cast<std::size_t>(m - st.nodes.data())] != "up";
    if (a.no_check || master_silent || !check_nodes_over_ssh(inv.cluster->ctx->spec, "status"))
        return last_idle_record(dir);
    auto r = read_idle_clock(*inv.cluster->ctx, dir, now);
    if (r) return *r;
    std::cerr << "ddl status: " << r.error().message << "\n";
    return last_idle_record(dir);
}

int status(const Invocation& inv, const StatusArgs& a) {
    const auto& st = inv.cluster->state;
    const auto lease = lease_end(st);
    const auto& spec = inv.cluster->ctx->spec;
    const auto now = std::chrono::system_clock::now();
    const auto life_end = lifetime_end(st, spec.life);
    const auto used = usage_so_far(st, spec, now);
    // A stopped cluster's machines answer nothing: neither they nor the idle clock are asked.
    StatusArgs asked = a;
    asked.no_check = a.no_check || st.stopped();
    const auto reach = asked.no_check ? std::vector<std::string>{} : reachability(*inv.cluster->ctx);
    // An allocation the idle clock ended itself (autostop on Slurm, GPULab): its nodes are gone, not failing.
    // The target is asked only where the master does not answer, or is not reached over SSH.
    std::optional<IdleRecord> ended;
    const NodeState* m = master_of(*inv.cluster->ctx);
    const auto mi = m ? static_cast<std::size_t>(m - st.nodes.data()) : reach.size();
    if (!asked.no_check && (mi >= reach.size() || reach[mi] != "up")) {
        auto e = autostop_ended(*inv.cluster->ctx, inv.cluster->store.cluster_dir(st.cluster), now);
        if (e)
            ended = *e;
        else
            std::cerr << "ddl status: whether autostop ended the cluster: " << e.error().message << "\n";
    }
    if (!ended) warn_unreachable(st, reach);
    const auto idle = ended ? ended : idle_clock(inv, asked, reach, now);
    if (inv.g.json) {
        auto j = st.to_json();
        for (std::size_t i = 0; i < reach.size() && i < j["nodes"].size(); ++i)
            j["nodes"][i]["reachable"] = reach[i] == "up";
        j.erase("spec_text");
        j["lease_end"] = lease ? nlohmann::json(iso_utc(*lease)) : nlohmann::json(nullptr);
        j["lifetime_end"] = life_end ? nlohmann::json(iso_utc(*life_end)) : nlohmann::json(nullptr);
        j["usage"] = usage_json(used, spec.life.cost);
        j["power"] = st.stopped() ? "stopped" : "running";
        j["idle"] = idle ? idle_json_at(*idle, now) : nlohmann::json(nullptr);
        // stdout ends up in CI logs: the token stays in the 0600 state unless asked for.
        if (!a.show_secrets) j.erase("jupyter_token");
        // Asked for with --show-secrets: unmasked (the redactor would print *** for the token).
        if (a.show_secrets)
            redaction::write_unredacted(std::cout, j.dump(2) + "\n");
        else
            std::cout << j.dump(2) << "\n";
        return exit_code::k_ok;
    }
    std::cout << strprintf("cluster %s (target %s)\nphases:", st.cluster.c_str(), st.target.c_str());
    for (const auto& p : phase_names())
        std::cout << strprintf(" %s=%s", p.c_str(), st.phase_done(p) ? "done" : "pending");
    if (st.stopped())
        std::cout << strprintf("\nstopped since %s (`ddl start %s` boots it again)", st.stopped_at.c_str(),
                               st.cluster.c_str());
    if (!st.setup_failed.empty())
        std::cout << strprintf(
            "\nsetup failed: %s (`ddl run` refuses until a setup succeeds: `ddl sync %s`, or "
            "`ddl deploy` of the edited spec)",
            st.setup_failed.c_str(), st.cluster.c_str());
    if (lease) std::cout << strprintf("\n%s", lease_text(lease).c_str());
    if (life_end) std::cout << strprintf("\n%s", lifetime_text(*life_end, now).c_str());
    std::cout << strprintf("\nused: %s", usage_text(used, spec.life.cost).c_str());
    if (idle) std::cout << strprintf("\n%s", idle_text(*idle, spec.life.autostop, now).c_str());
    std::cout << strprintf("\n%-10s %-8s %-40s %-11s %5s %5s %6s %5s  %s\n", "NODE", "GROUP", "ADDRESS",
                           "SSH", "GPUS", "CPUS", "SLOTS", "CUDA", "OS");
    // CUDA: what the runtime role chose on the node (its /etc/ddl/cuda.json, read by the probe).
    // A cordoned node keeps its slots, but no launcher gives it a rank (`ddl uncordon` lets it back); nor
    // does a spare, until it takes a failed node's place.
    for (std::size_t i = 0; i < st.nodes.size(); ++i) {
        const auto& n = st.nodes[i];
        std::cout << strprintf("%-10s %-8s %-40s %-11s %5d %5d %6d %5s  %s%s\n", n.name.c_str(),
                               n.group.c_str(),
                               (host_for_port(n.address) + ":" + std::to_string(n.port)).c_str(),
                               i < reach.size() ? reach[i].c_str()
                               : st.stopped()   ? "stopped"
                                                : "-",
                               n.gpus, n.cpus, n.slots, n.cuda.empty() ? "-" : n.cuda.c_str(), n.os.c_str(),
                               status_node_mark(n).c_str());
    }
    return exit_code::k_ok;
}

} // namespace

CommandBody status_command() {
    auto a = std::make_shared<StatusArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return status(inv, *a); }};
}

} // namespace ddl::cli
