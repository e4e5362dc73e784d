#pragma once
// What a target does and can do, asked by the pipeline and the CLI. Everything after "provision" is the
// same pipeline for all targets; a target knows how to render its files, create and remove its
// machines, and says which of the common abilities (SSH to nodes, link shaping …) it has.
#include "provision/Context.hpp"
#include "provision/DeployPlan.hpp"
#include "provision/Phase.hpp"
#include "render/Renderer.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddl {

// What `ddl plan` hands a driver: the cluster (ctx.spec is the spec to plan; ctx.state the cluster's state,
// empty for a new cluster), the spec it was deployed with (nullptr: new), ctx.spec rendered, and a private
// empty folder the plan may work in (removed afterwards). Nothing outside `scratch` may change.
struct PlanRequest {
    Context& ctx;
    const Spec* deployed = nullptr;
    const RenderedFiles& files;
    std::string scratch;
};

// A cluster found on the target's own side rather than in a state folder (`ddl gc` after the folder that
// deployed it is gone, as in a CI job whose container was thrown away).
struct FoundCluster {
    std::string cluster;
    long long age_s = 0;   // since the target created it (its own record of the time)
    std::string state_dir; // the cluster's folder in the state folder that deployed it
    std::string detail;    // what was found, one line ("3 namespace nodes", "job 123 RUNNING")
    nlohmann::json record; // what destroy_found needs
};

class TargetDriver {
public:
    virtual ~TargetDriver() = default;

    // The target's own rendered files (the common ones come from render_common). Pure: same bytes for
    // the same spec and inputs.
    virtual Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const = 0;
    // What the render phase needs from the target besides the spec (e.g. the cluster's public key,
    // created here when the target installs it on new machines). Default: nothing.
    virtual Result<RenderInputs> render_inputs(Context&) { return RenderInputs{}; }
    // Whether `ddl render` should look for a public key to render (a key pair the target installs).
    virtual bool renders_public_key() const { return false; }
    // Checks that can fail before anything is created (root, tools on PATH, credentials).
    virtual Status preflight(const Context& ctx) = 0;
    // Creates (or converges) the machines and fills ctx.state.nodes. Idempotent.
    virtual Status provision(Context& ctx) = 0;
    // Removes everything provision created; works from any partial state and when run twice.
    virtual Status destroy(Context& ctx) = 0;
    // The nodes a deploy of `spec` gives, each with what describes it. Default: master, worker1..N with
    // their group's flavor and GPUs.
    virtual std::vector<PlannedNode> planned_nodes(const Spec& spec) const;
    // What a deploy of req.ctx.spec would create, change and remove, changing nothing (`ddl plan`).
    // Default: the node diff of planned_nodes() between the deployed spec and the new one.
    virtual Status plan(const PlanRequest& req, DeployPlan& out);
    // Called before each deploy phase after provision: a target whose nodes are not reached over SSH
    // (a batch scheduler) returns its own outcome for the phase (or skips it); nullopt runs the common one.
    virtual std::optional<Status> replace_phase(PhaseId phase, Context& ctx) {
        (void)phase;
        (void)ctx;
        return std::nullopt;
    }

    // `ddl deploy --replace NODE`: destroys that node alone (after ctx.approve_destructive), so that the
    // phases from provision make it anew; the other nodes are left as they are. Default: refused with the
    // reason.
    virtual Status remove_for_replace(Context& ctx, const std::string& node) {
        (void)node;
        return Error{"target " + ctx.spec.target +
                     " cannot replace one node: destroy and deploy the cluster"};
    }

    // Why `what` (something that needs SSH to the nodes) cannot work here; nullopt: nodes take SSH.
    virtual std::optional<std::string> why_no_ssh(const std::string& what) const {
        (void)what;
        return std::nullopt;
    }
    // Whether programs start as steps of the target's own job (`ddl run` then asks job_step_command).
    virtual bool runs_job_steps() const { return false; }
    // The command that starts `argv` as `np` ranks of a job step with `env` added.
    virtual Result<Command> job_step_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                             const std::map<std::string, std::string>& env) const {
        (void)ctx;
        (void)np;
        (void)argv;
        (void)env;
        return Error{"this target does not start programs as job steps"};
    }
    // Whether the links between nodes can be re-shaped after deploy (`ddl bench train --bandwidths`).
    virtual bool can_reshape_links() const { return false; }
    // Shapes every node's link to `bps` (0: unshaped).
    virtual Status reshape_links(const Context& ctx, std::uint64_t bps) {
        (void)ctx;
        (void)bps;
        return Error{"this target cannot re-shape its links"};
    }
    // When the testbed itself takes the cluster's machines back (a GPULab job's maxDuration after it
    // started running, a Virtual Wall slice's expiry), from what provision recorded in `state`; nullopt:
    // nothing ends them. `ddl status` and `ddl list` show it; `ddl run`, `ddl bench` and `ddl smoke-test`
    // warn when less than runtime.lease_warn_minutes is left.
    virtual std::optional<std::chrono::system_clock::time_point> lease_end(const ClusterState& state) const {
        (void)state;
        return std::nullopt;
    }
    // Whether `ddl deploy --manifest FILE` applies (a manifest saved by the testbed's own tool).
    virtual bool takes_manifest() const { return false; }
    // What to tell the user beside a failed configure (`message` names node, task and error); empty:
    // nothing target-specific to add.
    virtual std::string configure_failure_hint(const Context& ctx, const std::string& message) const {
        (void)ctx;
        (void)message;
        return {};
    }

    // `ddl renew`: extends the lease to now + `hours`.
    virtual Status renew_lease(Context& ctx, std::chrono::hours hours) {
        (void)ctx;
        (void)hours;
        return Error{"this target's nodes have no lease to renew"};
    }

    // Whether find_clusters can ask the target without a spec (this machine, the user's Slurm queue).
    virtual bool finds_own_clusters() const { return false; }
    // Every cluster ddl created on this target that the target itself knows of, from the markers ddl puts
    // on what it creates.
    virtual Result<std::vector<FoundCluster>> find_clusters(ProcessRunner& proc) const {
        (void)proc;
        return Error{"this target cannot be asked for its clusters without a spec"};
    }
    // Targets whose clusters can be found with a spec's endpoint and credentials (`ddl gc --spec FILE`):
    // what the service itself still runs for ddl, with the state folder named in each record.
    virtual bool finds_clusters_with_spec() const { return false; }
    virtual Result<std::vector<FoundCluster>> find_clusters_with(const Spec& spec,
                                                                 ProcessRunner& proc) const {
        (void)spec;
        (void)proc;
        return Error{"this target's clusters are found through the state folder only"};
    }
    // Removes a found cluster from its record alone (its state folder may be gone).
    virtual Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) {
        (void)found;
        (void)proc;
        (void)progress;
        return Error{"this target cannot destroy a cluster without its state"};
    }
};

} // namespace ddl
