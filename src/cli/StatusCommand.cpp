// `ddl status`: a cluster's phases and nodes (addresses, GPUs, CPUs, slots, the CUDA chosen, OS), and when
// the testbed ends the nodes on its own.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/LeaseText.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "provision/Pipeline.hpp"
#include "targets/Registry.hpp"
#include "util/Net.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace ddl::cli {
namespace {

struct StatusArgs {
    std::string cluster;
    bool show_secrets = false; // `--output json` leaves the secrets out unless asked for
};

void add_options(CLI::App& sub, StatusArgs& a) {
    add_cluster_ref(sub, a.cluster, ClusterRef::positional);
    sub.add_flag("--show-secrets", a.show_secrets,
                 "With --output json: include the cluster's secrets (the Jupyter token)");
}

int status(const Invocation& inv, const StatusArgs& a) {
    const auto& st = inv.cluster->state;
    const auto lease = lease_end(st);
    if (inv.g.json) {
        auto j = st.to_json();
        j.erase("spec_text");
        j["lease_end"] = lease ? nlohmann::json(iso_utc(*lease)) : nlohmann::json(nullptr);
        // stdout ends up in CI logs: the token stays in the 0600 state unless asked for.
        if (!a.show_secrets) j.erase("jupyter_token");
        std::cout << j.dump(2) << "\n";
        return exit_code::k_ok;
    }
    std::printf("cluster %s (target %s)\nphases:", st.cluster.c_str(), st.target.c_str());
    for (const auto& p : phase_names())
        std::printf(" %s=%s", p.c_str(), st.phase_done(p) ? "done" : "pending");
    if (lease) std::printf("\n%s", lease_text(lease).c_str());
    std::printf("\n%-10s %-8s %-40s %5s %5s %6s %5s  %s\n", "NODE", "GROUP", "ADDRESS", "GPUS", "CPUS",
                "SLOTS", "CUDA", "OS");
    // CUDA: what the runtime role chose on the node (its /etc/ddl/cuda.json, read by the probe).
    for (const auto& n : st.nodes)
        std::printf("%-10s %-8s %-40s %5d %5d %6d %5s  %s\n", n.name.c_str(), n.group.c_str(),
                    (host_for_port(n.address) + ":" + std::to_string(n.port)).c_str(), n.gpus, n.cpus,
                    n.slots, n.cuda.empty() ? "-" : n.cuda.c_str(), n.os.c_str());
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
