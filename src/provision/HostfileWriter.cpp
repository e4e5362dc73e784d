#include "provision/HostfileWriter.hpp"

#include "runtime/Hostfile.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Net.hpp"

namespace ddl {

namespace {

// An IPv6 node goes by its name in every format, which the nodes resolve (/etc/hosts block of the SSH
// mesh, or the local target's own /etc/hosts): Horovod checks every host against a host-name or IPv4
// pattern, and Debian's Open MPI 4.1 mpirun starts its daemons on IPv6 literals but then cannot route to
// them ("target node: fdd1:…::12 … set the MCA param routed=direct"; tests/e2e/test_ipv6.sh).
std::vector<runtime::HostfileEntry> entries_of(const std::vector<NodeState>& nodes) {
    std::vector<runtime::HostfileEntry> entries;
    for (const auto& n : nodes) {
        // A node that runs no rank: a GPU-less master beside GPU workers, or a cordoned node.
        if (!n.gets_ranks()) continue;
        runtime::HostfileEntry e;
        e.host = is_ipv6(n.cluster_address()) ? n.name : n.cluster_address();
        e.slots = n.slots;
        entries.push_back(e);
    }
    return entries;
}

} // namespace

std::string format_hostfile(const std::vector<NodeState>& nodes, HostfileFormat format) {
    switch (format) {
    case HostfileFormat::openmpi:
        return runtime::write_hostfile(entries_of(nodes), runtime::HostfileFormat::openmpi,
                                       {"Written by ddl from the probed cluster state"});
    case HostfileFormat::horovod:
        return runtime::write_hostfile(entries_of(nodes), runtime::HostfileFormat::horovod);
    case HostfileFormat::mpich:
        return runtime::write_hostfile(entries_of(nodes), runtime::HostfileFormat::mpich);
    }
    return {};
}

std::vector<NodeFile> node_hostfiles(const std::vector<NodeState>& nodes) {
    return {{"/etc/ddl/hostfile", format_hostfile(nodes, HostfileFormat::horovod)},
            {"/etc/ddl/hostfile.mpich", format_hostfile(nodes, HostfileFormat::mpich)}};
}

Status write_hostfiles(Context& ctx) {
    std::string text = format_hostfile(ctx.state.nodes, ctx.spec.hostfile_format);
    if (auto s = write_file_atomic(ctx.cluster_dir() + "/hostfile", text, 0600); !s) return s;
    kill_point("hostfile:local-written");
    // The nodes get the files every launcher reads, whatever format the spec prefers for ddl's own copy.
    // node.env again: its master is the hostfiles' first node, which the probe (or a cordon) may have
    // moved off a master without GPUs (written only where it changed).
    auto files = node_hostfiles(ctx.state.nodes); // the same set for every node
    auto written = write_node_files(ctx, [&](const NodeState& n) {
        auto all = files;
        all.push_back({"/etc/ddl/node.env", node_env(ctx, n)});
        return all;
    });
    if (!written) return written.error();
    return {};
}

} // namespace ddl
