#pragma once
// Target "local": N nodes on this machine, each a network namespace with its own address on a
// per-cluster bridge, its own sshd, host key, hostname, /etc/hosts and private /etc/ddl and /opt/ddl
// (bind mounts inside a private mount namespace), with links shaped by tc to the spec's bandwidth.
#include "provision/Targets.hpp"
#include "render/LocalPlan.hpp"

namespace ddl {

class LocalTarget : public TargetDriver {
public:
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;

    // Shapes (or unshapes, for 0) both ends of every node's link; used by provision and by benchmarks
    // that sweep bandwidths.
    static Status shape_links(const Context& ctx, const LocalPlan& plan, std::uint64_t bps);
    // tbf's bucket for a link of `bps` bit/s, in bytes.
    static std::uint64_t tbf_burst_bytes(std::uint64_t bps);

private:
    Status setup_bridge(const Context& ctx, const LocalPlan& plan);
    Status setup_node(const Context& ctx, const LocalPlan& plan, std::size_t index);
    Status write_node_files(const Context& ctx, const LocalPlan& plan, std::size_t index);
    Status start_sshd(const Context& ctx, const LocalNodePlan& node);
    static Status remove_training_containers(const Context& ctx);
    static void release_mountpoints(const Context& ctx);
};

} // namespace ddl
