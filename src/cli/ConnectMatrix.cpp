#include "cli/ConnectMatrix.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace ddl::cli {

namespace {

// Binds the rendezvous port and port 0 (dual stack where the node has IPv6), prints "PID RDV DATA" from
// the parent, and serves accepts in a detached child until the deadline.
constexpr const char* k_listener = R"PY(import errno, os, select, socket, sys, time
def listen(port):
    for fam in (socket.AF_INET6, socket.AF_INET):
        try:
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", port))
            s.listen(128)
            return s, str(s.getsockname()[1])
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return None, "busy"
    return None, "error"
socks, words = [], []
for p in (int(sys.argv[1]), 0):
    s, w = listen(p)
    words.append(w)
    if s:
        socks.append(s)
pid = os.fork()
if pid:
    print(pid, *words, flush=True)
    os._exit(0)
os.setsid()
fd = os.open(os.devnull, os.O_RDWR)
for i in (0, 1, 2):
    os.dup2(fd, i)
end = time.time() + float(sys.argv[2])
while socks and time.time() < end:
    for s in select.select(socks, [], [], 0.5)[0]:
        try:
            s.accept()[0].close()
        except OSError:
            pass
)PY";

constexpr const char* k_prober = R"PY(import json, socket, sys, threading
targets = json.load(sys.stdin)
timeout = float(sys.argv[1])
res = [None] * len(targets)
def probe(i):
    node, addr, port, kind = targets[i]
    try:
        socket.create_connection((addr, port), timeout=timeout).close()
        res[i] = "ok"
    except socket.timeout:
        res[i] = "timeout"
    except ConnectionRefusedError:
        res[i] = "refused"
    except OSError as e:
        res[i] = "error:" + (e.strerror or str(e)).replace(" ", "_")
ts = [threading.Thread(target=probe, args=(i,)) for i in range(len(targets))]
for t in ts:
    t.start()
for t in ts:
    t.join()
for (node, addr, port, kind), r in zip(targets, res):
    print(node, port, kind, r)
)PY";

std::string what_failed(const std::string& outcome) {
    if (outcome == "timeout") return "timed out (packets dropped)";
    if (outcome == "refused") return "refused (rejected, or nothing listening)";
    if (starts_with(outcome, "error:")) return outcome.substr(6);
    return outcome;
}

} // namespace

std::string listener_command(int rendezvous_port, int seconds) {
    return "python3 -c " + shell_quote(k_listener) + " " + std::to_string(rendezvous_port) + " " +
           std::to_string(seconds);
}

Listener parse_listener(const std::string& node, const std::string& address, int rendezvous_port,
                        const std::string& output) {
    Listener l{node, address, 0, 0, "", 0, ""};
    auto f = split(trim(output), ' ');
    auto pid = f.size() == 3 ? parse_int(f[0]) : std::nullopt;
    if (!pid) {
        l.error = "the listener did not start: " + printable_utf8(trim(output), 160);
        return l;
    }
    l.pid = static_cast<int>(*pid);
    if (auto p = parse_int(f[1]); p && *p == rendezvous_port)
        l.rendezvous_port = rendezvous_port;
    else
        l.rendezvous_state = f[1];
    if (auto p = parse_int(f[2]); p && *p > 0) l.data_port = static_cast<int>(*p);
    return l;
}

std::string prober_command(double timeout_s) {
    return "python3 -c " + shell_quote(k_prober) + " " + std::to_string(timeout_s);
}

std::string prober_input(const std::string& from, const std::vector<Listener>& listeners) {
    auto j = nlohmann::json::array();
    for (const auto& l : listeners) {
        if (l.node == from || !l.error.empty()) continue;
        if (l.rendezvous_port > 0) j.push_back({l.node, l.address, l.rendezvous_port, "rendezvous"});
        if (l.data_port > 0) j.push_back({l.node, l.address, l.data_port, "data"});
    }
    return j.dump();
}

std::vector<Probe> parse_probes(const std::string& from, const std::string& output) {
    std::vector<Probe> out;
    for (const auto& line : split_lines(output)) {
        auto f = split(trim(line), ' ');
        if (f.size() != 4) continue;
        auto port = parse_int(f[1]);
        if (!port) continue;
        out.push_back({from, f[0], static_cast<int>(*port), f[2], f[3]});
    }
    return out;
}

std::vector<Finding> judge_matrix(const std::vector<Listener>& listeners, const std::vector<Probe>& probes) {
    std::vector<Finding> out;
    std::map<std::string, std::string> address;
    for (const auto& l : listeners)
        address[l.node] = l.address;
    for (const auto& l : listeners) {
        const std::string check = "connect";
        if (!l.error.empty()) {
            const bool started = !starts_with(l.error, "the listener did not start");
            out.push_back({l.node, check, HealthStatus::failed, l.error, "a listener for the connect test",
                           started ? "reach " + l.node + " over SSH first (see its ssh row)"
                                   : "install python3 on " + l.node + " (Ansible needs it too)"});
            continue;
        }
        if (l.rendezvous_state == "busy")
            out.push_back({l.node, "connect :rendezvous", HealthStatus::warning,
                           "the rendezvous port is in use", "free to test",
                           "a job is running there: run `ddl doctor` again when it ends"});
        bool bad = false;
        for (const char* kind : {"rendezvous", "data"}) {
            std::vector<const Probe*> to, failed;
            for (const auto& p : probes) {
                if (p.to != l.node || p.kind != kind) continue;
                to.push_back(&p);
                if (p.outcome != "ok") failed.push_back(&p);
            }
            if (failed.empty()) continue;
            bad = true;
            const int port = failed.front()->port;
            const std::string what =
                std::string(kind) == "rendezvous"
                    ? "TCP " + std::to_string(port) + " (the rendezvous port, runtime.master_port)"
                    : "TCP " + std::to_string(port) +
                          " (the ephemeral range the runtime's data connections use)";
            const std::string where = std::string(kind) == "rendezvous"
                                          ? ":" + std::to_string(port)
                                          : ":" + std::to_string(port) + " (data)";
            if (to.size() >= 2 && failed.size() == to.size()) {
                out.push_back({l.node, "connect " + where, HealthStatus::failed,
                               "no peer connects: " + what_failed(failed.front()->outcome),
                               "every peer connects",
                               "open " + what + " on " + l.node +
                                   " for the cluster's addresses: its host firewall "
                                   "(iptables/nft) or the security group drops it"});
                continue;
            }
            for (const auto* p : failed) {
                out.push_back({p->from + " -> " + p->to, "connect " + where, HealthStatus::failed,
                               what_failed(p->outcome), "connects",
                               "allow " + what + " from " + p->from + " (" + address[p->from] + ") to " +
                                   p->to + " (" + address[p->to] +
                                   "): a firewall rule on either node or between them "
                                   "drops it"});
            }
        }
        if (!bad)
            out.push_back({l.node, check, HealthStatus::passed,
                           "reached from every peer on :" + std::to_string(l.rendezvous_port) +
                               " and :" + std::to_string(l.data_port),
                           "", ""});
    }
    return out;
}

} // namespace ddl::cli
