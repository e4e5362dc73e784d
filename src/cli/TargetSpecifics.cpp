#include "cli/TargetSpecifics.hpp"

#include "provision/LocalTarget.hpp"
#include "provision/SlurmTarget.hpp"

#include <algorithm>

namespace ddl::cli {

bool ranks_run_as_job_step(const Spec& spec) {
    return spec.target == Target::slurm;
}

Status check_nodes_over_ssh(const Spec& spec, const std::string& what) {
    if (ranks_run_as_job_step(spec))
        return Error{what + " works over SSH, which a Slurm facility's nodes do not offer ddl; on a slurm "
                            "cluster use `ddl run -- PROG` (an srun step of the job)"};
    return {};
}

Result<Command> job_step_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& extra_env) {
    return SlurmTarget::run_command(ctx, np, argv, extra_env);
}

bool render_needs_public_key(const Spec& spec) {
    return spec.target == Target::openstack;
}

bool takes_manifest(const Spec& spec) {
    return spec.target == Target::virtualwall;
}

std::uint64_t spec_link_bps(const Spec& spec) {
    return spec.target == Target::local         ? spec.local.bandwidth_bps
           : spec.target == Target::virtualwall ? spec.virtualwall.link_capacity_bps
                                                : 0;
}

bool shapes_links(const Spec& spec) {
    return spec.target == Target::local;
}

std::uint64_t shaped_link_bps(const Spec& spec) {
    return shapes_links(spec) ? spec.local.bandwidth_bps : 0;
}

LocalPlan link_plan(const Context& ctx) {
    return LocalPlan::from_json(ctx.state.target_data.at("plan"));
}

Status reshape_links(const Context& ctx, const LocalPlan& plan, std::uint64_t bps) {
    return LocalTarget::shape_links(ctx, plan, bps);
}

void restore_links(const Context& ctx, const LocalPlan& plan) {
    (void)LocalTarget::shape_links(ctx, plan, ctx.spec.local.bandwidth_bps);
}

int expected_gpus(const Spec& spec, const NodeState& node) {
    if (spec.target == Target::ssh) {
        for (const auto& h : spec.ssh.hosts)
            if (h.name == node.name) return std::max(0, h.gpus);
        return 0;
    }
    if (spec.target == Target::slurm) return spec.slurm.gpus_per_node;
    if (spec.target == Target::local) return 0;
    return node.group == "master" ? spec.master.gpus : spec.workers.gpus;
}

} // namespace ddl::cli
