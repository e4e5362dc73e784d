// `ddl ssh`: a shell (or a command) on one node; OpenSSH does the terminal.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Invoke.hpp"
#include "cli/OpenSsh.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"

#include <CLI/CLI.hpp>

namespace ddl::cli {
namespace {

struct SshArgs {
    std::string cluster;
    std::string node;
    std::vector<std::string> command; // empty: a login shell
};

void add_options(CLI::App& sub, SshArgs& a) {
    add_cluster_ref(sub, a.cluster, ClusterRef::option);
    sub.add_option("node", a.node, "Node name, e.g. master or worker1")->required();
    sub.add_option("command", a.command, "Optional command after --");
}

int ssh(const Invocation& inv, const SshArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    if (auto s = check_nodes_over_ssh(ctx.spec, "ddl ssh"); !s)
        return inv.fail(s.error().message, exit_code::k_bad_input);
    const NodeState* n = find_node_or_explain(ctx, a.node, "ddl " + inv.name);
    if (!n) return exit_code::k_bad_input;
    // An interactive terminal is OpenSSH's job; ddl hands it the cluster's key and pinned host keys.
    auto argv = openssh_argv(ctx, *n, {});
    if (!a.command.empty()) {
        argv.push_back("--");
        argv.insert(argv.end(), a.command.begin(), a.command.end());
    }
    exec_openssh(std::move(argv), "ddl " + inv.name);
}

} // namespace

CommandBody ssh_command() {
    auto a = std::make_shared<SshArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .prepare = [a](Invocation& inv) { return take_command_words(inv, a->command, false); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return ssh(inv, *a); }};
}

} // namespace ddl::cli
