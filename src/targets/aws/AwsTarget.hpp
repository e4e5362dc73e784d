#pragma once
// Target "aws": EC2 machines from the Terraform module in src/targets/aws/terraform/ (a TerraformTarget),
// run with the AWS credentials in Terraform's environment. Pre-flight checks the region and account over
// the EC2 and Service Quotas APIs before anything is created; the master is reached at its public address
// and the workers through it.
#include "targets/aws/AwsCredentials.hpp"
#include "targets/aws/AwsSection.hpp"
#include "targets/aws/Ec2Client.hpp"
#include "terraform/TerraformTarget.hpp"

#include <functional>
#include <memory>

namespace ddl {

class AwsTarget : public TerraformTarget, public LeakedClusters, public SelfEnding {
public:
    // `ddl gc --spec FILE`: the clusters whose instances (tag ddl-managed=true, not terminated) run in the
    // spec's region with its credentials, one FoundCluster per ddl-cluster tag (state folder from the
    // ddl-state tag, age from the newest launchTime); destroy_found terminates them, waits until they are
    // terminated and deletes the cluster's tagged network, key pair and placement group (AwsFound.cpp).
    TargetCapabilities capabilities() override {
        return {.leaked_clusters = this, .node_replacement = this, .self_ending = this, .power = this};
    }
    bool needs_spec() const override { return true; }
    Result<std::vector<FoundCluster>> find_clusters(const Spec* spec, ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;

    // What the target calls out to, with defaults for real use; tests substitute them.
    struct Deps {
        std::function<std::unique_ptr<AwsTransport>(std::chrono::milliseconds)> make_transport;
        AwsCredentials::Sources sources;
    };
    AwsTarget();
    explicit AwsTarget(Deps deps);

    // `ddl stop` / `ddl start`: var.stopped, which the module's aws_ec2_instance_state resources follow
    // (terraform/power.tf).
    std::string why_no_stop(const Spec& spec) const override;
    std::vector<std::string> kept_while_stopped(const Context& ctx) const override;

    // autostop.node_credential (AwsNodeCredential.cpp; docs/security.md): the master's instance profile
    // (terraform/iam.tf) is its credential; the master gets the region, the EC2 endpoint the controller
    // used, the instance ids (output node_ids) and AWS_CA_BUNDLE's CA. Once every instance is stopped or
    // terminated, autostop_end reads the line the master's clock left in its tag ddl-autostop.
    Result<std::optional<nlohmann::json>> node_credential(Context& ctx,
                                                          const nlohmann::json& outputs) override;
    Result<std::optional<std::string>> autostop_end(Context& ctx) override;

protected:
    // terraform.tfvars.json (AwsInputs).
    RenderedFiles module_inputs(const Spec& spec, const RenderInputs& inputs) const override;
    // The credentials of the spec's profile, else of the environment (AwsCredentials).
    const char* instance_resource_type() const override { return "aws_instance"; }
    Result<std::map<std::string, std::string>> terraform_env(const Spec& spec) const override;
    // The credentials, then the region and account (AwsPreflight) unless --skip-preflight.
    Status preflight_target(const Context& ctx, const TerraformTool& tool) override;

private:
    // A transport with the API timeout (DDL_AWS_TIMEOUT seconds, else 30 s).
    std::unique_ptr<AwsTransport> make_transport() const;

    Deps m_deps;
};

} // namespace ddl
