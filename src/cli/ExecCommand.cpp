// `ddl exec`: one command on all (or some) nodes in parallel over ddl's own SSH, output per node.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Invoke.hpp"
#include "cli/Launch.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <mutex>

namespace ddl::cli {
namespace {

struct ExecArgs {
    std::string cluster;
    std::vector<std::string> nodes; // empty: all
    int timeout_s = 600;
    bool container = false;
    std::vector<std::string> command;
};

void add_options(CLI::App& sub, ExecArgs& a) {
    add_cluster_ref(sub, a.cluster, ClusterRef::option);
    sub.add_option("--nodes", a.nodes, "Only these nodes (comma separated)")->delimiter(',');
    sub.add_option("--timeout", a.timeout_s, "Seconds per node")->check(k_seconds)->capture_default_str();
    sub.add_flag("--container", a.container, "Run it inside each node's training container");
    sub.add_option("command", a.command, "Command after --");
}

// What runs on node `n`: one word is a shell command line, as on the node; in the container, the engine's
// exec with an argv.
std::string node_cmdline(const Context& ctx, const ExecArgs& a, const NodeState& n) {
    const auto& command = a.command;
    if (!a.container) return command.size() == 1 ? command[0] : shell_join(command);
    std::vector<std::string> argv = ctx.spec.container_engine_argv();
    argv.insert(argv.end(), {"exec", ctx.spec.training_container(n.name)});
    if (command.size() == 1)
        argv.insert(argv.end(), {"sh", "-c", command[0]});
    else
        argv.insert(argv.end(), command.begin(), command.end());
    return shell_join(argv);
}

// The command line under coreutils' timeout on the node, in the user's login shell: when --timeout
// passes, the node itself stops the command's whole process group (TERM, then KILL 5 s later) and the
// command exits 124, instead of running on after ddl gave up on it. The command travels in a variable,
// not in the wrapper's argv, so that a `pgrep -f` in it does not find the wrapper.
std::string with_remote_timeout(const std::string& cmdline, int timeout_s) {
    return "export DDL_EXEC_COMMAND=" + shell_quote(cmdline) + "; exec timeout -k 5 " +
           std::to_string(timeout_s) +
           " \"${SHELL:-/bin/sh}\" -c 'c=$DDL_EXEC_COMMAND; unset DDL_EXEC_COMMAND; eval \"$c\"'";
}

// Runs on every node in parallel, each output line prefixed with its node; the nodes it failed on.
std::vector<std::string> exec_on(Context& ctx, const ExecArgs& a, const std::vector<NodeState>& nodes) {
    std::mutex out_mutex;
    std::vector<std::string> failed;
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        // ddl waits a little longer than the node's own timeout, which reports first.
        auto r = ctx.remote.exec(ctx.endpoint(nodes[i]),
                                 with_remote_timeout(node_cmdline(ctx, a, nodes[i]), a.timeout_s),
                                 std::chrono::seconds(a.timeout_s + 15));
        std::lock_guard lock(out_mutex);
        if (!r) {
            std::cerr << "[" << nodes[i].name << "] error: " << r.error().message << "\n";
            failed.push_back(nodes[i].name + " (" + r.error().message + ")");
            return;
        }
        for (const auto& line : split_lines(r->out))
            std::cout << "[" << nodes[i].name << "] " << line << "\n";
        for (const auto& line : split_lines(r->err))
            std::cerr << "[" << nodes[i].name << "] " << line << "\n";
        if (r->exit_status == 124)
            failed.push_back(nodes[i].name + " (timed out after " + std::to_string(a.timeout_s) +
                             " s; stopped there)");
        else if (!r->ok())
            failed.push_back(nodes[i].name + " (exit " + std::to_string(r->exit_status) + ")");
    });
    std::cout.flush();
    return failed;
}

int exec(const Invocation& inv, const ExecArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    if (auto s = check_nodes_over_ssh(ctx.spec, "ddl exec"); !s)
        return inv.fail(s.error().message, exit_code::k_bad_input);
    std::vector<NodeState> nodes;
    for (const auto& n : ctx.state.nodes) {
        if (a.nodes.empty() || std::find(a.nodes.begin(), a.nodes.end(), n.name) != a.nodes.end())
            nodes.push_back(n);
    }
    for (const auto& o : a.nodes) {
        if (!ctx.state.node(o))
            return inv.fail("no node \"" + o + "\" in cluster " + ctx.state.cluster, exit_code::k_bad_input);
    }
    if (a.container) {
        if (auto s = training_containers_ready(ctx); !s)
            return inv.fail(s.error().message, exit_code::k_bad_input);
    }
    auto failed = exec_on(ctx, a, nodes);
    if (!failed.empty()) {
        std::sort(failed.begin(), failed.end());
        return inv.fail("failed on " + std::to_string(failed.size()) + " of " + std::to_string(nodes.size()) +
                            " node(s): " + join(failed, ", "),
                        exit_code::k_failure);
    }
    return exit_code::k_ok;
}

} // namespace

CommandBody exec_command() {
    auto a = std::make_shared<ExecArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .prepare = [a](Invocation& inv) { return take_command_words(inv, a->command, true); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return exec(inv, *a); }};
}

} // namespace ddl::cli
