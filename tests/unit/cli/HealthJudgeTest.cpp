#include "cli/HealthJudge.hpp"

#include "cli/ConnectMatrix.hpp"
#include "cli/HealthChecks.hpp"
#include "cli/Restarts.hpp"

#include <catch2/catch.hpp>

using namespace ddl::cli;

namespace {

const Finding* find(const std::vector<Finding>& fs, const std::string& node, const std::string& check) {
    for (const auto& f : fs)
        if (f.node == node && f.check == check) return &f;
    return nullptr;
}

NodeFacts healthy(const std::string& node) {
    NodeFacts f;
    f.node = node;
    f.disks["/shared"] = {10LL * 1024 * 1024, 20LL * 1024 * 1024};
    f.disks["/tmp"] = {10LL * 1024 * 1024, 20LL * 1024 * 1024};
    f.resolved = {{"master", "10.0.0.11"}, {"worker1", "10.0.0.12"}};
    f.mtu = 1500;
    return f;
}

NodeExpect expect(int gpus = 0) {
    NodeExpect e;
    e.gpus = gpus;
    e.folders = {"/shared", "/tmp"};
    e.names = {{"master", "10.0.0.11"}, {"worker1", "10.0.0.12"}};
    return e;
}

} // namespace

TEST_CASE("a healthy CPU node passes every check it has") {
    auto fs = judge_node(healthy("worker1"), expect());
    CHECK_FALSE(any_failed(fs));
    REQUIRE(find(fs, "worker1", "gpus"));
    CHECK(find(fs, "worker1", "resolve")->status == HealthStatus::passed);
    CHECK(find(fs, "worker1", "disk /shared")->status == HealthStatus::passed);
}

TEST_CASE("ECC errors and a narrow link are named with the GPU, the node and what to do") {
    auto f = healthy("worker2");
    f.smi_present = true;
    f.smi = parse_nvidia_smi_q(
        "Driver Version : 535.1\nGPU 00000000:05:00.0\n    ECC Errors\n        Volatile\n"
        "            DRAM Uncorrectable : 2\n    PCI\n        GPU Link Info\n"
        "            Link Width\n                Max : 16x\n                Current : 4x\n");
    auto fs = judge_node(f, expect(1));
    const auto* ecc = find(fs, "worker2", "ecc");
    REQUIRE(ecc);
    CHECK(ecc->status == HealthStatus::failed);
    CHECK(ecc->found == "GPU 00000000:05:00.0: 2 uncorrectable ECC error(s) since boot");
    CHECK(ecc->fix.find("ddl cordon worker2") != std::string::npos);
    const auto* pcie = find(fs, "worker2", "pcie");
    REQUIRE(pcie);
    CHECK(pcie->status == HealthStatus::failed);
    CHECK(pcie->found == "GPU 00000000:05:00.0: link x4");
    CHECK(pcie->expected == "x16");
}

TEST_CASE("fewer GPUs than the spec expects, or none answering, fail") {
    auto f = healthy("worker1");
    auto fs = judge_node(f, expect(2));
    CHECK(find(fs, "worker1", "gpus")->status == HealthStatus::failed);
    f.smi_present = true;
    f.smi.gpus.resize(1);
    fs = judge_node(f, expect(2));
    CHECK(find(fs, "worker1", "gpus")->found == "1 GPU(s) seen");
    f.smi_rc = 9;
    f.smi_error = "NVIDIA-SMI has failed";
    fs = judge_node(f, expect(2));
    CHECK(find(fs, "worker1", "gpus")->found.find("exit 9") != std::string::npos);
}

TEST_CASE("a name a node cannot resolve, a full disk and a hardware Xid are failures on that node") {
    auto f = healthy("worker1");
    f.resolved.erase("master");
    f.disks["/tmp"].avail_kib = 1000;
    f.xids = parse_xids("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n");
    auto fs = judge_node(f, expect());
    const auto* r = find(fs, "worker1", "resolve");
    REQUIRE(r);
    CHECK(r->found == "master does not resolve");
    CHECK(r->fix == "add `10.0.0.11 master` to /etc/hosts on worker1 (or fix its DNS)");
    CHECK(find(fs, "worker1", "disk /tmp")->status == HealthStatus::failed);
    CHECK(find(fs, "worker1", "xid")->status == HealthStatus::failed);
    f.resolved["master"] = "10.0.0.99";
    CHECK(find(judge_node(f, expect()), "worker1", "resolve")->found == "master -> 10.0.0.99");
}

TEST_CASE("an unreachable node is one failure") {
    NodeFacts f;
    f.node = "worker3";
    f.error = "connection refused";
    auto fs = judge_node(f, expect());
    REQUIRE(fs.size() == 1);
    CHECK(fs[0].check == "ssh");
}

TEST_CASE("the node whose driver or MTU differs from the others is the one named") {
    std::vector<NodeFacts> nodes{healthy("master"), healthy("worker1"), healthy("worker2")};
    for (auto& n : nodes)
        n.smi.driver = "580.65.06";
    nodes[2].smi.driver = "535.247.01";
    nodes[1].mtu = 9000;
    auto fs = judge_across(nodes, "master");
    const auto* d = find(fs, "worker2", "driver");
    REQUIRE(d);
    CHECK(d->status == HealthStatus::failed);
    CHECK(d->found == "535.247.01");
    CHECK(d->expected == "580.65.06 (as on master, worker1)");
    CHECK(find(fs, "master", "driver")->status == HealthStatus::passed);
    CHECK(find(fs, "worker1", "mtu")->status == HealthStatus::failed);
    CHECK(find(fs, "worker2", "mtu")->status == HealthStatus::passed);
}

TEST_CASE("a tie on a version is decided by the master's value") {
    std::vector<NodeFacts> nodes{healthy("master"), healthy("worker1")};
    nodes[0].nccl = "2.21.5";
    nodes[1].nccl = "2.18.1";
    auto fs = judge_across(nodes, "master");
    CHECK(find(fs, "worker1", "nccl")->status == HealthStatus::failed);
    CHECK(find(fs, "master", "nccl")->status == HealthStatus::passed);
}

TEST_CASE("a clock is off only beyond the measurement's own uncertainty") {
    std::vector<NodeFacts> nodes{healthy("master"), healthy("worker1")};
    nodes[0].sent = 100.0, nodes[0].received = 100.3, nodes[0].node_time = 100.1;
    nodes[1].sent = 100.0, nodes[1].received = 100.3, nodes[1].node_time = 105.1;
    auto fs = judge_across(nodes, "master");
    CHECK(find(fs, "worker1", "clock")->status == HealthStatus::failed);
    nodes[1].node_time = 101.0; // 0.9 s ahead: within the allowed second
    fs = judge_across(nodes, "master");
    CHECK(find(fs, "worker1", "clock")->status == HealthStatus::passed);
}

TEST_CASE("the node script's output becomes facts") {
    const std::string out =
        "@@ time\n1700000000.25\n@@ smi\nDriver Version : 580.65.06\nGPU 00000000:05:00.0\n"
        "@@ smi-rc\n0\n@@ cuda\n{\"major\": 12, \"minor\": 9, \"nccl\": \"2.21.5\"}\n"
        "@@ xid\n@@ df\n/shared 100 200\n/tmp 300 400\n@@ mtu\neth0 1500\n"
        "@@ resolve\nmaster 10.0.0.11\nworker1\n@@ ib\n";
    auto f = parse_node_output("worker1", out);
    CHECK(f.node_time == Approx(1700000000.25));
    CHECK(f.smi_present);
    CHECK(f.smi.gpus.size() == 1);
    CHECK(f.cuda_runtime == "12.9");
    CHECK(f.nccl == "2.21.5");
    CHECK(f.disks["/tmp"].avail_kib == 300);
    CHECK(f.iface == "eth0");
    CHECK(f.mtu == 1500);
    CHECK(f.resolved["master"] == "10.0.0.11");
    CHECK(f.resolved["worker1"].empty());
    CHECK_FALSE(f.ib);
    CHECK(node_script({"/shared"}, "10.0.0.12", {"master"}).find("getent ahosts master") !=
          std::string::npos);
}

TEST_CASE("the connect matrix blames a node no peer reaches, else the pair") {
    std::vector<Listener> ls{parse_listener("master", "10.0.0.11", 29500, "4242 29500 41000\n"),
                             parse_listener("worker1", "10.0.0.12", 29500, "4343 29500 42000\n"),
                             parse_listener("worker2", "10.0.0.13", 29500, "4444 busy 43000\n")};
    CHECK(ls[0].pid == 4242);
    CHECK(ls[0].rendezvous_port == 29500);
    CHECK(ls[0].data_port == 41000);
    CHECK(ls[2].rendezvous_state == "busy");
    CHECK(prober_input("master", ls) ==
          R"([["worker1","10.0.0.12",29500,"rendezvous"],["worker1","10.0.0.12",42000,"data"],)"
          R"(["worker2","10.0.0.13",43000,"data"]])");
    std::vector<Probe> ps;
    for (auto p : parse_probes("master", "worker1 29500 rendezvous timeout\nworker1 42000 data ok\n"
                                         "worker2 43000 data refused\n"))
        ps.push_back(p);
    for (auto p : parse_probes("worker1", "master 29500 rendezvous ok\nmaster 41000 data ok\n"
                                          "worker2 43000 data refused\n"))
        ps.push_back(p);
    for (auto p : parse_probes("worker2", "master 29500 rendezvous ok\nmaster 41000 data ok\n"
                                          "worker1 29500 rendezvous ok\nworker1 42000 data ok\n"))
        ps.push_back(p);
    auto fs = judge_matrix(ls, ps);
    const auto* pair = find(fs, "master -> worker1", "connect :29500");
    REQUIRE(pair);
    CHECK(pair->status == HealthStatus::failed);
    CHECK(pair->found == "timed out (packets dropped)");
    CHECK(pair->fix.find("from master (10.0.0.11) to worker1 (10.0.0.12)") != std::string::npos);
    const auto* all = find(fs, "worker2", "connect :43000 (data)");
    REQUIRE(all);
    CHECK(all->found.find("no peer connects") != std::string::npos);
    CHECK(find(fs, "worker2", "connect :rendezvous")->status == HealthStatus::warning);
    CHECK(find(fs, "master", "connect")->status == HealthStatus::passed);
    CHECK_FALSE(find(fs, "worker1", "connect"));
}

TEST_CASE("a listener that did not start is a failure naming python3") {
    auto l = parse_listener("worker1", "10.0.0.12", 29500, "sh: 1: python3: not found\n");
    CHECK(l.error.find("did not start") != std::string::npos);
    auto fs = judge_matrix({l}, {});
    CHECK(fs.at(0).status == HealthStatus::failed);
}

namespace {

std::vector<ddl::NodeState> three_nodes() {
    std::vector<ddl::NodeState> ns(3);
    const char* names[] = {"master", "worker1", "worker2"};
    for (int i = 0; i < 3; ++i) {
        ns[static_cast<std::size_t>(i)].name = names[i];
        ns[static_cast<std::size_t>(i)].address = "10.0.0.1" + std::to_string(i + 1);
        ns[static_cast<std::size_t>(i)].slots = 1;
    }
    return ns;
}

ddl::runtime::LaunchResult rank_failed_on(const std::string& host) {
    ddl::runtime::LaunchResult r;
    r.exit_code = 137;
    r.failed_rank = 2;
    r.failed_host = host;
    r.message = "rank 2 on " + host + " was killed by signal 9";
    return r;
}

} // namespace

TEST_CASE("a rank lost on a node that fails the health checks restarts the job without that node") {
    RestartPolicy p{1, "node-fault"};
    auto d = decide_restart(p, rank_failed_on("10.0.0.13"), three_nodes(), {"worker2"}, 0);
    CHECK(d.restart);
    CHECK(d.cordon == std::vector<std::string>{"worker2"});
    CHECK(d.why == "cordoning worker2 (failing the health checks)");
}

TEST_CASE("node-fault does not restart a rank whose node is healthy; any does, cordoning nothing") {
    auto d = decide_restart({1, "node-fault"}, rank_failed_on("worker1"), three_nodes(), {}, 0);
    CHECK_FALSE(d.restart);
    CHECK(d.why.find("worker1 passes the health checks") != std::string::npos);
    d = decide_restart({1, "any"}, rank_failed_on("worker1"), three_nodes(), {}, 0);
    CHECK(d.restart);
    CHECK(d.cordon.empty());
}

TEST_CASE("a failing node stays in when the job does not fit without it") {
    auto d = decide_restart({1, "any"}, rank_failed_on("worker2"), three_nodes(), {"worker2"}, 3);
    CHECK(d.restart);
    CHECK(d.cordon.empty());
    CHECK(d.why == "worker2 fail the health checks, but the job does not fit without them");
    auto nodes = three_nodes();
    nodes[1].cordoned = true; // already out: only master would be left
    d = decide_restart({1, "any"}, rank_failed_on("worker2"), nodes, {"worker2"}, 2);
    CHECK(d.cordon.empty());
}

TEST_CASE("an interrupted job is not restarted") {
    ddl::runtime::LaunchResult r;
    r.exit_code = 130;
    r.message = "interrupted by Interrupt; stopped all ranks";
    CHECK_FALSE(decide_restart({3, "any"}, r, three_nodes(), {}, 0).restart);
}

TEST_CASE("on-node-fault: replace where the target can make a machine, else cordon; each when asked") {
    // The default follows the target.
    auto d = decide_restart({1, "any"}, rank_failed_on("worker2"), three_nodes(), {"worker2"}, 3, true);
    CHECK(d.restart);
    CHECK(d.replace == std::vector<std::string>{"worker2"});
    CHECK(d.cordon.empty());
    CHECK(d.why == "replacing worker2 (failing the health checks)");
    CHECK(node_fault_action({1, "any"}, true) == "replace");
    CHECK(node_fault_action({1, "any"}, false) == "cordon");
    d = decide_restart({1, "any"}, rank_failed_on("worker2"), three_nodes(), {"worker2"}, 2, false);
    CHECK(d.replace.empty());
    CHECK(d.cordon == std::vector<std::string>{"worker2"});
    // Asked for cordon on a target that could replace: cordoned.
    d = decide_restart({1, "any", "cordon"}, rank_failed_on("worker2"), three_nodes(), {"worker2"}, 2, true);
    CHECK(d.replace.empty());
    CHECK(d.cordon == std::vector<std::string>{"worker2"});
    // Nothing failing: nothing to replace.
    d = decide_restart({1, "any", "replace"}, rank_failed_on("worker2"), three_nodes(), {}, 3, true);
    CHECK(d.restart);
    CHECK(d.replace.empty());
}

TEST_CASE("on-node-fault shrink goes on with fewer ranks while --min-nodes are left") {
    auto d =
        decide_restart({1, "any", "shrink", 2}, rank_failed_on("worker2"), three_nodes(), {"worker2"}, 3);
    CHECK(d.restart);
    CHECK(d.cordon == std::vector<std::string>{"worker2"});
    CHECK(d.np == 2);
    CHECK(d.why == "cordoning worker2 (failing the health checks), going on with 2 node(s), 2 rank(s) "
                   "instead of 3");
    // Every slot (np 0) stays every slot of what is left.
    d = decide_restart({1, "any", "shrink", 2}, rank_failed_on("worker2"), three_nodes(), {"worker2"}, 0);
    CHECK(d.np == 0);
    // Fewer than --min-nodes left: not restarted.
    d = decide_restart({1, "any", "shrink", 3}, rank_failed_on("worker2"), three_nodes(), {"worker2"}, 3);
    CHECK_FALSE(d.restart);
    CHECK(d.why == "worker2 fail the health checks and 2 node(s) would be left, fewer than --min-nodes 3");
}

TEST_CASE(
    "on-node-fault spare: a ready spare takes the failing node's place, the default where there is one") {
    auto nodes = three_nodes();
    ddl::NodeState spare;
    spare.name = "worker3";
    spare.address = "10.0.0.14";
    spare.spare = true;
    nodes.push_back(spare);
    // The default with a ready spare: spare, even where the target could replace.
    auto d = decide_restart({1, "any"}, rank_failed_on("worker2"), nodes, {"worker2"}, 3, true);
    CHECK(d.restart);
    CHECK(d.swap == std::vector<std::pair<std::string, std::string>>{{"worker2", "worker3"}});
    CHECK(d.replace.empty());
    CHECK(d.cordon.empty());
    CHECK(d.why == "spare worker3 takes worker2's place (failing the health checks)");
    CHECK(node_fault_action({1, "any"}, true, true) == "spare");
    // A spare that fails the checks too is not taken: none ready, not restarted, the way out named.
    d = decide_restart({1, "any", "spare"}, rank_failed_on("worker2"), nodes, {"worker2", "worker3"}, 3,
                       true);
    CHECK_FALSE(d.restart);
    CHECK(d.why ==
          "worker2 fail the health checks and no spare is ready; `ddl deploy --replace NODE` makes a "
          "failed node anew");
    // Without a ready spare the default is what it was.
    nodes[3].cordoned = true; // out of service
    d = decide_restart({1, "any"}, rank_failed_on("worker2"), nodes, {"worker2"}, 3, true);
    CHECK(d.replace == std::vector<std::string>{"worker2"});
    // Never for the master: asked for, not restarted; by default, what the target can do instead.
    nodes[3].cordoned = false;
    nodes[0].group = "master";
    d = decide_restart({1, "any", "spare"}, rank_failed_on("10.0.0.11"), nodes, {"master"}, 0, true);
    CHECK_FALSE(d.restart);
    CHECK(d.why.find("a spare never takes the master's place") != std::string::npos);
    d = decide_restart({1, "any"}, rank_failed_on("10.0.0.11"), nodes, {"master"}, 0, true);
    CHECK(d.replace == std::vector<std::string>{"master"});
    // Fewer ready spares than failing nodes: by default, not the spare.
    d = decide_restart({1, "any"}, rank_failed_on("worker2"), nodes, {"worker1", "worker2"}, 0, true);
    CHECK(d.swap.empty());
    CHECK(d.replace == std::vector<std::string>{"worker1", "worker2"});
}
