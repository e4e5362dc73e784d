#include "cli/Capabilities.hpp"

#include "targets/Registry.hpp"

#include <stdexcept>

namespace ddl::cli {
namespace {

// A loaded spec always names a registered target.
std::unique_ptr<TargetDriver> driver_of(const Spec& spec) {
    auto d = make_target_driver(spec.target);
    if (!d) throw std::logic_error(d.error().message);
    return std::move(*d);
}

} // namespace

bool ranks_run_as_job_step(const Spec& spec) {
    return driver_of(spec)->runs_job_steps();
}

Status check_nodes_over_ssh(const Spec& spec, const std::string& what) {
    if (auto why = driver_of(spec)->why_no_ssh(what)) return Error{*why};
    return {};
}

Result<Command> job_step_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& extra_env) {
    return driver_of(ctx.spec)->job_step_command(ctx, np, argv, extra_env);
}

bool render_needs_public_key(const Spec& spec) {
    return driver_of(spec)->renders_public_key();
}

bool takes_manifest(const Spec& spec) {
    return driver_of(spec)->takes_manifest();
}

std::uint64_t spec_link_bps(const Spec& spec) {
    return spec.link_rate_bps();
}

bool shapes_links(const Spec& spec) {
    return driver_of(spec)->can_reshape_links();
}

std::uint64_t shaped_link_bps(const Spec& spec) {
    return shapes_links(spec) ? spec.link_rate_bps() : 0;
}

Status reshape_links(const Context& ctx, std::uint64_t bps) {
    return driver_of(ctx.spec)->reshape_links(ctx, bps);
}

void restore_links(const Context& ctx) {
    (void)reshape_links(ctx, ctx.spec.link_rate_bps());
}

int expected_gpus(const Spec& spec, const NodeState& node) {
    if (const auto* t = spec.section.get())
        if (auto g = t->expected_gpus(spec, node.name, node.group)) return *g;
    return node.group == "master" ? spec.master.gpus : spec.workers.gpus;
}

} // namespace ddl::cli
