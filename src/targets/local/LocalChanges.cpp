// A re-deploy of a local cluster whose spec changed what exists: which nodes go, which are made anew
// (their addresses change with the subnet, the IP family or the bastion layout), whether the bridges must be
// made anew, and whether the links are reshaped (in place, by provision's shape_links). `ddl plan` shows the
// same lines (LocalChecks.cpp) that provision asks approval for here.
#include "remote/SshKeys.hpp"
#include "targets/local/LocalContainers.hpp"
#include "targets/local/LocalTarget.hpp"
#include "util/Files.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <algorithm>

namespace ddl {

namespace {

bool bridge_exists(const Context& ctx, const std::string& name) {
    auto r = ctx.proc.run({.argv = {"ip", "link", "show", "dev", name}});
    return r && r->success();
}

} // namespace

LocalChanges local_changes(const LocalPlan& old, const LocalPlan& plan) {
    LocalChanges c;
    for (const auto& n : old.nodes) {
        auto it = std::find_if(plan.nodes.begin(), plan.nodes.end(),
                               [&](const LocalNodePlan& m) { return m.netns == n.netns; });
        if (it == plan.nodes.end()) {
            c.dropped.push_back(n);
            c.lines.push_back("delete node " + n.name + " (" + n.address + ", namespace " + n.netns + ")");
        } else if (LocalPlan::addresses(*it) != LocalPlan::addresses(n) ||
                   it->behind_bastion != n.behind_bastion || it->private_address != n.private_address ||
                   plan.containers != old.containers) {
            c.replaced.push_back(n);
            c.lines_replaced.push_back(join(LocalPlan::addresses(n), " ") + " -> " +
                                       join(LocalPlan::addresses(*it), " "));
            c.lines.push_back("replace node " + n.name + " (" + c.lines_replaced.back() + ")");
        }
    }
    c.bridges_change = old.bridge_address != plan.bridge_address ||
                       old.bridge_address6 != plan.bridge_address6 || old.bastion != plan.bastion;
    if (old.bandwidth_bps != plan.bandwidth_bps) {
        auto rate = [](std::uint64_t bps) { return bps == 0 ? std::string("unshaped") : format_rate(bps); };
        c.link_rate = rate(old.bandwidth_bps) + " -> " + rate(plan.bandwidth_bps);
        c.lines.push_back("update links of every node in place (" + c.link_rate + ")");
    }
    return c;
}

Status LocalTarget::remove_changed_nodes(Context& ctx, const LocalPlan& plan) {
    const auto& td = ctx.state.target_data;
    if (!td.contains("plan")) return {};
    const LocalPlan old = LocalPlan::from_json(td["plan"]);
    const LocalChanges changes = local_changes(old, plan);
    if (changes.lines.empty()) return {};
    if (auto s =
            ctx.approve_destructive("the local target's plan for cluster " + plan.cluster, changes.lines);
        !s)
        return s;
    std::vector<LocalNodePlan> gone = changes.dropped;
    gone.insert(gone.end(), changes.replaced.begin(), changes.replaced.end());
    if (gone.empty()) return {};
    std::vector<std::string> problems;
    remove_planned(ctx, old, gone, changes.dropped, problems);
    // The bridges carry the old addresses: provision makes them anew with the new ones.
    if (changes.bridges_change) {
        for (const auto& br : {old.bridge, old.private_bridge}) {
            if (br.empty() || !bridge_exists(ctx, br)) continue;
            if (auto s = ctx.run({.argv = {"ip", "link", "del", br}}); !s)
                problems.push_back(s.error().message);
        }
    }
    if (!problems.empty()) return Error{join(problems, "; ")};
    return {};
}

void LocalTarget::remove_planned(Context& ctx, const LocalPlan& old, const std::vector<LocalNodePlan>& gone,
                                 const std::vector<LocalNodePlan>& dropped,
                                 std::vector<std::string>& problems) {
    if (gone.empty()) return;
    if (old.containers) {
        LocalContainers containers(ctx, old);
        for (const auto& n : gone)
            if (auto s = containers.remove(n); !s) problems.push_back(s.error().message);
    }
    remove_nodes(ctx, gone, problems);
    for (const auto& n : gone) {
        (void)remove_tree(ctx.cluster_dir() + "/nodes/" + n.name);
        // Its host key goes with it: a node of this name made later is a new machine with a new key.
        for (const auto& a : LocalPlan::addresses(n))
            if (auto s = forget_host_key(ctx.known_hosts_path(), a, 22); !s)
                problems.push_back(s.error().message);
        const bool is_dropped = std::any_of(dropped.begin(), dropped.end(),
                                            [&](const LocalNodePlan& d) { return d.netns == n.netns; });
        ctx.progress.node(n.name, is_dropped ? "removed (no longer in the spec)"
                                             : "removed (provision makes it anew)");
    }
}

Status LocalTarget::remove_for_replace(Context& ctx, const std::string& node) {
    const auto& td = ctx.state.target_data;
    if (!td.contains("plan"))
        return Error{"cluster " + ctx.state.cluster + " has no nodes yet: `ddl deploy` creates them"};
    const LocalPlan old = LocalPlan::from_json(td["plan"]);
    auto it = std::find_if(old.nodes.begin(), old.nodes.end(),
                           [&](const LocalNodePlan& n) { return n.name == node; });
    if (it == old.nodes.end()) return Error{"no node \"" + node + "\" in cluster " + ctx.state.cluster};
    if (auto s =
            ctx.approve_destructive("ddl deploy --replace " + node,
                                    {"replace node " + node + " (" + join(LocalPlan::addresses(*it), " ") +
                                     "): destroyed and created again; the other nodes are kept"});
        !s)
        return s;
    std::vector<std::string> problems;
    remove_planned(ctx, old, {*it}, {}, problems);
    if (!problems.empty()) return Error{join(problems, "; ")};
    return {};
}

} // namespace ddl
