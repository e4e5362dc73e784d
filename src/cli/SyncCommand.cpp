// `ddl sync`: the spec's workdir to the cluster (rsync over the cluster's pinned keys), then the setup on
// every node whose inputs changed; `ddl deploy` ends with the same.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Invoke.hpp"
#include "cli/OpenCluster.hpp"
#include "cli/WorkdirSync.hpp"
#include "core/Diagnostics.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

namespace ddl::cli {
namespace {

struct SyncArgs {
    std::string cluster;
    bool no_setup = false;
};

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", s);
    return buf;
}

} // namespace

int deliver_workdir(const Invocation& inv, Context& ctx, bool with_setup, nlohmann::json* out) {
    if (ctx.spec.work.workdir.empty())
        return inv.fail("cluster " + ctx.state.cluster + " has no workdir; set \"workdir:\" in its spec",
                        exit_code::k_bad_input);
    if (auto s = check_nodes_over_ssh(ctx.spec, "syncing the workdir"); !s)
        return inv.fail(s.error().message, exit_code::k_bad_input);
    auto env = resolve_spec_env(ctx.spec);
    if (!env) return inv.fail(env.error().message, exit_code::k_bad_input);
    if (auto local = local_workdir(ctx); !local)
        return inv.fail(local.error().message, exit_code::k_bad_input);
    auto synced = sync_workdir(ctx, inv.g.state_dir);
    if (!synced) return inv.fail(synced.error().message, exit_code::k_failure);
    ctx.progress.note("workdir synced to " + synced->remote_dir + " on " + join(synced->nodes, ", ") + ": " +
                      std::to_string(synced->changed) + " change(s) in " + seconds_text(synced->seconds) +
                      " s");
    nlohmann::json j{{"remote_dir", synced->remote_dir},
                     {"nodes", synced->nodes},
                     {"changed", synced->changed},
                     {"seconds", synced->seconds}};
    if (with_setup && ctx.spec.work.setup.empty() && !ctx.state.setup_failed.empty()) {
        ctx.state.setup_failed.clear(); // no setup any more: nothing failed
        if (auto s = ctx.save(); !s) inv.say("cannot record the setup's outcome: " + s.error().message);
    }
    if (with_setup && !ctx.spec.work.setup.empty()) {
        auto setup = run_setup(ctx, *env);
        // A failed setup is the cluster's state until one succeeds: status and list show it, run refuses.
        const auto why = setup ? std::vector<std::string>{} : split_lines(setup.error().message);
        ctx.state.setup_failed = setup ? "" : why.empty() ? "setup failed" : why.front();
        for (const char* log : {"; its log ", "; their logs "}) // its end was printed with the failure
            if (auto cut = ctx.state.setup_failed.find(log); cut != std::string::npos)
                ctx.state.setup_failed.resize(cut);
        if (auto s = ctx.save(); !s) inv.say("cannot record the setup's outcome: " + s.error().message);
        if (!setup) return inv.fail(setup.error().message, exit_code::k_bad_input);
        if (!setup->ran.empty()) ctx.progress.note("setup ran on " + join(setup->ran, ", "));
        if (!setup->unchanged.empty())
            ctx.progress.note("setup unchanged on " + join(setup->unchanged, ", ") + " (not run)");
        j["setup"] = {{"ran", setup->ran}, {"unchanged", setup->unchanged}};
    }
    if (out) *out = std::move(j);
    return exit_code::k_ok;
}

CommandBody sync_command() {
    auto a = std::make_shared<SyncArgs>();
    return {.add_options =
                [a](CLI::App& sub) {
                    sub.add_option("cluster", a->cluster, "Cluster name or spec file");
                    sub.add_option("--cluster", a->cluster, "Cluster name or spec file");
                    sub.add_flag("--no-setup", a->no_setup, "Send the files only; leave the setup for later");
                },
            .cluster = [a] { return a->cluster; },
            .action =
                [a](Invocation& inv) {
                    // The deployed setup is what sync runs: an edited workdir, setup or env is deploy's to
                    // apply (it records the spec, then syncs), never the old one run silently.
                    if (const auto& drift = inv.cluster->drift; drift.work_changed())
                        return inv.fail(
                            "the spec's workdir, setup or env changed since deploy (" +
                                join(drift.keys, ", ") + " in " + drift.file +
                                "): sync runs the deployed ones\nhint: `ddl deploy " + drift.file +
                                "` applies the new ones (it syncs the workdir and runs setup where "
                                "it changed)",
                            exit_code::k_bad_input);
                    nlohmann::json j;
                    int rc = deliver_workdir(inv, *inv.cluster->ctx, !a->no_setup, &j);
                    if (rc == exit_code::k_ok && inv.g.json) std::cout << j.dump() << "\n";
                    return rc;
                }};
}

} // namespace ddl::cli
