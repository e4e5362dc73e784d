#pragma once
// What every Terraform target shares: a module compiled into ddl, rendered with its inputs into
// <target>/terraform/, copied into .ddl/<cluster>/terraform/ and run there by Terraform or OpenTofu
// (init -> plan -> approval of changes to what exists -> apply -> output; re-running converges), destroyed
// with `destroy`, planned against a scratch copy of the state (`ddl plan`). The module's outputs name a
// master reached at its public address and workers reached through it (jump = "master").
//
// A target adds what is its own: the module's files and inputs, the spec key that picks the tool, the
// provider's credentials for Terraform's environment and the checks of its account or cloud
// (docs/adding-a-target.md, "A Terraform target").
#include "provision/TargetDriver.hpp"
#include "terraform/TerraformRunner.hpp"

#include <map>
#include <string>
#include <vector>

namespace ddl {

// Every Terraform target's machines stop and start keeping their disks (PowerControl): the modules follow
// common.tf's `stopped`.
class TerraformTarget : public TargetDriver, public PowerControl, public NodeReplacement {
public:
    // `target`: the spec section and the module's name in messages ("aws"); `module`: the module's *.tf
    // files by name, as compiled into ddl. The module and its inputs go to "<target>/terraform/" in the
    // rendered files.
    TerraformTarget(std::string target, const std::map<std::string, std::string>& module);

    // The cluster's public key (access.private_key's .pub, else a key pair made in the cluster folder),
    // installed by the module, and the cluster's state folder (recorded on the machines for `ddl gc`).
    Result<RenderInputs> render_inputs(Context& ctx) override;
    bool renders_public_key() const override { return true; }
    // The module as compiled in and its inputs: a folder `terraform init/plan/apply` runs in.
    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    // The tool (named in the progress), then the target's own checks.
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    // The node diff and `terraform plan` (no plan file) of the rendered module against a copy of the state.
    Status plan(const PlanRequest& req, DeployPlan& out) override;

    // Where the module sits in the rendered files: "<target>/terraform".
    const std::string& module_dir() const { return m_module_dir; }
    static std::string work_dir(const Context& ctx) { return ctx.cluster_dir() + "/terraform"; }
    // `ddl stop` / `ddl start`: common.tf's `stopped` written to power.auto.tfvars.json in the working
    // directory (it stays there, so every later plan keeps the machines as they are), after the module is
    // rendered again (a cluster deployed by an older ddl gets the variable); then provision: Terraform
    // updates the machines in place and the nodes take the outputs' addresses.
    Status set_power(Context& ctx, bool on) override;
    // `ddl deploy --replace NODE`: Terraform's own forced replacement. The node's instance address is kept
    // in the state (target_data "replace") for provision, whose plan carries `-replace=ADDRESS`: the plan
    // shows that one replacement (and what depends on the instance), asks like every change to what exists,
    // and apply destroys and creates that instance alone. The node's pinned host keys are forgotten after
    // the apply (a new machine has a new key); the other nodes' stay.
    Status remove_for_replace(Context& ctx, const std::string& node) override;
    // The module's resource address of a node's instance: "<type>.master", "<type>.worker[i]"; empty for a
    // name the module does not make.
    std::string instance_address(const std::string& node) const;
    // Where a cloud cannot stop some clusters (AWS: one-time Spot Instances) its target says why.
    std::string why_no_stop(const Spec& /*spec*/) const override { return ""; }

    // The nodes in a module's outputs (master_public_ip, master_private_ip, worker_private_ips, ssh_user);
    // an Error names a missing or malformed output and the module (`target`) that should have given it.
    static Result<std::vector<NodeState>> nodes_from_outputs(const nlohmann::json& outputs,
                                                             const std::string& private_key,
                                                             const std::string& target);

protected:
    // The module's inputs for one cluster by file name (terraform.tfvars.json, a backend): pure, no
    // credentials, no timestamps.
    virtual RenderedFiles module_inputs(const Spec& spec, const RenderInputs& inputs) const = 0;
    // The module's resource type of the nodes' instances ("openstack_compute_instance_v2").
    virtual const char* instance_resource_type() const = 0;
    // The provider's credentials as Terraform reads them from its environment.
    virtual Result<std::map<std::string, std::string>> terraform_env(const Spec& spec) const = 0;
    // The target's checks after the tool is found and before anything is created (credentials, what the
    // tool's version must support, the account's or cloud's own API).
    virtual Status preflight_target(const Context& ctx, const TerraformTool& tool) = 0;

    static constexpr const char* k_power_file = "power.auto.tfvars.json";
    // The module's sensitive output with the master's credential (autostop.node_credential); never kept in
    // ddl's state.
    static constexpr const char* k_node_credential_output = "node_credential";

    // What the master needs to end the cluster itself, from the outputs after an apply with
    // autostop.node_credential: {"env": {KEY: value}, "ca_pem": PEM text or "", "secret_keys": [KEY...]: the
    // keys of env whose values are secrets, kept out of every log}; configure writes `env` to
    // /etc/ddl/cloud.env (0600) on the master (docs/security.md, "A credential on the master"). nullopt: the
    // target offers none.
    virtual Result<std::optional<nlohmann::json>> node_credential(Context& ctx,
                                                                  const nlohmann::json& outputs) {
        (void)ctx;
        (void)outputs;
        return std::optional<nlohmann::json>{};
    }

    // The timeout of each call to the cloud's API: `seconds` (an environment variable's value) when it is a
    // whole number from 1 to 3599, else 30 s.
    static std::chrono::milliseconds api_timeout(const std::string& seconds);
    // The outcome of API checks: problems stop the deploy (nothing was created), notes go to the progress.
    static Status report_checks(const Context& ctx, const std::vector<std::string>& problems,
                                const std::vector<std::string>& notes);

private:
    // node_credential's value in node-credential.json (0600; its env values registered as log secrets), or
    // no such file without one.
    Status keep_node_credential(Context& ctx, const nlohmann::json& outputs);
    // After an apply with -replace: forgets the pinned host keys of those of `nodes` whose instance was
    // replaced (called with the old nodes and with the nodes of the outputs).
    Status forget_replaced(const Context& ctx, const std::vector<std::string>& replaced,
                           const std::vector<NodeState>& nodes) const;
    Result<TerraformRunner> make_runner(const Context& ctx, const std::string& tool_choice) const;
    Status copy_rendered_module(const Context& ctx) const;
    // --terraform-bin, else the spec's choice.
    std::string tool_choice(const Context& ctx) const;
    // The tool the spec asks for: its section's `terraform` key (empty: terraform, else tofu).
    static std::string spec_tool(const Spec& spec);

    std::string m_target;
    const std::map<std::string, std::string>& m_module;
    std::string m_module_dir;
};

} // namespace ddl
