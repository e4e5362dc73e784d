#include "cli/HealthChecks.hpp"

#include "cli/Capabilities.hpp"
#include "cli/ConnectMatrix.hpp"
#include "cli/Launch.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

namespace ddl::cli {

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// How long a listener of the connect matrix lives at most (it is killed once the probes are done), and
// how long a probe waits for a connection: a dropped SYN shows as a timeout.
constexpr int k_listen_s = 60;
constexpr double k_connect_timeout_s = 3.0;

const NodeState& master_of(const std::vector<NodeState>& nodes) {
    for (const auto& n : nodes)
        if (n.group == "master") return n;
    return nodes.front();
}

} // namespace

std::string node_script(const std::vector<std::string>& folders, const std::string& address,
                        const std::vector<std::string>& names) {
    std::string s =
        "echo '@@ time'; date +%s.%N\n"
        "if command -v nvidia-smi >/dev/null 2>&1; then echo '@@ smi'; out=$(nvidia-smi -q 2>&1); "
        "rc=$?; printf '%s\\n' \"$out\"; echo '@@ smi-rc'; echo \"$rc\"; fi\n"
        "echo '@@ cuda'; cat /etc/ddl/cuda.json 2>/dev/null; echo\n"
        // dmesg is the kernel's buffer since boot; journalctl where dmesg is restricted.
        "echo '@@ xid'; { dmesg 2>/dev/null || journalctl -k -b -q --no-pager 2>/dev/null; } | "
        "grep 'NVRM: Xid' | tail -n 200\n"
        "if command -v dcgmi >/dev/null 2>&1; then echo '@@ dcgmi'; timeout 300 dcgmi diag -r 1 2>&1; fi\n"
        "echo '@@ df'\n";
    for (const auto& f : folders)
        s += "echo " + shell_quote(f) + " $(df -P -k " + shell_quote(f) +
             " 2>/dev/null | awk 'NR==2 {print $4, $2}')\n";
    s += "echo '@@ mtu'; i=$(ip -o addr show 2>/dev/null | awk -v a=" + shell_quote(address + "/") +
         " 'index($4, a) == 1 {print $2; exit}'); [ -n \"$i\" ] && echo \"$i $(cat /sys/class/net/$i/mtu)\"\n"
         "echo '@@ resolve'\n";
    for (const auto& n : names)
        s += "echo " + shell_quote(n) + " $(getent ahosts " + shell_quote(n) +
             " | awk '{print $1}' | sort -u)\n";
    s += "echo '@@ ib'; ls /sys/class/infiniband 2>/dev/null; true\n";
    return s;
}

NodeFacts parse_node_output(const std::string& node, const std::string& output) {
    NodeFacts f;
    f.node = node;
    auto sec = parse_sections(output);
    if (auto t = trim(sec["time"]); !t.empty()) f.node_time = std::atof(t.c_str());
    if (sec.count("smi")) {
        f.smi_present = true;
        f.smi_rc = static_cast<int>(parse_int(trim(sec["smi-rc"])).value_or(1));
        f.smi = parse_nvidia_smi_q(sec["smi"]);
        if (f.smi_rc != 0) {
            auto lines = split_lines(trim(sec["smi"]));
            f.smi_error = lines.empty() ? "" : printable_utf8(lines.back(), 160);
        }
    }
    auto cuda = nlohmann::json::parse(trim(sec["cuda"]), nullptr, false);
    if (cuda.is_object()) {
        if (cuda.contains("major") && cuda.contains("minor"))
            f.cuda_runtime =
                std::to_string(cuda.value("major", 0)) + "." + std::to_string(cuda.value("minor", 0));
        if (cuda.contains("nccl") && cuda["nccl"].is_string()) f.nccl = cuda["nccl"].get<std::string>();
    }
    f.xids = parse_xids(sec["xid"]);
    if (sec.count("dcgmi")) {
        f.dcgmi_present = true;
        f.dcgmi_failed = parse_dcgmi_failures(sec["dcgmi"]);
    }
    f.disks = parse_disk_lines(sec["df"]);
    if (auto m = split(trim(sec["mtu"]), ' '); m.size() == 2) {
        f.iface = m[0];
        f.mtu = static_cast<int>(parse_int(m[1]).value_or(0));
    }
    for (const auto& line : split_lines(sec["resolve"])) {
        auto w = split(trim(line), ' ');
        if (w.empty() || w[0].empty()) continue;
        std::vector<std::string> rest(w.begin() + 1, w.end());
        f.resolved[w[0]] = join(rest, " ");
    }
    f.ib = !trim(sec["ib"]).empty();
    return f;
}

namespace {

std::vector<Finding> connect_matrix(Context& ctx) {
    const auto& nodes = ctx.state.nodes;
    const int port = ctx.spec.runtime.master_port;
    std::vector<Listener> listeners(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        auto r = ctx.remote.exec(ctx.endpoint(nodes[i]), listener_command(port, k_listen_s),
                                 std::chrono::seconds(30));
        if (!r)
            listeners[i] = {nodes[i].name, nodes[i].cluster_address(), 0, 0, "", 0, r.error().message};
        else
            listeners[i] = parse_listener(nodes[i].name, nodes[i].cluster_address(), port, r->out + r->err);
    });
    std::vector<std::vector<Probe>> probes(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        if (!listeners[i].error.empty()) return;
        auto r = ctx.remote.exec_with_input(ctx.endpoint(nodes[i]), prober_command(k_connect_timeout_s),
                                            prober_input(nodes[i].name, listeners), std::chrono::seconds(60));
        if (r) probes[i] = parse_probes(nodes[i].name, r->out);
    });
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        if (listeners[i].pid > 0)
            (void)ctx.remote.exec(ctx.endpoint(nodes[i]),
                                  "kill " + std::to_string(listeners[i].pid) + " 2>/dev/null",
                                  std::chrono::seconds(30));
    });
    std::vector<Probe> all;
    for (auto& p : probes)
        all.insert(all.end(), p.begin(), p.end());
    return judge_matrix(listeners, all);
}

// On GPU clusters: which transport NCCL picks for an allreduce over every node (NCCL_DEBUG=INFO), against
// what the nodes offer: InfiniBand/RoCE devices on every node mean NET/IB is expected.
Finding nccl_transport(Context& ctx, const std::vector<NodeFacts>& facts) {
    Finding f{"all", "nccl transport", HealthStatus::passed, "", "", ""};
    bool ib = !facts.empty();
    for (const auto& n : facts)
        ib = ib && n.error.empty() && n.ib;
    RunArgs a;
    a.command = {"ddl-allreduce-test", "--size", "1M", "-n", "1", "-w", "0"};
    a.env = {"DDL_BACKEND=nccl", "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET"};
    a.forward_signals = false;
    auto lines = run_tool_lines(ctx, a);
    if (!lines) {
        f.status = HealthStatus::failed;
        f.found = "an NCCL allreduce failed: " + lines.error().message;
        f.expected = "an NCCL allreduce over every node";
        f.fix = "see the connect and GPU rows; NCCL_DEBUG=INFO `ddl run` shows where it stops";
        return f;
    }
    const auto t = parse_nccl_transport(join(*lines, "\n"));
    f.found = t.net.empty() ? "not reported" : "NET/" + t.net + (t.iface.empty() ? "" : " on " + t.iface);
    const std::string want = ib ? "IB" : "Socket";
    if (!t.net.empty() && t.net != want) {
        f.status = ib ? HealthStatus::failed : HealthStatus::passed;
        f.expected = "NET/" + want;
        f.fix = "every node has InfiniBand/RoCE devices but NCCL uses sockets: install rdma-core and the "
                "provider's drivers, check `ibv_devinfo`, and NCCL_IB_HCA if set";
    }
    return f;
}

} // namespace

std::vector<Finding> run_health_checks(Context& ctx) {
    const auto& nodes = ctx.state.nodes;
    std::vector<Finding> out;
    if (nodes.empty()) return out;
    std::vector<std::string> folders;
    if (ctx.spec.services.nfs) folders.push_back(ctx.spec.services.nfs_mount);
    folders.push_back(k_scratch_folder);
    std::vector<std::string> names;
    std::map<std::string, std::string> expect_names;
    for (const auto& n : nodes) {
        names.push_back(n.name);
        expect_names[n.name] = n.cluster_address();
    }
    std::vector<NodeFacts> facts(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        const auto script = node_script(folders, nodes[i].cluster_address(), names);
        const double sent = now_s();
        auto r = ctx.remote.exec(ctx.endpoint(nodes[i]), "sh -c " + shell_quote(script),
                                 std::chrono::seconds(360));
        const double received = now_s();
        if (!r) {
            facts[i].node = nodes[i].name;
            facts[i].error = r.error().message;
            return;
        }
        facts[i] = parse_node_output(nodes[i].name, r->out);
        facts[i].sent = sent;
        facts[i].received = received;
    });
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        NodeExpect e;
        e.gpus = expected_gpus(ctx.spec, nodes[i]);
        e.folders = folders;
        e.names = expect_names;
        auto found = judge_node(facts[i], e);
        out.insert(out.end(), found.begin(), found.end());
    }
    auto across = judge_across(facts, master_of(nodes).name);
    out.insert(out.end(), across.begin(), across.end());
    if (nodes.size() >= 2) {
        auto matrix = connect_matrix(ctx);
        out.insert(out.end(), matrix.begin(), matrix.end());
    }
    bool gpus = false;
    for (const auto& n : nodes)
        gpus = gpus || expected_gpus(ctx.spec, n) > 0;
    if (gpus && nodes.size() >= 2) out.push_back(nccl_transport(ctx, facts));
    std::stable_sort(out.begin(), out.end(),
                     [](const Finding& a, const Finding& b) { return a.node < b.node; });
    return out;
}

} // namespace ddl::cli
