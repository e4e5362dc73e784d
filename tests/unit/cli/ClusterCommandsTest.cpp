// Commands on an existing cluster through the real binary, with stand-ins for OpenSSH and srun on PATH
// that print what they were given: the command lines ddl hands over, the messages and exit codes.
#include "state/StateStore.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>

using namespace ddl;

namespace {

const std::string k_ddl = std::string(DDL_BINARY_DIR) + "/src/ddl";

// A state folder with clusters in it, and a bin/ folder whose ssh and srun print their arguments one per
// line (srun also FOO and DDL_MASTER_ADDR).
class Clusters {
public:
    Clusters() {
        REQUIRE(make_dirs(bin(), 0755).ok());
        for (const auto* tool : {"ssh", "srun"})
            REQUIRE(write_file_atomic(bin() + "/" + tool,
                                      std::string("#!/bin/sh\necho ") + tool +
                                          "\nfor a in \"$@\"; do echo \"$a\"; done\n"
                                          "echo \"FOO=$FOO\"\necho \"DDL_MASTER_ADDR=$DDL_MASTER_ADDR\"\n",
                                      0755)
                        .ok());
    }

    std::string state() const { return m_dir.path() + "/state"; }
    std::string bin() const { return m_dir.path() + "/bin"; }

    void add(const std::string& name, const std::string& target, const std::string& spec_body,
             std::vector<NodeState> nodes, nlohmann::json target_data = nlohmann::json::object()) const {
        StateStore store(state());
        ClusterState st;
        st.cluster = name;
        st.target = target;
        st.spec_text = "apiVersion: ddl/v1\nname: " + name + "\ntarget: " + target + "\n" + spec_body;
        st.jupyter_token = "token-of-" + name;
        for (const auto* p :
             {"validate", "render", "provision", "wait-ssh", "configure", "probe", "hostfile"})
            st.mark_done(p, "2026-01-01T00:00:00Z");
        st.nodes = std::move(nodes);
        st.target_data = std::move(target_data);
        REQUIRE(store.ensure_cluster_dir(name).ok());
        REQUIRE(store.save(st).ok());
    }

    ProcessResult ddl(std::vector<std::string> args) const {
        args.insert(args.begin(), {k_ddl, "--state-dir", state()});
        const char* path = std::getenv("PATH");
        SystemProcessRunner runner;
        auto r = runner.run({.argv = args,
                             .cwd = m_dir.path(),
                             .env_set = {{"PATH", bin() + ":" + (path ? path : "/usr/bin:/bin")},
                                         {"FOO", "from-the-shell"}}});
        REQUIRE(r.ok());
        return *r;
    }

private:
    TempDir m_dir;
};

NodeState node(const std::string& name, const std::string& address, const std::string& jump = "") {
    NodeState n;
    n.name = name;
    n.group = name == "master" ? "master" : "workers";
    n.address = address;
    n.port = 2222;
    n.user = "root";
    n.jump = jump;
    n.probed = true;
    return n;
}

// Container nodes: Jupyter is refused on namespace nodes, which never get it.
const std::string k_local_spec =
    "local:\n  nodes: 2\n  nodes_as: containers\nservices:\n  jupyter: {enabled: true}\n";
const std::string k_slurm_spec = "slurm:\n  partition: gpu\n  nodes: 2\n  gpus_per_node: 4\n";

} // namespace

TEST_CASE("ddl ssh hands OpenSSH the cluster's key, its pinned known_hosts and the node's jump host") {
    Clusters c;
    c.add("t1", "local", k_local_spec, {node("master", "127.0.0.1"), node("worker1", "127.0.0.2", "master")});
    auto r = c.ddl({"ssh", "--cluster", "t1", "worker1", "--", "ls", "-l"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    auto lines = split_lines(r.out);
    const std::string dir = c.state() + "/t1";
    const std::vector<std::string> head{"ssh",
                                        "-i",
                                        dir + "/id_ed25519",
                                        "-o",
                                        "IdentitiesOnly=yes",
                                        "-o",
                                        "UserKnownHostsFile=" + dir + "/known_hosts",
                                        "-o",
                                        "StrictHostKeyChecking=yes",
                                        "-p",
                                        "2222",
                                        "-l",
                                        "root",
                                        "-o"};
    REQUIRE(lines.size() >= head.size() + 5);
    CHECK(std::vector<std::string>(lines.begin(), lines.begin() + static_cast<long>(head.size())) == head);
    CHECK(
        starts_with(lines[head.size()], "ProxyCommand=ssh -i " + dir + "/id_ed25519 -o UserKnownHostsFile="));
    CHECK(lines[head.size() + 1] == "127.0.0.2");
    CHECK(lines[head.size() + 2] == "--");
    CHECK(lines[head.size() + 3] == "ls");
    CHECK(lines[head.size() + 4] == "-l");
}

TEST_CASE("ddl tunnel prints the Jupyter URL with the cluster's token and forwards the port with OpenSSH") {
    Clusters c;
    c.add("t1", "local", k_local_spec, {node("master", "127.0.0.1"), node("worker1", "127.0.0.2", "master")});
    auto r = c.ddl({"tunnel", "--cluster", "t1", "jupyter", "--local-port", "9999"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(starts_with(r.out, "jupyter on master: http://127.0.0.1:9999/lab?token=token-of-t1\n"
                             "(Ctrl-C closes the tunnel)\nssh\n"));
    CHECK(r.out.find("\n-N\n-o\nExitOnForwardFailure=yes\n-L\n127.0.0.1:9999:127.0.0.1:8888\n127.0.0.1\n") !=
          std::string::npos);
    auto none = c.ddl({"tunnel", "--cluster", "t1", "grafana"});
    CHECK(none.exit_code == 2);
    CHECK(none.err == "ddl tunnel: cluster t1 has no monitoring\n"
                      "hint: set services.monitoring: true and run ddl deploy again\n");
}

TEST_CASE("ddl exec, ssh and tunnel on a slurm cluster say to use ddl run instead") {
    Clusters c;
    c.add("hpc", "slurm", k_slurm_spec, {node("gpu001", "gpu001"), node("gpu002", "gpu002")});
    for (const auto& [cmd, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"exec", {"exec", "--cluster", "hpc", "--", "true"}},
             {"ssh", {"ssh", "--cluster", "hpc", "gpu001"}},
             {"tunnel", {"tunnel", "--cluster", "hpc", "8080"}}}) {
        auto r = c.ddl(args);
        INFO(cmd);
        CHECK(r.exit_code == 2);
        CHECK(r.err ==
              "ddl " + cmd + ": ddl " + cmd +
                  " works over SSH, which a Slurm facility's nodes do not offer ddl; on a slurm cluster "
                  "use `ddl run -- PROG` (an srun step of the job)\n");
    }
}

TEST_CASE("ddl run on a slurm cluster becomes an srun step of the job, with the -x variables") {
    Clusters c;
    c.add("hpc", "slurm", k_slurm_spec, {node("gpu001", "gpu001"), node("gpu002", "gpu002")},
          {{"job_id", "4242"}});
    auto r = c.ddl({"run", "--cluster", "hpc", "-np", "8", "-x", "FOO", "--", "prog", "a b"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out ==
          "srun\n--jobid=4242\n--overlap\n--nodes=2\n--ntasks=8\n--kill-on-bad-exit=1\n--export=ALL\n"
          "prog\na b\nFOO=from-the-shell\nDDL_MASTER_ADDR=gpu001\n");
    auto hosts = c.ddl({"run", "--cluster", "hpc", "--iface", "eth0", "--", "prog"});
    CHECK(hosts.exit_code == 2);
    CHECK(hosts.err ==
          "ddl run: on a slurm cluster the job's allocation decides the hosts; only -np and -x apply\n");
}

TEST_CASE("ddl exec and ddl run without a command after -- are bad input, before any cluster is opened") {
    Clusters c;
    for (const auto* cmd : {"exec", "run"}) {
        auto r = c.ddl({cmd, "--cluster", "none"});
        CHECK(r.exit_code == 2);
        CHECK(r.err == std::string("ddl: give the command after --, e.g. ddl ") + cmd + " -- hostname\n");
    }
}

TEST_CASE("ddl destroy removes a state folder left without state.json, and names the nearest cluster for a "
          "typo") {
    Clusters c;
    c.add("t1", "local", k_local_spec, {node("master", "127.0.0.1")});
    REQUIRE(make_dirs(c.state() + "/half-made", 0700).ok());
    auto left = c.ddl({"destroy", "half-made"});
    CHECK(left.exit_code == 0);
    CHECK(left.out == "cluster half-made: removed a state folder without state.json (left by an interrupted "
                      "command; nothing had been created)\n");
    CHECK_FALSE(path_exists(c.state() + "/half-made"));
    auto typo = c.ddl({"destroy", "t2"});
    CHECK(typo.exit_code == 2);
    CHECK(typo.err == "ddl destroy: no cluster named t2 in " + c.state() +
                          "; did you mean t1?\n  clusters there: t1 (`ddl list`)\n");
}

TEST_CASE("status and list show when a GPULab cluster's jobs end, and run warns within lease_warn_minutes") {
    Clusters c;
    const std::time_t soon = std::time(nullptr) + 10 * 60 + 30;
    std::tm tm{};
    gmtime_r(&soon, &tm);
    char iso[32], shown[32];
    std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
    std::strftime(shown, sizeof shown, "%Y-%m-%dT%H:%M:%SZ (in ", &tm);
    const std::string gl = "nodes:\n  master: {gpus: 1}\ngpulab:\n  project: p\n  docker_image: img:1\n";
    c.add("gl", "gpulab", gl, {node("master", "127.0.0.1")},
          {{"jobs", {{"master", "j1"}}}, {"lease_end", iso}});
    c.add("lo", "local", k_local_spec, {node("master", "10.0.0.1")});

    auto st = c.ddl({"status", "gl"});
    CHECK(st.exit_code == 0);
    CHECK(st.out.find(std::string("\nlease ends ") + shown) != std::string::npos);
    auto js = c.ddl({"--output", "json", "status", "gl"});
    CHECK(nlohmann::json::parse(js.out)["lease_end"] == iso);
    auto none = c.ddl({"--output", "json", "status", "lo"});
    CHECK(nlohmann::json::parse(none.out)["lease_end"].is_null());

    auto ls = c.ddl({"list"});
    CHECK(ls.out.find("LEASE LEFT") != std::string::npos);
    const auto gl_row = ls.out.substr(ls.out.find("\ngl "));
    CHECK(gl_row.substr(0, gl_row.find('\n', 1)).back() == 'm'); // the time left, in minutes
    auto lj = nlohmann::json::parse(c.ddl({"--output", "json", "list"}).out);
    CHECK(lj[0]["lease_end"] == iso);
    CHECK(lj[1]["lease_end"].is_null());

    auto run = c.ddl({"run", "--cluster", "gl", "-np", "1", "--", "true"});
    CHECK(run.err.find("the gpulab nodes of cluster gl: lease ends ") != std::string::npos);
    CHECK(run.err.find("within runtime.lease_warn_minutes (30)") != std::string::npos);
    c.add("gl", "gpulab", gl + "runtime:\n  lease_warn_minutes: 5\n", {node("master", "127.0.0.1")},
          {{"jobs", {{"master", "j1"}}}, {"lease_end", iso}});
    auto quiet = c.ddl({"run", "--cluster", "gl", "-np", "1", "--", "true"});
    CHECK(quiet.err.find("lease on cluster") == std::string::npos);
}

TEST_CASE(
    "a stopped cluster: status and list say so, commands that need its nodes are refused with ddl start") {
    Clusters c;
    const std::string os = "nodes:\n  master: {flavor: m1.small}\naccess:\n  allowed_cidrs: [10.0.0.0/8]\n"
                           "openstack:\n  cloud: c\n  image: ubuntu\n  external_network: public\n";
    c.add("os", "openstack", os, {node("master", "127.0.0.1")});
    StateStore store(c.state());
    auto st = store.load("os");
    REQUIRE(st.ok());
    st->stopped_at = "2026-11-27T16:00:00Z";
    REQUIRE(store.save(*st).ok());

    const std::vector<std::vector<std::string>> refused{{"run", "--cluster", "os", "--", "true"},
                                                        {"exec", "--cluster", "os", "--", "true"},
                                                        {"bench", "allreduce", "--cluster", "os"}};
    for (const auto& args : refused) {
        auto r = c.ddl(args);
        INFO(args[0] << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("cluster os is stopped (since 2026-11-27T16:00:00Z)\nhint: ddl start os") !=
              std::string::npos);
    }
    auto status = c.ddl({"status", "os"});
    INFO(status.err);
    CHECK(status.exit_code == 0);
    CHECK(status.out.find("\nstopped since 2026-11-27T16:00:00Z (`ddl start os` boots it again)") !=
          std::string::npos);
    CHECK(status.out.find(" stopped ") != std::string::npos); // the nodes' SSH column: not asked
    CHECK(nlohmann::json::parse(c.ddl({"--output", "json", "status", "os"}).out)["power"] == "stopped");
    const auto list = c.ddl({"list"}).out;
    const auto row = list.substr(list.find("\nos "));
    CHECK(row.substr(0, row.find('\n', 1)).find(" stopped ") != std::string::npos);
    auto again = c.ddl({"stop", "-y", "os"});
    CHECK(again.exit_code == 0);
    CHECK(again.out.find("cluster os is already stopped") != std::string::npos);
}

TEST_CASE("ddl stop on a target that cannot stop its machines is refused, naming why; start of a running one "
          "does nothing") {
    Clusters c;
    c.add("lo", "local", k_local_spec, {node("master", "10.0.0.1")});
    auto r = c.ddl({"stop", "-y", "lo"});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("cluster lo cannot stop: target local: ") != std::string::npos);
    CHECK(r.err.find("hint: `ddl destroy lo` ends it") != std::string::npos);
    auto start = c.ddl({"start", "lo"});
    CHECK(start.exit_code == 0);
    CHECK(start.out.find("cluster lo is not stopped; nothing to start") != std::string::npos);
}
