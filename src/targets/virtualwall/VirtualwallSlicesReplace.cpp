// `ddl deploy --replace NODE` with client: slices. A node is one Basic Infrastructure resource: after
// approval it is destroyed (`slices bi destroy`, then listed to be sure it is gone) and its pinned host key
// forgotten; provision asks for it again alone under its recorded name (VirtualwallSlices.cpp,
// request_nodes), waits for it and reads its address. The cluster's other resources are not touched.
#include "remote/SshKeys.hpp"
#include "targets/virtualwall/VirtualwallSlices.hpp"

#include <algorithm>

namespace ddl {

Status slices_remove_for_replace(Context& ctx, const std::string& node) {
    const auto& td = ctx.state.target_data;
    const auto recorded = td.value("resources", std::vector<std::string>{});
    const auto name = std::find_if(recorded.begin(), recorded.end(), [&](const std::string& r) {
        return slices_node_of(ctx.state.cluster, r) == node;
    });
    const NodeState* n = ctx.state.node(node);
    if (!n || name == recorded.end())
        return Error{"no node \"" + node + "\" with a SLICES resource in cluster " + ctx.state.cluster};
    const std::string experiment = td.value("experiment", std::string());
    if (auto s = ctx.approve_destructive("ddl deploy --replace " + node,
                                         {"replace node " + node + ": SLICES resource " + *name +
                                          " in experiment " + experiment +
                                          " is destroyed and made again under its name; the cluster's other "
                                          "resources are kept"});
        !s)
        return s;
    const std::string cli = td.value("slices_cli", std::string("slices"));
    if (auto s = slices_remove(ctx, cli, td.value("site", std::string()), experiment, {*name}); !s) return s;
    if (auto s = forget_host_key(ctx.known_hosts_path(), n->address, n->port); !s) return s;
    return ctx.save();
}

} // namespace ddl
