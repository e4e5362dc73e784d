#include "targets/local/LocalTarget.hpp"

#include "core/Log.hpp"
#include "remote/SshKeys.hpp"
#include "targets/local/LocalContainers.hpp"
#include "targets/local/LocalHost.hpp"
#include "targets/local/LocalMesh.hpp"
#include "util/FileLock.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <signal.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace ddl {
namespace {

// Host folders that become per-node bind-mount targets; created when missing, removed by the last destroy.
const std::vector<std::string> k_mountpoints{"/etc/ddl", "/opt/ddl"};
// LocalTarget::k_registry: machine-wide bookkeeping of the mount points, shared by every local cluster (and
// every state folder): `created` lists the folders ddl made, `users/` holds one record per cluster using
// them (also what `ddl gc` finds when the cluster's state folder is gone); both change only under `lock`,
// so one cluster's destroy never removes a folder another cluster's provision relies on.

// The bridge's addresses in CIDR form: IPv4, the ULA /64, or both (local.ip_family).
std::vector<std::string> bridge_addresses(const LocalPlan& plan) {
    std::vector<std::string> out;
    if (plan.has_ipv4()) out.push_back(plan.bridge_address + "/" + std::to_string(plan.prefix));
    if (plan.has_ipv6()) out.push_back(plan.bridge_address6 + "/64");
    return out;
}

} // namespace

bool local_link_exists(const Context& ctx, const std::string& name, const std::string& netns) {
    Command c{.argv = {"ip"}};
    if (!netns.empty()) c.argv.insert(c.argv.end(), {"-n", netns});
    c.argv.insert(c.argv.end(), {"link", "show", "dev", name});
    auto r = ctx.proc.run(c);
    return r && r->success();
}

std::vector<std::string> local_netns_list(const Context& ctx) {
    std::vector<std::string> out;
    auto r = ctx.proc.run({.argv = {"ip", "netns", "list"}});
    if (!r || !r->success()) return out;
    for (const auto& line : split_lines(r->out)) {
        auto name = trim(line.substr(0, line.find(' ')));
        if (!name.empty()) out.push_back(name);
    }
    return out;
}

std::optional<std::int64_t> local_sshd_pid(const std::string& node_dir, const std::string& started_from) {
    auto pid_text = read_file(node_dir + "/sshd.pid");
    if (!pid_text) return std::nullopt;
    auto pid = parse_int(trim(*pid_text));
    if (!pid || *pid <= 1) return std::nullopt;
    // A pid the kernel gave to another process since is not this node's sshd.
    auto cmdline = read_file("/proc/" + std::to_string(*pid) + "/cmdline");
    if (!cmdline || cmdline->find(started_from + "/sshd_config") == std::string::npos) return std::nullopt;
    return pid;
}

namespace {

bool link_exists(const Context& ctx, const std::string& name, const std::string& netns = "") {
    return local_link_exists(ctx, name, netns);
}

bool has_netns(const Context& ctx, const std::string& ns) {
    auto all = local_netns_list(ctx);
    return std::find(all.begin(), all.end(), ns) != all.end();
}

// True when the sshd recorded in the node's pidfile is alive and is ours.
bool sshd_running(const Context& ctx, const std::string& node) {
    const std::string dir = LocalTarget::node_dir(ctx, node);
    return local_sshd_pid(dir, dir).has_value();
}

} // namespace

// The plan the provision phase carries out: names, subnet, bridge, veths.
Result<RenderedFiles> LocalTarget::render(const Spec& s, const RenderInputs&) const {
    RenderedFiles f;
    f["local/plan.json"] = json_file(LocalPlan::from_spec(s).to_json());
    return f;
}

Status LocalTarget::reshape_links(const Context& ctx, std::uint64_t bps) {
    return shape_links(ctx, LocalPlan::from_json(ctx.state.target_data.at("plan")), bps);
}

Status LocalTarget::setup_bridge(const Context& ctx, const LocalPlan& plan) {
    if (plan.bastion && !link_exists(ctx, plan.private_bridge)) {
        // No address in the root namespace: the machine itself cannot reach the workers, only the master.
        if (auto s = ctx.run({.argv = {"ip", "link", "add", plan.private_bridge, "type", "bridge"}}); !s)
            return s;
    }
    if (plan.bastion) {
        if (auto s = ctx.run({.argv = {"ip", "link", "set", plan.private_bridge, "up"}}); !s) return s;
    }
    if (!link_exists(ctx, plan.bridge)) {
        if (auto s = ctx.run({.argv = {"ip", "link", "add", plan.bridge, "type", "bridge"}}); !s) return s;
    }
    auto r = ctx.proc.run({.argv = {"ip", "-o", "addr", "show", "dev", plan.bridge}});
    for (const auto& addr : bridge_addresses(plan)) {
        if (r && r->out.find(" " + addr + " ") != std::string::npos) continue;
        Command add{.argv = {"ip", "addr", "add", addr, "dev", plan.bridge}};
        // No duplicate address detection: the /64 is the cluster's own, and DAD would hold the address
        // "tentative" (unusable) for a second or more after the link comes up.
        if (addr.find(':') != std::string::npos) add.argv.emplace_back("nodad");
        if (auto s = ctx.run(add); !s) return s;
    }
    return ctx.run({.argv = {"ip", "link", "set", plan.bridge, "up"}});
}

Status LocalTarget::start_sshd(const Context& ctx, const LocalNodePlan& node) {
    if (sshd_running(ctx, node.name)) return {};
    return ctx.run({.argv = sshd_argv(node.netns, LocalTarget::node_dir(ctx, node.name)),
                    .timeout = std::chrono::seconds(20)});
}

std::vector<std::string> LocalTarget::sshd_argv(const std::string& netns, const std::string& dir) {
    // nsenter+unshare rather than `ip netns exec`, which remounts /sys (not allowed in this machine's
    // container). `env -i`: the sshd lives as long as the cluster and its sessions start from it; ddl's own
    // environment (the spec's secrets, cloud credentials) stays out of it.
    return {"env",
            "-i",
            std::string("PATH=") + k_daemon_path,
            "nsenter",
            "--net=/run/netns/" + netns,
            "unshare",
            "--mount",
            "--uts",
            "--propagation",
            "private",
            "/bin/sh",
            dir + "/init.sh"};
}

namespace {

// One veth pair from `bridge` into the node's namespace, named `inner` there, with `addrs` (CIDR form;
// IPv6 ones without duplicate address detection). Converges from any half-made state an interrupted run
// left.
Status setup_link(const Context& ctx, const std::string& netns, const std::string& veth_host,
                  const std::string& veth_node, const std::string& bridge, const std::string& inner,
                  const std::vector<std::string>& addrs) {
    if (!link_exists(ctx, veth_host)) {
        // The node end may sit in the namespace already.
        if (link_exists(ctx, inner, netns))
            (void)ctx.proc.run({.argv = {"ip", "-n", netns, "link", "del", inner}});
        if (auto s = ctx.run({.argv = {"ip", "link", "add", veth_host, "type", "veth", "peer", "name",
                                       veth_node, "netns", netns}});
            !s)
            return s;
    }
    if (auto s = ctx.run({.argv = {"ip", "link", "set", veth_host, "master", bridge, "up"}}); !s) return s;
    if (!link_exists(ctx, inner, netns)) {
        if (auto s = ctx.run({.argv = {"ip", "-n", netns, "link", "set", veth_node, "name", inner}}); !s)
            return s;
    }
    auto r = ctx.proc.run({.argv = {"ip", "-n", netns, "-o", "addr", "show", "dev", inner}});
    for (const auto& addr : addrs) {
        if (r && r->out.find(" " + addr + " ") != std::string::npos) continue;
        Command add{.argv = {"ip", "-n", netns, "addr", "add", addr, "dev", inner}};
        if (addr.find(':') != std::string::npos) add.argv.emplace_back("nodad");
        if (auto s = ctx.run(add); !s) return s;
    }
    return ctx.run({.argv = {"ip", "-n", netns, "link", "set", inner, "up"}});
}

} // namespace

Status LocalTarget::setup_node(const Context& ctx, const LocalPlan& plan, std::size_t index) {
    const auto& n = plan.nodes[index];
    // A deploy killed during `ip netns add` leaves /run/netns/NAME without a namespace mounted on it
    // (every `ip -n NAME` then fails with "Invalid argument"): such a name is removed and made again.
    if (has_netns(ctx, n.netns)) {
        auto lo = ctx.proc.run({.argv = {"ip", "-n", n.netns, "link", "show", "lo"}});
        if (!lo || !lo->success()) (void)ctx.proc.run({.argv = {"ip", "netns", "del", n.netns}});
    }
    if (!has_netns(ctx, n.netns)) {
        if (auto s = ctx.run({.argv = {"ip", "netns", "add", n.netns}}); !s) return s;
    }
    kill_point("provision:" + n.name + ":netns");
    const auto& bridge = n.behind_bastion ? plan.private_bridge : plan.bridge;
    std::vector<std::string> addrs;
    if (plan.has_ipv4()) addrs.push_back(n.address + "/" + std::to_string(plan.prefix));
    if (plan.has_ipv6()) addrs.push_back(n.address6 + "/64");
    if (auto s = setup_link(ctx, n.netns, n.veth_host, n.veth_node, bridge, "eth0", addrs); !s) return s;
    if (!n.veth2_host.empty()) {
        if (auto s = setup_link(ctx, n.netns, n.veth2_host, n.veth2_node, plan.private_bridge, "eth1",
                                {n.private_address + "/24"});
            !s)
            return s;
    }
    if (auto s = ctx.run({.argv = {"ip", "-n", n.netns, "link", "set", "lo", "up"}}); !s) return s;
    kill_point("provision:" + n.name + ":links");
    // Nodes behind the bastion have no way out, like workers without a floating IP or router.
    if (!n.behind_bastion && plan.has_ipv4()) {
        if (auto s = ctx.run(
                {.argv = {"ip", "-n", n.netns, "route", "replace", "default", "via", plan.bridge_address}});
            !s)
            return s;
    }
    if (plan.has_ipv6()) {
        if (auto s = ctx.run({.argv = {"ip", "-n", n.netns, "-6", "route", "replace", "default", "via",
                                       plan.bridge_address6}});
            !s)
            return s;
    }
    if (auto s = write_node_files(ctx, plan, index); !s) return s;
    kill_point("provision:" + n.name + ":files");
    if (plan.containers) {
        if (auto s = LocalContainers(ctx, plan).ensure_running(n, LocalTarget::node_dir(ctx, n.name)); !s)
            return s;
        kill_point("provision:" + n.name + ":container");
        return {};
    }
    if (auto s = start_sshd(ctx, n); !s) return s;
    kill_point("provision:" + n.name + ":sshd");
    return {};
}

std::uint64_t LocalTarget::tbf_burst_bytes(std::uint64_t bps) {
    // The bucket refills while a link idles (between collective steps) and what it holds then leaves at
    // the veth's own speed: with 1 MiB at 1 Gbit/s, 1 MiB allreduces measured 110-117 % of the line rate.
    // Too small a bucket starves the link instead (64 KiB, one segmentation-offload packet: 40-45 %).
    // Measured at 1 Gbit/s, 4 ranks, 1-64 MiB: 128 KiB 90-94 %, 256 KiB 92-95 %, 512 KiB 117 % at 1 MiB.
    // So two milliseconds of line rate, and never under 128 KiB.
    return std::max<std::uint64_t>(bps / 8 / 500, std::uint64_t{128} * 1024);
}

Status LocalTarget::shape_links(const Context& ctx, const LocalPlan& plan, std::uint64_t bps) {
    for (const auto& n : plan.nodes) {
        std::vector<std::vector<std::string>> ends{{"tc", "qdisc"}, {"tc", "-n", n.netns, "qdisc"}};
        std::vector<std::string> devs{n.veth_host, "eth0"};
        if (!n.veth2_host.empty()) {
            ends.push_back({"tc", "qdisc"});
            ends.push_back({"tc", "-n", n.netns, "qdisc"});
            devs.insert(devs.end(), {n.veth2_host, "eth1"});
        }
        for (std::size_t e = 0; e < ends.size(); ++e) {
            Command c{.argv = ends[e]};
            if (bps == 0) {
                c.argv.insert(c.argv.end(), {"del", "dev", devs[e], "root"});
                (void)ctx.proc.run(c); // absent qdisc: nothing to remove
                continue;
            }
            c.argv.insert(c.argv.end(),
                          {"replace", "dev", devs[e], "root", "tbf", "rate", std::to_string(bps) + "bit",
                           "burst", std::to_string(tbf_burst_bytes(bps)), "latency", "50ms"});
            if (auto s = ctx.run(c); !s) return s;
        }
    }
    return {};
}

Status LocalTarget::provision(Context& ctx) {
    LocalPlan plan = LocalPlan::from_spec(ctx.spec, recorded_salt(ctx));
    // What the spec no longer has goes first (after approval): the plan recorded below would forget it.
    if (auto s = remove_changed_nodes(ctx, plan); !s) return s;
    auto& td = ctx.state.target_data;
    {
        if (auto s = make_dirs(std::string(k_registry) + "/users", 0700); !s) return s;
        FileLock lock(std::string(k_registry) + "/lock");
        if (!lock.held()) return Error{std::string("cannot lock ") + k_registry + "/lock"};
        // Checked and claimed under one lock: of two deploys at one moment, the second sees the first's
        // record (its subnet, its link tag) and is refused or picks another tag before it makes anything.
        if (auto s = claim(ctx, plan); !s) return s;
        // Recorded before anything is made: destroy works from the plan even if what follows fails half
        // way, and the folder's place tells a moved state folder (moved_from) from this one.
        td["plan"] = plan.to_json();
        td["cluster_dir"] = ctx.cluster_dir();
        std::vector<std::string> mountpoints = k_mountpoints;
        if (!plan.containers) {
            const auto more = LocalMesh(ctx, plan).mountpoints();
            mountpoints.insert(mountpoints.end(), more.begin(), more.end());
        }
        std::string created = read_file(std::string(k_registry) + "/created").value_or("");
        for (const auto& mp : mountpoints) {
            if (path_exists(mp)) continue;
            if (auto s = make_dirs(mp, ends_with(mp, "/.ssh") ? 0700 : 0755); !s) return s;
            created += mp + "\n";
        }
        if (auto s = write_file_atomic(std::string(k_registry) + "/created", created, 0600); !s) return s;
        const std::string record = std::string(k_registry) + "/users/" + registry_id(ctx);
        if (auto s =
                write_file_atomic(record, registry_record(ctx, plan, read_file(record).value_or("")), 0600);
            !s)
            return s;
    }
    if (auto s = make_dirs("/run/sshd", 0755); !s) return s;
    if (auto s = ctx.save(); !s) return s;
    kill_point("provision:plan-saved");
    const LocalMesh mesh(ctx, plan);
    // The cluster key exists before the nodes fan out: every node authorizes the same one.
    if (auto key = ensure_keypair(ctx.key_path(), "ddl-" + plan.cluster); !key) return key.error();
    if (!plan.containers) {
        if (auto key = mesh.ensure_key(); !key) return key.error();
        if (ctx.spec.services.nfs) {
            if (auto s = make_dirs(ctx.cluster_dir() + "/shared", 0755); !s) return s;
        }
    }

    kill_point("provision:keypair");
    if (auto s = setup_bridge(ctx, plan); !s) return s;
    kill_point("provision:bridge");
    if (plan.containers) {
        LocalContainers containers(ctx, plan);
        if (auto s = containers.ensure_apt_proxy(); !s) return s;
        kill_point("provision:apt-proxy");
        if (auto s = containers.ensure_image(); !s) return s;
        kill_point("provision:image");
    }
    std::vector<Status> results(plan.nodes.size());
    parallel_for(plan.nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        results[i] = setup_node(ctx, plan, i);
        ctx.progress.node(plan.nodes[i].name, results[i] ? "up at " + plan.nodes[i].address
                                                         : "failed: " + results[i].error().message);
    });
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (!results[i]) return Error{"node " + plan.nodes[i].name + ": " + results[i].error().message};
    }
    // Every node's host key exists now: each node's ~/.ssh can pin all of them.
    if (!plan.containers) {
        if (auto s = mesh.write_ssh_folders(); !s) return s;
    }
    if (auto s = shape_links(ctx, plan, plan.bandwidth_bps); !s) return s;
    kill_point("provision:shaped");

    ctx.state.nodes.clear();
    for (const auto& n : plan.nodes) {
        NodeState ns;
        ns.name = n.name;
        ns.group = n.name == "master" ? "master" : "workers";
        ns.address = n.address;
        ns.private_address = n.private_address;
        if (n.behind_bastion) ns.jump = plan.nodes.front().name;
        ns.port = 22;
        ns.user = "root";
        ns.netns = n.netns;
        ctx.state.nodes.push_back(ns);
    }
    return {};
}

std::vector<PlannedNode> LocalTarget::planned_nodes(const Spec& spec) const {
    const LocalPlan plan = LocalPlan::from_spec(spec);
    std::vector<PlannedNode> nodes;
    for (const auto& n : plan.nodes)
        nodes.push_back({n.name, (plan.containers ? "container " + plan.image : std::string("namespace")) +
                                     ", " + n.address + (n.behind_bastion ? " behind the master" : "")});
    return nodes;
}

} // namespace ddl
