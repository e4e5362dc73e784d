// `ddl start`: a stopped cluster's machines started again (under the cluster's lock), then the deploy's
// phases from wait-ssh: SSH with the pinned host keys, configure run again (what it started on the nodes
// must run after a boot; where systemd brings it back, configure changes nothing), probe and hostfile.
#include "cli/CommandTable.hpp"
#include "cli/IdleClock.hpp"
#include "cli/Invoke.hpp"
#include "cli/LeaseText.hpp"
#include "cli/OptionGroups.hpp"
#include "cli/Power.hpp"
#include "core/Diagnostics.hpp"
#include "provision/Pipeline.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct StartArgs {
    std::string cluster;
};

// The master's idle clock stopped the machines itself (autostop.node_credential, action: stop) and no
// `ddl gc --expired` has recorded it yet: the state takes the stop at the clock's time.
bool stopped_by_the_clock(Context& ctx) {
    const auto& autostop = ctx.spec.life.autostop;
    if (!autostop.node_credential || autostop.action != "stop") return false;
    auto ended = autostop_ended(ctx, ctx.cluster_dir(), std::chrono::system_clock::now());
    if (!ended || !*ended || !(*ended)->ended_at) return false;
    ctx.state.stopped_at = iso_utc(*(*ended)->ended_at);
    ctx.state.note_spell(ctx.state.stopped_at); // the stopped spell from the clock's time, not from now
    return true;
}

int start(const Invocation& inv) {
    auto& ctx = *inv.cluster->ctx;
    auto& driver = *inv.cluster->driver;
    const auto& name = ctx.state.cluster;
    if (!ctx.state.stopped() && !stopped_by_the_clock(ctx)) {
        std::cout << "cluster " << name << " is not stopped; nothing to start\n";
        return exit_code::k_ok;
    }
    if (auto s = set_cluster_power(driver, ctx, true); !s)
        return inv.fail("cluster " + name + ": " + s.error().message + "\nhint: run `ddl start " + name +
                            "` again",
                        exit_code::k_failure);
    // What configure started on the nodes must run again after a boot (where systemd does not bring it back).
    ctx.options.force_configure = true;
    ctx.state.reset_phases_from(phase_names(), "wait-ssh");
    if (auto s = ctx.save(); !s) return inv.fail(s.error().message, exit_code::k_failure);
    const int rc = run_deploy(ctx, driver, {});
    if (rc != exit_code::k_ok) {
        inv.say("the machines run, but the cluster is not ready; `ddl deploy` (or `ddl start " + name +
                "`) resumes from the failed phase");
        return rc;
    }
    std::cout << "cluster " << name << " started\n";
    return exit_code::k_ok;
}

} // namespace

CommandBody start_command() {
    auto a = std::make_shared<StartArgs>();
    return {.add_options =
                [a](CLI::App& sub) { add_cluster_ref(sub, a->cluster, ClusterRef::positional_or_only); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return start(inv); }};
}

} // namespace ddl::cli
