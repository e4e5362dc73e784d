#pragma once
// Target "openstack": machines from the Terraform module in src/targets/openstack/terraform/ (a
// TerraformTarget), run with the cloud of clouds.yaml in Terraform's environment and the state where
// openstack.state_backend says. Pre-flight checks the cloud over its APIs before anything is created; the
// master is reached at its floating IP and the workers, which have no public address, through it.
#include "net/Curl.hpp"
#include "targets/openstack/CloudConfig.hpp"
#include "targets/openstack/OpenstackSection.hpp"
#include "terraform/TerraformTarget.hpp"

#include <functional>
#include <memory>
#include <optional>

namespace ddl {

class OpenstackTarget : public TerraformTarget, public LeakedClusters, public SelfEnding {
public:
    // Dependencies with defaults for real use; tests substitute them.
    struct Deps {
        std::function<std::unique_ptr<HttpClient>()> make_http;
        CloudConfig::Sources sources;
    };
    OpenstackTarget();
    explicit OpenstackTarget(Deps deps);

    // `ddl stop` / `ddl start`: var.stopped, which the servers' power_state follows, "shutoff" / "active"
    // (terraform/main.tf says why stop rather than shelve).
    std::vector<std::string> kept_while_stopped(const Context& ctx) const override;

protected:
    // terraform.tfvars.json and backend.tf.json (OpenstackInputs).
    RenderedFiles module_inputs(const Spec& spec, const RenderInputs& inputs) const override;
    // What the state backend needs of the tool and the environment, clouds.yaml, then the cloud
    // (OpenstackPreflight) unless --skip-preflight.
    Status preflight_target(const Context& ctx, const TerraformTool& tool) override;
    // The cloud's entry of clouds.yaml, as OS_CLOUD and OS_CLIENT_CONFIG_FILE (CloudConfig).
    const char* instance_resource_type() const override { return "openstack_compute_instance_v2"; }
    Result<std::map<std::string, std::string>> terraform_env(const Spec& spec) const override;
    // autostop.node_credential (OpenstackNodeCredential.cpp): the module's application credential, the
    // cloud's auth_url, region and interface and the server ids as the master's cloud.env, clouds.yaml's
    // cacert as ca_pem.
    Result<std::optional<nlohmann::json>> node_credential(Context& ctx,
                                                          const nlohmann::json& outputs) override;

public:
    // `ddl gc --spec FILE` (OpenstackFound.cpp): clusters from the servers' ddl metadata, removed through
    // the Compute and Networking APIs without Terraform's state.
    TargetCapabilities capabilities() override {
        return {.leaked_clusters = this, .node_replacement = this, .self_ending = this, .power = this};
    }
    // With autostop.node_credential, once the idle clock stopped or deleted the servers: the master's
    // ddl_autostop metadata (OpenstackNodeCredential.cpp).
    Result<std::optional<std::string>> autostop_end(Context& ctx) override;
    // `ddl start` (TerraformTarget's), with autostop.node_credential first deleting the master's
    // ddl_autostop metadata: the clock's end is over, and a later `ddl stop` must not read as one.
    Status set_power(Context& ctx, bool on) override;
    bool needs_spec() const override { return true; }
    Result<std::vector<FoundCluster>> find_clusters(const Spec* spec, ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;

private:
    // One authenticated session with a cloud of clouds.yaml, with its compute and network endpoints.
    struct Cloud {
        std::unique_ptr<HttpClient> http;
        std::unique_ptr<OpenstackClient> api;
        std::string nova, neutron; // neutron with its /v2.0
    };
    Result<std::unique_ptr<Cloud>> connect(const std::string& cloud_name) const;

    Deps m_deps;
};

} // namespace ddl
