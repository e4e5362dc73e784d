// `ddl renew`: extends the lease of a cluster whose nodes expire on their own (a Virtual Wall slice),
// under the cluster's lock, through the target's renew_lease.
#include "cli/CommandTable.hpp"
#include "cli/Invoke.hpp"
#include "cli/LeaseText.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct RenewArgs {
    std::string cluster;
    int hours = 24;
};

void add_options(CLI::App& sub, RenewArgs& a) {
    add_cluster_ref(sub, a.cluster, ClusterRef::positional_or_only);
    // The widest any testbed extends (SLICES BI: 89 days); a GENI slice authority allows less and says so.
    sub.add_option("--hours", a.hours, "Extend the lease to this many hours from now (1-2136, default 24)")
        ->check(CLI::Range(1, 2136));
}

int renew(const Invocation& inv, const RenewArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    auto* lease = inv.cluster->driver->lease();
    const Status s = lease ? lease->renew_lease(ctx, std::chrono::hours(a.hours))
                           : Status(Error{"this target's nodes have no lease to renew"});
    if (!s) return inv.fail("cluster " + ctx.state.cluster + ": " + s.error().message, exit_code::k_failure);
    std::cout << "cluster " << ctx.state.cluster << ": " << lease_text(lease->lease_end(ctx.state)) << "\n";
    return exit_code::k_ok;
}

} // namespace

CommandBody renew_command() {
    auto a = std::make_shared<RenewArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return renew(inv, *a); }};
}

} // namespace ddl::cli
