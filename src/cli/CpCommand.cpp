// `ddl cp`: files between this machine and a node (checkpoints, results) with rsync over the cluster's
// pinned keys: `ddl cp CLUSTER:PATH LOCAL` or `ddl cp LOCAL CLUSTER:PATH` (the master; --node for another).
#include "cli/CommandTable.hpp"
#include "cli/OpenSsh.hpp"
#include "cli/WorkdirSync.hpp"
#include "core/Diagnostics.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct CpArgs {
    std::string from;
    std::string to;
    std::string node; // empty: the master (the first node)
};

// "CLUSTER:PATH" split in two; nullopt for a local path (no ':' before the first '/').
std::optional<std::pair<std::string, std::string>> remote_part(const std::string& arg) {
    auto colon = arg.find(':');
    if (colon == std::string::npos || colon == 0) return std::nullopt;
    auto slash = arg.find('/');
    if (slash != std::string::npos && slash < colon) return std::nullopt;
    return std::make_pair(arg.substr(0, colon), arg.substr(colon + 1));
}

int cp(const Invocation& inv, const CpArgs& a) {
    auto from = remote_part(a.from), to = remote_part(a.to);
    if (bool(from) == bool(to))
        return inv.fail("give one side as CLUSTER:PATH and the other as a local path (got " + a.from + " " +
                            a.to + ")",
                        exit_code::k_bad_input);
    const auto& [cluster, path] = from ? *from : *to;
    if (path.empty()) return inv.fail("no path after " + cluster + ":", exit_code::k_bad_input);
    int rc = exit_code::k_failure;
    auto oc = open_cluster(inv.g.state_dir, cluster, false, "ddl cp", &rc);
    if (!oc) return inv.fail(oc.error().message, rc);
    auto& ctx = *(*oc)->ctx;
    if (ctx.state.nodes.empty())
        return inv.fail("cluster " + cluster + " has no nodes yet", exit_code::k_bad_input);
    const NodeState* n =
        a.node.empty() ? &ctx.state.nodes.front() : find_node_or_explain(ctx, a.node, "ddl cp");
    if (!n) return exit_code::k_bad_input;
    Command c{.argv = {"rsync", "-rlptz", "--partial", "-e", rsync_ssh(ctx, *n)}};
    c.argv.push_back(from ? rsync_remote(*n, path) : a.from);
    c.argv.push_back(to ? rsync_remote(*n, path) : a.to);
    c.timeout = std::chrono::hours(12);
    auto r = ctx.proc.run(c);
    if (!r) return inv.fail(r.error().message, exit_code::k_failure);
    if (!r->success()) {
        auto lines = split_lines(r->err);
        return inv.fail(lines.empty() ? "rsync exit " + std::to_string(r->exit_code) : lines.front(),
                        r->exit_code == 23 ? exit_code::k_bad_input : exit_code::k_failure);
    }
    return exit_code::k_ok;
}

} // namespace

CommandBody cp_command() {
    auto a = std::make_shared<CpArgs>();
    return {.add_options =
                [a](CLI::App& sub) {
                    sub.add_option("from", a->from, "CLUSTER:PATH or a local path")->required();
                    sub.add_option("to", a->to, "a local path or CLUSTER:PATH")->required();
                    sub.add_option("--node", a->node, "The node on the cluster's side (default: the master)");
                },
            .action = [a](Invocation& inv) { return cp(inv, *a); }};
}

} // namespace ddl::cli
