#pragma once
// Target "aws": EC2 machines from the Terraform module in src/targets/aws/terraform/, run by Terraform or
// OpenTofu in .ddl/<cluster>/terraform/ with the AWS credentials in its environment. Pre-flight checks the
// region and account over the EC2 and Service Quotas APIs before anything is created; provision is
// init -> plan -> apply -> output (re-running converges); the master is reached at its public address and
// the workers through it (jump = "master"), as on OpenStack.
#include "provision/TargetDriver.hpp"
#include "targets/aws/AwsCredentials.hpp"
#include "targets/aws/AwsSection.hpp"
#include "targets/aws/Ec2Client.hpp"
#include "terraform/TerraformRunner.hpp"

#include <functional>
#include <memory>

namespace ddl {

class AwsTarget : public TargetDriver {
public:
    // Dependencies with defaults for real use; tests substitute them.
    struct Deps {
        std::function<std::unique_ptr<AwsTransport>(std::chrono::milliseconds)> make_transport;
        AwsCredentials::Sources sources;
    };
    AwsTarget();
    explicit AwsTarget(Deps deps) : m_deps(std::move(deps)) {}

    Result<RenderInputs> render_inputs(Context& ctx) override;
    bool renders_public_key() const override { return true; }
    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    // The node diff and `terraform plan` (no plan file) of the rendered module against a copy of the state.
    Status plan(const PlanRequest& req, DeployPlan& out) override;

    // `ddl gc --spec FILE`: the clusters whose instances (tag ddl-managed=true, not terminated) run in the
    // spec's region with its credentials, one FoundCluster per ddl-cluster tag (state folder from the
    // ddl-state tag, age from the newest launchTime); destroy_found terminates them, waits until they are
    // terminated and deletes the cluster's tagged network, key pair and placement group (AwsFound.cpp).
    bool finds_clusters_with_spec() const override { return true; }
    Result<std::vector<FoundCluster>> find_clusters_with(const Spec& spec,
                                                         ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;

    static std::string work_dir(const Context& ctx) { return ctx.cluster_dir() + "/terraform"; }
    // The nodes in the module's outputs (master_public_ip, master_private_ip, worker_private_ips,
    // ssh_user); an Error names a missing or malformed output.
    static Result<std::vector<NodeState>> nodes_from_outputs(const nlohmann::json& outputs,
                                                             const std::string& private_key);

private:
    Result<TerraformRunner> make_runner(const Context& ctx, const std::string& tool_choice);
    Status copy_rendered_module(const Context& ctx) const;
    // A transport with the API timeout (DDL_AWS_TIMEOUT seconds, else 30 s).
    std::unique_ptr<AwsTransport> make_transport() const;

    Deps m_deps;
};

} // namespace ddl
