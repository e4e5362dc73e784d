#pragma once
// Target "ssh": machines that already exist (bare metal, any cloud, an HPC allocation). Provisioning
// only records them and checks they can be used; destroy removes what ddl installed on them (the
// runtime, the hostfile, the node file) and never touches the machines themselves.
#include "provision/TargetDriver.hpp"
#include "targets/ssh/SshSection.hpp"

namespace ddl {

class SshTarget : public TargetDriver, public LeakedClusters {
public:
    TargetCapabilities capabilities() override { return {.leaked_clusters = this}; }

    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    // The spec's hosts by name, each described by where ddl reaches it.
    std::vector<PlannedNode> planned_nodes(const Spec& spec) const override;

    // `ddl gc --spec FILE` (SshFound.cpp): every host of the spec is asked for its /etc/ddl/node.env, which
    // names the cluster and the state folder that configured it; destroy_found runs cleanup_script there.
    bool needs_spec() const override { return true; }
    Result<std::vector<FoundCluster>> find_clusters(const Spec* spec, ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;

    // What destroy removes on every host.
    static const std::vector<std::string>& installed_paths();
    // The shell command destroy runs on every host: the cluster's training containers (when the spec
    // names an image and the host has the engine), then installed_paths(); through `sudo -n` for a user
    // other than root. `cluster`: the name the containers are labelled with (empty: the spec's).
    static std::string cleanup_script(const Spec& spec, const std::string& cluster = "");
};

} // namespace ddl
