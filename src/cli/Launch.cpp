#include "cli/Launch.hpp"

#include "cli/Capabilities.hpp"
#include "cli/Datasets.hpp"
#include "cli/WorkdirSync.hpp"
#include "remote/RemoteExecutor.hpp"
#include "runtime/Hostfile.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace ddl::cli {

std::map<std::string, std::string> env_from_args(const std::vector<std::string>& args) {
    std::map<std::string, std::string> env;
    for (const auto& kv : args) {
        auto eq = kv.find('=');
        std::string name = kv.substr(0, eq);
        const char* here = std::getenv(name.c_str());
        env[name] = eq != std::string::npos ? kv.substr(eq + 1) : (here ? here : "");
    }
    return env;
}

Status check_env_args(const std::vector<std::string>& args) {
    for (const auto& kv : args) {
        std::string name = kv.substr(0, kv.find('='));
        if (name.empty() ||
            name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
                std::string::npos)
            return Error{"-x " + kv + ": not a variable name (use -x NAME=VALUE or -x NAME)"};
    }
    return {};
}

Status training_containers_ready(const Context& ctx) {
    if (ctx.spec.runtime.image.empty())
        return Error{"cluster " + ctx.state.cluster +
                     " has no training container; set runtime.image in its spec and run `ddl deploy`"};
    if (!ctx.state.phase_done("configure"))
        return Error{"cluster " + ctx.state.cluster +
                     " is not configured yet (its training containers start then); run `ddl deploy` first"};
    return {};
}

namespace {

// The hostfile's hosts, else every node with slots that is not cordoned; the first max_nodes of them when
// given.
Result<std::vector<runtime::HostfileEntry>> launch_hosts(const Context& ctx, const RunArgs& a) {
    std::vector<runtime::HostfileEntry> hosts;
    if (!a.hostfile.empty()) {
        auto parsed = runtime::read_hostfile(a.hostfile);
        if (!parsed) return parsed.error();
        hosts = std::move(*parsed);
    } else {
        for (const auto& n : ctx.state.nodes) {
            if (!n.gets_ranks()) continue; // hosts services only, or cordoned
            runtime::HostfileEntry e;
            e.host = n.cluster_address();
            e.slots = n.slots;
            hosts.push_back(e);
        }
    }
    if (a.max_nodes > 0 && static_cast<std::size_t>(a.max_nodes) < hosts.size())
        hosts.resize(static_cast<std::size_t>(a.max_nodes));
    return hosts;
}

} // namespace

namespace {

// Every node that gets a rank answers SSH (5 s each, in parallel): otherwise no rank starts, and the
// user is told what repairs it.
template <typename Find>
Status nodes_answer(Context& ctx, const std::vector<runtime::HostfileEntry>& hosts, const Find& find_node) {
    std::vector<const NodeState*> nodes;
    for (const auto& h : hosts)
        if (const NodeState* n = find_node(h.host);
            n && std::find(nodes.begin(), nodes.end(), n) == nodes.end())
            nodes.push_back(n);
    std::vector<char> up(nodes.size(), 0);
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        up[i] = ctx.remote.wait_ready(ctx.endpoint(*nodes[i]), std::chrono::seconds(5)) ? 1 : 0;
    });
    std::vector<std::string> silent;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (!up[i]) silent.push_back(nodes[i]->name);
    if (silent.empty()) return {};
    const std::string spec = ctx.state.spec_file.empty() ? "<its spec>" : ctx.state.spec_file;
    return Error{
        "node(s) " + join(silent, ", ") + " of cluster " + ctx.state.cluster +
        " do not answer SSH; no rank was started\nhint: `ddl deploy " + spec +
        "` checks every node and repairs what it can (a stopped sshd, a lost node), or `ddl cordon " +
        join(silent, " ") + " --cluster " + ctx.state.cluster + "` runs without them"};
}

} // namespace

Result<PreparedLaunch> prepare_launch(Context& ctx, const RunArgs& a) {
    if (auto s = check_nodes_over_ssh(ctx.spec, "launching ranks over SSH"); !s) return s.error();
    if (!ctx.state.phase_done("probe"))
        return Error{"cluster " + ctx.state.cluster + " is not deployed yet; run `ddl deploy` first"};
    warn_short_lease(ctx);
    auto hosts = launch_hosts(ctx, a);
    if (!hosts) return hosts.error();
    auto find_node = [&ctx](const std::string& host) -> const NodeState* {
        for (const auto& n : ctx.state.nodes)
            if (n.address == host || n.cluster_address() == host || n.name == host || n.hostname == host)
                return &n;
        return nullptr;
    };
    for (const auto& h : *hosts) {
        if (!find_node(h.host))
            return Error{a.hostfile + ":" + std::to_string(h.line) + ": host " + h.host +
                         " is not a node of cluster " + ctx.state.cluster};
    }
    if (auto s = nodes_answer(ctx, *hosts, find_node); !s) return s.error();
    if (a.container) {
        if (auto s = training_containers_ready(ctx); !s) return s.error();
    }
    PreparedLaunch p;
    p.transport = std::make_unique<SshRankTransport>(
        [&ctx, find_node](const std::string& host) -> std::optional<SshEndpoint> {
            const NodeState* n = find_node(host);
            if (!n) return std::nullopt;
            return ctx.endpoint(*n);
        });
    // Host networking: a container's rank has its node's addresses, so the rendezvous address and the
    // interface choice are the same as for ranks on the node itself.
    if (a.container)
        p.transport->use_containers({.engine = ctx.spec.container_engine_argv(),
                                     .container = [&ctx, find_node](const std::string& host) {
                                         const NodeState* n = find_node(host);
                                         return ctx.spec.training_container(n ? n->name : host);
                                     }});
    auto& opts = p.opts;
    opts.hosts = std::move(*hosts);
    opts.np = a.np;
    opts.argv = a.command;
    opts.iface = a.iface.empty() ? ctx.spec.runtime.interface : a.iface;
    opts.master_port = a.port > 0 ? a.port : ctx.spec.runtime.master_port;
    opts.startup_timeout = std::chrono::seconds(a.startup_timeout_s);
    if (ctx.spec.runtime.backend != Backend::auto_select)
        opts.extra_env["DDL_BACKEND"] = to_string(ctx.spec.runtime.backend);
    // The user's job starts where `ddl run -d` starts it (its env: run_with_restarts).
    if (a.as_job && !ctx.spec.work.workdir.empty() && !a.container) {
        if (auto s = check_synced(ctx); !s) return s.error();
        opts.workdir = remote_workdir(ctx.spec);
    }
    for (auto& [name, value] : dataset_env(ctx.spec))
        opts.extra_env[name] = std::move(value);
    if (auto s = check_env_args(a.env); !s) return s.error();
    for (auto& [name, value] : env_from_args(a.env))
        opts.extra_env[name] = std::move(value);
    return p;
}

Result<std::vector<std::string>> run_tool_lines(Context& ctx, const RunArgs& a) {
    auto prepared = prepare_launch(ctx, a);
    if (!prepared) return prepared.error();
    std::vector<std::string> lines, errors;
    prepared->opts.output = [&](const std::string& line, runtime::OutputStream stream) {
        static const std::string progress = "[0] ddl-progress ";
        if (stream == runtime::OutputStream::out && starts_with(line, "[0] "))
            lines.push_back(line.substr(4));
        else if (stream == runtime::OutputStream::err && a.on_progress && starts_with(line, progress))
            a.on_progress(line.substr(progress.size()));
        else if (stream == runtime::OutputStream::err)
            errors.push_back(line);
    };
    prepared->opts.forward_signals = a.forward_signals;
    runtime::Launcher launcher(*prepared->transport);
    auto result = launcher.run(prepared->opts);
    if (!result) return result.error();
    if (result->exit_code != 0)
        return Error{
            (result->message.empty() ? "exit " + std::to_string(result->exit_code) : result->message) +
            (errors.empty() ? "" : "\n" + join(errors, "\n"))};
    return lines;
}

Result<nlohmann::json> run_tool_json(Context& ctx, const RunArgs& a) {
    auto lines = run_tool_lines(ctx, a);
    if (!lines) return lines.error();
    std::string result_line;
    for (const auto& l : *lines)
        if (starts_with(l, "{")) result_line = l;
    if (result_line.empty()) return Error{"no result from rank 0"};
    auto j = nlohmann::json::parse(result_line, nullptr, false);
    if (j.is_discarded()) return Error{"unreadable result: " + result_line};
    return j;
}

} // namespace ddl::cli
