// `ddl cordon NODE...` / `ddl uncordon NODE...`: ranks kept off (or let back on) a node without touching
// what runs there.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Cordon.hpp"
#include "core/Diagnostics.hpp"
#include "provision/HostfileWriter.hpp"
#include "state/Spares.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {

Status set_cordoned(Context& ctx, const std::vector<std::string>& names, bool cordoned) {
    for (const auto& name : names) {
        if (!ctx.state.node(name)) return Error{"no node \"" + name + "\" in cluster " + ctx.state.cluster};
    }
    auto nodes = ctx.state.nodes;
    bool any_ranks = false;
    for (auto& n : nodes) {
        if (std::find(names.begin(), names.end(), n.name) != names.end()) n.cordoned = cordoned;
        any_ranks = any_ranks || n.gets_ranks();
    }
    if (!any_ranks)
        return Error{"cordoning " + join(names, ", ") + " would leave no node that takes ranks in cluster " +
                     ctx.state.cluster};
    ctx.state.nodes = std::move(nodes);
    if (auto s = ctx.save(); !s) return s;
    // Before the hostfile phase ran there are no hostfiles to rewrite: the deploy writes them without the
    // node.
    if (!ctx.state.phase_done("hostfile")) return {};
    return write_hostfiles(ctx);
}

Status cordon_with_lock(const Invocation& inv, Context& ctx, const std::vector<std::string>& names) {
    auto locked = open_cluster(inv.g.state_dir, ctx.state.cluster, true, "ddl " + inv.name + " (cordon)");
    if (!locked) return locked.error();
    auto& lctx = *(*locked)->ctx;
    if (auto s = set_cordoned(lctx, names, true); !s) return s;
    for (auto& n : ctx.state.nodes)
        if (const auto* l = lctx.state.node(n.name)) n.cordoned = l->cordoned;
    return {};
}

Status swap_with_lock(const Invocation& inv, Context& ctx,
                      const std::vector<std::pair<std::string, std::string>>& failed_and_spare) {
    auto locked = open_cluster(inv.g.state_dir, ctx.state.cluster, true, "ddl " + inv.name + " (spare)");
    if (!locked) return locked.error();
    auto& lctx = *(*locked)->ctx;
    auto nodes = lctx.state.nodes;
    for (const auto& [failed, spare] : failed_and_spare)
        if (auto s = swap_in_spare(nodes, failed, spare); !s) return s;
    lctx.state.nodes = std::move(nodes);
    if (auto s = lctx.save(); !s) return s;
    if (lctx.state.phase_done("hostfile"))
        if (auto s = write_hostfiles(lctx); !s) return s;
    for (auto& n : ctx.state.nodes)
        if (const auto* l = lctx.state.node(n.name)) {
            n.cordoned = l->cordoned;
            n.spare = l->spare;
        }
    return {};
}

namespace {

struct CordonArgs {
    std::string cluster;
    std::vector<std::string> nodes;
};

int cordon(const Invocation& inv, const CordonArgs& a, bool on) {
    auto& ctx = *inv.cluster->ctx;
    if (auto s = check_nodes_over_ssh(ctx.spec, "ddl " + inv.name); !s)
        return inv.fail(s.error().message, exit_code::k_bad_input);
    if (auto s = set_cordoned(ctx, a.nodes, on); !s) {
        const bool named_none =
            starts_with(s.error().message, "no node") || starts_with(s.error().message, "cordoning");
        return inv.fail(s.error().message, named_none ? exit_code::k_bad_input : exit_code::k_failure);
    }
    std::cout << (on ? "cordoned " : "uncordoned ") << join(a.nodes, ", ") << " in cluster "
              << ctx.state.cluster
              << (on ? ": no rank runs there until `ddl uncordon`" : ": back in the hostfiles") << "\n";
    return exit_code::k_ok;
}

CommandBody cordon_body(bool on) {
    auto a = std::make_shared<CordonArgs>();
    return {.add_options =
                [a](CLI::App& sub) {
                    sub.add_option("node", a->nodes, "The node(s)")->required();
                    sub.add_option("--cluster", a->cluster, "Cluster name or spec file");
                },
            .cluster = [a] { return a->cluster; },
            .action = [a, on](Invocation& inv) { return cordon(inv, *a, on); }};
}

} // namespace

CommandBody cordon_command() {
    return cordon_body(true);
}

CommandBody uncordon_command() {
    return cordon_body(false);
}

} // namespace ddl::cli
