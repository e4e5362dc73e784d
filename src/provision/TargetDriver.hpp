#pragma once
// What a target does and can do, asked by the pipeline and the CLI. Everything after "provision" is the
// same pipeline for all targets; a target knows how to render its files, create and remove its
// machines, and hands out the optional capabilities it has (TargetCapabilities.hpp: job steps, link
// shaping, a lease, leaked clusters, node replacement, configure hints).
#include "provision/Context.hpp"
#include "provision/DeployPlan.hpp"
#include "provision/Phase.hpp"
#include "provision/TargetCapabilities.hpp"
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
    // The optional capabilities this driver hands out (pointers into itself). Default: none.
    virtual TargetCapabilities capabilities() { return {}; }

    // Shorthands for capabilities().
    JobSteps* job_steps() { return capabilities().job_steps; }
    LinkShaping* link_shaping() { return capabilities().link_shaping; }
    Lease* lease() { return capabilities().lease; }
    LeakedClusters* leaked_clusters() { return capabilities().leaked_clusters; }
    NodeReplacement* node_replacement() { return capabilities().node_replacement; }
    ConfigureHints* configure_hints() { return capabilities().configure_hints; }
    SelfEnding* self_ending() { return capabilities().self_ending; }
    PowerControl* power_control() { return capabilities().power; }
    bool takes_manifest() { return capabilities().takes_manifest; }
};

} // namespace ddl
