#pragma once
// Target "openstack": machines from the Terraform module in src/targets/openstack/terraform/, run by
// Terraform or OpenTofu in .ddl/<cluster>/terraform/. Pre-flight checks the cloud over its APIs before
// anything is created; provision is init -> plan -> apply -> output (re-running converges); the master is
// reached at its floating IP and the workers, which have no public address, through it (jump = "master").
#include "net/Curl.hpp"
#include "provision/TargetDriver.hpp"
#include "targets/openstack/CloudConfig.hpp"
#include "targets/openstack/OpenstackSection.hpp"
#include "terraform/TerraformRunner.hpp"

#include <functional>
#include <memory>
#include <optional>

namespace ddl {

class OpenstackTarget : public TargetDriver {
public:
    // Dependencies with defaults for real use; tests substitute them.
    struct Deps {
        std::function<std::unique_ptr<HttpClient>()> make_http;
        CloudConfig::Sources sources;
    };
    OpenstackTarget();
    explicit OpenstackTarget(Deps deps) : m_deps(std::move(deps)) {}

    Result<RenderInputs> render_inputs(Context& ctx) override;
    bool renders_public_key() const override { return true; }
    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    // The node diff and `terraform plan` (no plan file) of the rendered module against a copy of the state.
    Status plan(const PlanRequest& req, DeployPlan& out) override;
    // `ddl gc --spec FILE` (OpenstackFound.cpp): clusters from the servers' ddl metadata, removed through
    // the Compute and Networking APIs without Terraform's state.
    bool finds_clusters_with_spec() const override { return true; }
    Result<std::vector<FoundCluster>> find_clusters_with(const Spec& spec,
                                                         ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;

    static std::string work_dir(const Context& ctx) { return ctx.cluster_dir() + "/terraform"; }
    // The nodes in Terraform's outputs (master_public_ip, master_private_ip, worker_private_ips,
    // ssh_user); an Error names a missing or malformed output.
    static Result<std::vector<NodeState>> nodes_from_outputs(const nlohmann::json& outputs,
                                                             const std::string& private_key);

private:
    // One authenticated session with a cloud of clouds.yaml, with its compute and network endpoints.
    struct Cloud {
        std::unique_ptr<HttpClient> http;
        std::unique_ptr<OpenstackClient> api;
        std::string nova, neutron; // neutron with its /v2.0
    };
    Result<std::unique_ptr<Cloud>> connect(const std::string& cloud_name) const;
    Result<TerraformRunner> make_runner(const Context& ctx, const std::string& tool_choice);
    Status copy_rendered_module(const Context& ctx) const;

    Deps m_deps;
};

} // namespace ddl
