#pragma once
// The target table: one entry per kind of infrastructure. Everything after "provision" is the same
// pipeline for all targets; a target only knows how to create and remove its machines.
#include "provision/Context.hpp"
#include "render/Renderer.hpp"

#include <memory>
#include <optional>
#include <string>

namespace ddl {

class TargetDriver {
public:
    virtual ~TargetDriver() = default;
    // What the render phase needs from the target besides the spec (e.g. the cluster's public key,
    // created here when the target installs it on new machines). Default: nothing.
    virtual Result<RenderInputs> render_inputs(Context&) { return RenderInputs{}; }
    // Checks that can fail before anything is created (root, tools on PATH, credentials).
    virtual Status preflight(const Context& ctx) = 0;
    // Creates (or converges) the machines and fills ctx.state.nodes. Idempotent.
    virtual Status provision(Context& ctx) = 0;
    // Removes everything provision created; works from any partial state and when run twice.
    virtual Status destroy(Context& ctx) = 0;
    // Called before each deploy phase after provision: a target whose nodes are not reached over SSH
    // (a batch scheduler) returns its own outcome for the phase (or skips it); nullopt runs the common one.
    virtual std::optional<Status> replace_phase(const std::string& phase, Context& ctx) {
        (void)phase;
        (void)ctx;
        return std::nullopt;
    }
};

// The driver for a target, or an Error naming what is not available in this version.
Result<std::unique_ptr<TargetDriver>> make_target_driver(Target target);

} // namespace ddl
