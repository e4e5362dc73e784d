// `ddl deploy --replace NODE` on Slurm: ddl cannot make a machine on a facility, but it can ask Slurm for
// another allocation without the node. The running job is cancelled (after approval: every step in it ends)
// and the next submission carries `sbatch --exclude=NODE[,...]`; the excluded nodes stay excluded for the
// cluster's later submissions (a node found bad once is not taken again) until it is destroyed.
#include "targets/slurm/SlurmTarget.hpp"
#include "util/Strings.hpp"

#include <algorithm>

namespace ddl {

std::vector<std::string> SlurmTarget::excluded_nodes(const Context& ctx) {
    return ctx.state.target_data.value("exclude", std::vector<std::string>{});
}

Status SlurmTarget::remove_for_replace(Context& ctx, const std::string& node) {
    if (!ctx.state.node(node)) return Error{"no node \"" + node + "\" in cluster " + ctx.state.cluster};
    const auto& td = ctx.state.target_data;
    const std::string job = td.contains("job_id") ? td["job_id"].get<std::string>() : "";
    auto excluded = excluded_nodes(ctx);
    if (std::find(excluded.begin(), excluded.end(), node) == excluded.end()) excluded.push_back(node);
    const std::string nodes = std::to_string(ctx.state.nodes.size());
    if (auto s =
            ctx.approve_destructive("ddl deploy --replace " + node,
                                    {"replace node " + node + ": job " + (job.empty() ? "(none)" : job) +
                                     " is cancelled (every step in it ends) and a new allocation of " +
                                     nodes + " node(s) is submitted with --exclude=" + join(excluded, ",")});
        !s)
        return s;
    if (auto s = destroy(ctx); !s) return s;
    ctx.state.target_data["exclude"] = excluded;
    return {};
}

} // namespace ddl
