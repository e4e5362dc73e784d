// `ddl stop`: the cluster's machines stopped keeping their disks (OpenStack SHUTOFF, EC2 stopped), under
// the cluster's lock, after showing which nodes stop and what keeps costing; also run by `ddl gc --expired`
// for autostop.action: stop. Refused, naming why, where the target cannot stop its machines.
#include "cli/CommandTable.hpp"
#include "cli/Confirm.hpp"
#include "cli/Invoke.hpp"
#include "cli/OptionGroups.hpp"
#include "cli/Power.hpp"
#include "core/Diagnostics.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct StopArgs {
    std::string cluster;
    bool yes = false;
};

void add_options(CLI::App& sub, StopArgs& a) {
    add_cluster_ref(sub, a.cluster, ClusterRef::positional_or_only);
    sub.add_flag("-y,--yes", a.yes, "Stop without asking (needed where there is no terminal: scripts, CI)");
}

int stop(const Invocation& inv, const StopArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    auto& driver = *inv.cluster->driver;
    const auto& name = ctx.state.cluster;
    if (const auto why = why_no_stop(driver, ctx); !why.empty())
        return inv.fail("cluster " + name + " cannot stop: " + why + "\nhint: `ddl destroy " + name +
                            "` ends it; autostop.action: destroy does so when it is idle",
                        exit_code::k_bad_input);
    if (ctx.state.stopped()) {
        std::cout << "cluster " << name << " is already stopped (since " << ctx.state.stopped_at << ")\n";
        return exit_code::k_ok;
    }
    std::vector<std::string> nodes;
    for (const auto& n : ctx.state.nodes)
        nodes.push_back(n.name + (n.address.empty() ? "" : " (" + n.address + ")"));
    std::cout << "cluster " << name << " on target " << ctx.state.target
              << "\n  stops: " << (nodes.empty() ? "no nodes recorded" : join(nodes, ", "))
              << "\n  keeps costing while stopped:\n";
    for (const auto& line : driver.power_control()->kept_while_stopped(ctx))
        std::cout << "    - " << line << "\n";
    std::cout << "  its node-hours and GPU-hours stop counting; `ddl start " << name
              << "` boots it again with its disks\n";
    if (!a.yes) {
        if (auto rc = confirm_destroy("ddl stop", "cluster " + name, "Type yes to stop it: ", "yes",
                                      "add -y (--yes) to stop without asking"))
            return *rc;
    }
    if (auto s = set_cluster_power(driver, ctx, false); !s)
        return inv.fail("cluster " + name + ": " + s.error().message + "\nhint: run `ddl stop " + name +
                            "` again; what stopped stays stopped",
                        exit_code::k_failure);
    std::cout << "cluster " << name << " stopped\n";
    return exit_code::k_ok;
}

CommandBody stop_body(const std::shared_ptr<StopArgs>& a) {
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return stop(inv, *a); }};
}

} // namespace

CommandBody stop_command() {
    return stop_body(std::make_shared<StopArgs>());
}

int stop_cluster(const Invocation& from, const std::string& name) {
    auto a = std::make_shared<StopArgs>();
    a->cluster = name;
    a->yes = true;
    return invoke_from(from, "stop", stop_body(a));
}

} // namespace ddl::cli
