// `ddl tunnel`: forwards 127.0.0.1:LOCAL to a service bound to a node's localhost (jupyter, grafana,
// prometheus or a port) with OpenSSH, printing the URL; runs until interrupted.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/OpenSsh.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "util/Redactor.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct TunnelArgs {
    std::string cluster;
    std::string service;
    int local_port = 0; // 0: the service's port
    std::string node;   // empty: the master
};

void add_options(CLI::App& sub, TunnelArgs& a) {
    add_cluster_ref(sub, a.cluster, ClusterRef::option);
    sub.add_option("service", a.service, "jupyter, grafana, prometheus or a port number")->required();
    sub.add_option("--local-port", a.local_port, "Port on 127.0.0.1 (default: the service's port)")
        ->check(CLI::Range(1, 65535));
    sub.add_option("--node", a.node, "Node the service runs on (default: the master)");
}

struct Service {
    int port = 0;
    std::string path = "/"; // the URL's path (Jupyter's carries the token)
};

// Where the service listens on the node; an Error (bad input) when the cluster does not run it.
Result<Service> find_service(const Context& ctx, const std::string& service) {
    if (service == "jupyter") {
        if (!ctx.spec.services.jupyter)
            return Error{"cluster " + ctx.state.cluster +
                         " has no JupyterLab\nhint: set services.jupyter: true and run ddl deploy again"};
        return Service{ctx.spec.services.jupyter_port, "/lab?token=" + ctx.state.jupyter_token};
    }
    if (service == "grafana" || service == "prometheus") {
        if (!ctx.spec.services.monitoring)
            return Error{"cluster " + ctx.state.cluster +
                         " has no monitoring\nhint: set services.monitoring: true and run ddl deploy again"};
        return Service{service == "grafana" ? 3000 : 9090};
    }
    if (auto p = parse_int(service); p && *p >= 1 && *p <= 65535) return Service{static_cast<int>(*p)};
    return Error{"unknown service \"" + service + "\"\nhint: jupyter, grafana, prometheus or a port number"};
}

int tunnel(const Invocation& inv, const TunnelArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    if (auto s = check_nodes_over_ssh(ctx.spec, "ddl tunnel"); !s)
        return inv.fail(s.error().message, exit_code::k_bad_input);
    const NodeState* n = find_node_or_explain(
        ctx, a.node.empty() ? ctx.state.nodes.empty() ? "master" : ctx.state.nodes.front().name : a.node,
        "ddl " + inv.name);
    if (!n) return exit_code::k_bad_input;
    // Services bind to the node's localhost only; the tunnel is the way in.
    auto service = find_service(ctx, a.service);
    if (!service) return inv.fail(service.error().message, exit_code::k_bad_input);
    int local_port = a.local_port == 0 ? service->port : a.local_port;
    std::string fwd =
        "127.0.0.1:" + std::to_string(local_port) + ":127.0.0.1:" + std::to_string(service->port);
    // The URL goes to the terminal only (it may carry the Jupyter token, which the redactor would mask:
    // the user asked for it); logs never see it.
    redaction::write_unredacted(std::cout, a.service + " on " + n->name +
                                               ": http://127.0.0.1:" + std::to_string(local_port) +
                                               service->path + "\n(Ctrl-C closes the tunnel)\n");
    exec_openssh(openssh_argv(ctx, *n, {"-N", "-o", "ExitOnForwardFailure=yes", "-L", fwd}),
                 "ddl " + inv.name);
}

} // namespace

CommandBody tunnel_command() {
    auto a = std::make_shared<TunnelArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return tunnel(inv, *a); }};
}

} // namespace ddl::cli
