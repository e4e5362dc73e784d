// The defaults of TargetDriver's planning: nodes named master, worker1..N, diffed by name and description.
#include "provision/TargetDriver.hpp"

#include <algorithm>

namespace ddl {
namespace {

std::string describe(const NodeGroup& g) {
    std::string out;
    if (!g.flavor.empty()) out = "flavor " + g.flavor;
    if (g.gpus > 0)
        out += (out.empty() ? "" : ", ") + std::to_string(g.gpus) + (g.gpus == 1 ? " GPU" : " GPUs");
    return out;
}

} // namespace

std::vector<PlannedNode> TargetDriver::planned_nodes(const Spec& spec) const {
    std::vector<PlannedNode> nodes;
    const int n = spec.node_count();
    nodes.reserve(static_cast<std::size_t>(std::max(n, 0)));
    for (int i = 0; i < n; ++i)
        nodes.push_back({i == 0 ? "master" : "worker" + std::to_string(i),
                         describe(i == 0 ? spec.master : spec.workers)});
    return nodes;
}

Status TargetDriver::plan(const PlanRequest& req, DeployPlan& out) {
    // What exists: the nodes in the state, described as the deployed spec describes them; before any node
    // was recorded (a deploy stopped early), what the deployed spec asked for.
    std::vector<PlannedNode> before;
    if (req.deployed) {
        const auto deployed = planned_nodes(*req.deployed);
        if (req.ctx.state.nodes.empty()) before = deployed;
        for (const auto& n : req.ctx.state.nodes) {
            auto it = std::find_if(deployed.begin(), deployed.end(),
                                   [&](const PlannedNode& p) { return p.name == n.name; });
            before.push_back({n.name, it != deployed.end() ? it->detail : n.address});
        }
    }
    auto changes = node_changes(before, planned_nodes(req.ctx.spec));
    out.changes.insert(out.changes.end(), changes.begin(), changes.end());
    return {};
}

} // namespace ddl
