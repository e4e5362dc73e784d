#pragma once
// The doctor's connect matrix: every node listens for a short while on the rendezvous port and on a port
// the kernel hands out from its ephemeral range (as the runtime's TCP ring and NCCL's sockets do), and
// every other node connects to both. A real TCP connect, not a ping: it finds what a firewall, a security
// group or a missing route does to exactly the traffic a job needs. The scripts are python3 (the nodes
// have it for Ansible); building them and judging their answers are pure functions.
#include "cli/HealthJudge.hpp"

#include <string>
#include <vector>

namespace ddl::cli {

// A node's listener, as its start command reported it: "PID RDV DATA", RDV/DATA a port, "busy" (the
// port is taken, e.g. by a running job's rendezvous) or "error".
struct Listener {
    std::string node;
    std::string address; // where peers connect (the node's cluster address)
    int pid = 0;
    int rendezvous_port = 0;      // 0: not listening (see rendezvous_state)
    std::string rendezvous_state; // "" listening, "busy", "error"
    int data_port = 0;
    std::string error; // the start failed (SSH, no python3)
};

// The command that starts a listener in the background for `seconds` (it exits on its own then, or
// when killed) and prints its line.
std::string listener_command(int rendezvous_port, int seconds);
Listener parse_listener(const std::string& node, const std::string& address, int rendezvous_port,
                        const std::string& output);

// The command that connects (timeout_s each, all at once) to the targets it reads as JSON on stdin:
// [[node, address, port, kind], ...]; it prints "node port kind outcome" lines, outcome one of ok,
// refused, timeout, error:<why>.
std::string prober_command(double timeout_s);
// The JSON the prober reads for a node: every other listener's ports.
std::string prober_input(const std::string& from, const std::vector<Listener>& listeners);

struct Probe {
    std::string from, to;
    int port = 0;
    std::string kind; // "rendezvous" | "data"
    std::string outcome;
};
std::vector<Probe> parse_probes(const std::string& from, const std::string& output);

// The findings: a target no peer reaches on a port is one row on that node (its own firewall), a pair
// that fails while others pass is one row "from -> to"; a busy rendezvous port is a warning; every node
// reached from all peers on both ports passes.
std::vector<Finding> judge_matrix(const std::vector<Listener>& listeners, const std::vector<Probe>& probes);

} // namespace ddl::cli
