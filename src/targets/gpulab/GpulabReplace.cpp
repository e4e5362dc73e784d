// `ddl deploy --replace NODE` on GPULab: a node is one job, so replacing it is GPULab's documented cancel of
// that job (PUT …/jobs/<id>/state/status, CANCELLED), a wait until it has stopped, and a new job submitted
// for the node by provision (it submits for every node without a job); the cluster's other jobs keep
// running. The old job's pinned host key is forgotten: the new job's sshd has its own.
#include "remote/SshKeys.hpp"
#include "targets/gpulab/GpulabStatus.hpp"
#include "targets/gpulab/GpulabTarget.hpp"

namespace ddl {

Status GpulabTarget::remove_for_replace(Context& ctx, const std::string& node) {
    auto& td = ctx.state.target_data;
    const NodeState* n = ctx.state.node(node);
    if (!n || !td.contains("jobs") || !td["jobs"].is_object() || !td["jobs"].contains(node))
        return Error{"no node \"" + node + "\" with a GPULab job in cluster " + ctx.state.cluster};
    const std::string id = td["jobs"][node].get<std::string>();
    if (auto s = ctx.approve_destructive("ddl deploy --replace " + node,
                                         {"replace node " + node + ": GPULab job " + id +
                                          " is cancelled and a new job submitted for the node; the "
                                          "cluster's other jobs keep running"});
        !s)
        return s;
    auto api = m_factory(ctx);
    if (!api) return api.error();
    auto cancelled = (*api)->cancel(id);
    if (!cancelled) {
        // Refused: fine only where the job has ended already (see destroy).
        auto j = (*api)->get(id);
        if (!j || gpulab::active(gpulab::status_of(*j))) return cancelled.error();
    } else if (*cancelled != CancelOutcome::Gone) {
        ctx.progress.node(node, "GPULab job " + id + ": cancel requested");
        if (auto s = wait_until_stopped(ctx, **api, {id}); !s) return s;
    }
    if (auto s = forget_host_key(ctx.known_hosts_path(), n->address, n->port); !s) return s;
    td["jobs"].erase(node);
    return ctx.save();
}

} // namespace ddl
