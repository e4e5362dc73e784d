#include "provision/Configure.hpp"

#include "provision/NodeFiles.hpp"
#include "support/Rig.hpp"
#include "targets/Kinds.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

NodeState master_node() {
    NodeState m;
    m.name = "master";
    m.group = "master";
    m.address = "10.0.0.11";
    m.user = "root";
    return m;
}

} // namespace

TEST_CASE("the inventory has groups master, workers and gpu with the pinned known_hosts") {
    TempDir dir;
    StateStore store(dir.path());
    ClusterState st;
    st.cluster = "demo";
    NodeState m, w;
    m.name = "master";
    m.group = "master";
    m.address = "10.0.0.11";
    m.user = "root";
    w.name = "worker1";
    w.group = "workers";
    w.address = "10.0.0.12";
    w.user = "root";
    w.gpus = 1;
    w.key = "/keys/site_key";
    st.nodes = {m, w};
    SystemProcessRunner proc;
    test::FakeRemote remote;
    test::FakeProgress progress;
    Context ctx{Spec{}, st, store, proc, remote, progress, {}, nullptr};
    auto inv = render_inventory(ctx);
    CHECK(inv.find("    master:\n      hosts:\n        master:\n          ansible_host: \"10.0.0.11\"") !=
          std::string::npos);
    CHECK(inv.find("    gpu:\n      hosts:\n        worker1:") != std::string::npos);
    // A node with its own key (target ssh) logs in with it; the others use the cluster key.
    CHECK(inv.find("ansible_user: \"root\"\n          ansible_ssh_private_key_file: \"/keys/site_key\"") !=
          std::string::npos);
    CHECK(inv.find("UserKnownHostsFile=" + store.cluster_dir("demo") +
                   "/known_hosts -o StrictHostKeyChecking=yes") != std::string::npos);
    // mitogen's SSH compression off, as Ansible's own connection; OpenSSH's key exchange left as it is
    // for nodes that are machines of their own.
    CHECK(inv.find("    mitogen_ssh_compression: false\n") != std::string::npos);
    CHECK(inv.find("KexAlgorithms") == std::string::npos);
}

TEST_CASE("nodes on this machine (local target) are reached with the classical key exchange") {
    TempDir dir;
    StateStore store(dir.path());
    ClusterState st;
    st.cluster = "demo";
    st.nodes = {master_node()};
    auto spec =
        load_spec_string("apiVersion: ddl/v1\nname: demo\ntarget: local\nlocal:\n  nodes: 1\n", "c.yaml");
    REQUIRE(spec.spec.has_value());
    SystemProcessRunner proc;
    test::FakeRemote remote;
    test::FakeProgress progress;
    Context ctx{*spec.spec, st, store, proc, remote, progress, {}, nullptr};
    auto inv = render_inventory(ctx);
    CHECK(inv.find("IdentitiesOnly=yes -o KexAlgorithms=curve25519-sha256,curve25519-sha256@libssh.org\"") !=
          std::string::npos);
}

TEST_CASE("a node behind a bastion is reached through a ProxyCommand that pins the bastion's key too") {
    TempDir dir;
    StateStore store(dir.path());
    ClusterState st;
    st.cluster = "demo";
    NodeState m, w;
    m.name = "master";
    m.group = "master";
    m.address = "10.0.0.11";
    m.private_address = "172.16.0.11";
    m.user = "root";
    w.name = "worker1";
    w.group = "workers";
    w.address = "172.16.0.12";
    w.user = "root";
    w.jump = "master";
    st.nodes = {m, w};
    SystemProcessRunner proc;
    test::FakeRemote remote;
    test::FakeProgress progress;
    Context ctx{Spec{}, st, store, proc, remote, progress, {}, nullptr};
    auto inv = render_inventory(ctx);
    std::string kh = "UserKnownHostsFile=" + store.cluster_dir("demo") + "/known_hosts";
    auto worker = inv.substr(inv.find("        worker1:"));
    CHECK(worker.find("ProxyCommand=\\\"ssh -i " + store.cluster_dir("demo") + "/id_ed25519 -o " + kh) !=
          std::string::npos);
    CHECK(worker.find("-W [%h]:%p -l root 10.0.0.11\\\"") != std::string::npos);
    // Other nodes reach the master at its private address.
    CHECK(inv.find("ddl_cluster_address: \"172.16.0.11\"") != std::string::npos);
    // The master itself is reached directly.
    auto master = inv.substr(0, inv.find("    workers:"));
    CHECK(master.find("ProxyCommand") == std::string::npos);
}

TEST_CASE("a jump written as user@host:port parses, IPv6 in brackets included") {
    auto a = parse_jump_spec("ops@bastion.example.org:2222", "ubuntu");
    REQUIRE(a);
    CHECK(a->user == "ops");
    CHECK(a->host == "bastion.example.org");
    CHECK(a->port == 2222);
    auto b = parse_jump_spec("[2001:db8::1]:22", "ubuntu");
    REQUIRE(b);
    CHECK(b->user == "ubuntu");
    CHECK(b->host == "2001:db8::1");
    auto c = parse_jump_spec("2001:db8::1", "ubuntu");
    REQUIRE(c);
    CHECK(c->host == "2001:db8::1");
    CHECK(c->port == 22);
    CHECK_FALSE(parse_jump_spec("ops@host:99999", "u"));
    CHECK_FALSE(parse_jump_spec("ops@[::1", "u"));
    CHECK_FALSE(parse_jump_spec("@host", ""));
}

TEST_CASE("ansible's event lines give changes per host and the failed task with its message") {
    std::string out = R"({"event": "task", "role": "common", "task": "install x"}
{"changed": true, "event": "result", "host": "master", "msg": "", "role": "common", "status": "ok", "task": "install x"}
{"changed": false, "event": "result", "host": "worker1", "msg": "No package matching 'x'", "role": "common", "status": "failed", "task": "install x"}
{"event": "stats", "hosts": {"master": {"changed": 1, "failures": 0, "unreachable": 0}, "worker1": {"changed": 0, "failures": 1, "unreachable": 0}}}
)";
    auto s = parse_ansible_events(out);
    REQUIRE(s.ok());
    CHECK(s->changed["master"] == 1);
    CHECK(s->failures["worker1"] == 1);
    REQUIRE(s->failed_tasks.size() == 1);
    CHECK(s->failed_tasks[0] == "worker1: install x: No package matching 'x'");
}

TEST_CASE("output without ansible's final stats is an error") {
    CHECK_FALSE(parse_ansible_events("ERROR! oops\n").ok());
}

namespace {

// DDL_DATA_DIR and DDL_DIST_DIR pointed at a playbook and a runtime of the test's own.
struct ConfigureRig : test::ClusterRig {
    std::string data = dir.path() + "/data", dist = dir.path() + "/dist";
    ClusterState& st = state;
    // ansible-playbook answers with a final stats line: exit 0, or 2 with a failure when `fail`.
    void ansible(bool fail) {
        proc.forget_rules();
        proc.when("ansible-playbook",
                  {{fail ? 2 : 0,
                    R"({"event": "stats", "hosts": {"master": {"changed": 0, "failures": )" +
                        std::string(fail ? "1" : "0") + R"(, "unreachable": 0}}})" + "\n",
                    ""}});
    }
    int playbook_runs() const { return proc.count("ansible-playbook"); }
    ConfigureRig() {
        ansible(false);
        REQUIRE(make_dirs(data + "/playbooks/callback_plugins/__pycache__").ok());
        REQUIRE(make_dirs(dist + "/bin").ok());
        REQUIRE(write_file_atomic(data + "/playbooks/site.yml", "- hosts: all\n").ok());
        REQUIRE(write_file_atomic(dist + "/bin/ddl-launch-local", "v1").ok());
        ::setenv("DDL_DATA_DIR", data.c_str(), 1);
        ::setenv("DDL_DIST_DIR", dist.c_str(), 1);
        st.cluster = "demo";
        st.nodes = {master_node()};
        REQUIRE(make_dirs(store.cluster_dir("demo") + "/rendered/ansible").ok());
        REQUIRE(write_file_atomic(store.cluster_dir("demo") + "/rendered/ansible/vars.json", "{}").ok());
    }
    ~ConfigureRig() {
        ::unsetenv("DDL_DATA_DIR");
        ::unsetenv("DDL_DIST_DIR");
    }
    ConfigureRig(const ConfigureRig&) = delete;
    ConfigureRig& operator=(const ConfigureRig&) = delete;
    Result<AnsibleSummary> configure(bool force = false) {
        DeployOptions options;
        options.force_configure = force;
        auto c = ctx(options);
        return run_configure(c);
    }
};

} // namespace

TEST_CASE("configure runs Ansible again only when what it applies changed, or when forced") {
    ConfigureRig rig;
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 1);
    CHECK_FALSE(rig.st.nodes[0].configured_inputs.empty());

    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 1); // nothing changed: not run

    // Byte-code caches appear when Ansible loads the callback; they are not an input.
    REQUIRE(write_file_atomic(rig.data + "/playbooks/callback_plugins/__pycache__/x.pyc", "x").ok());
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 1);

    REQUIRE(rig.configure(true).ok());
    CHECK(rig.playbook_runs() == 2); // --force-configure

    REQUIRE(write_file_atomic(rig.data + "/playbooks/site.yml", "- hosts: all\n  tasks: []\n").ok());
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 3); // a playbook changed

    REQUIRE(write_file_atomic(rig.dist + "/bin/ddl-launch-local", "v2").ok());
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 4); // the runtime changed

    REQUIRE(write_file_atomic(rig.store.cluster_dir("demo") + "/rendered/ansible/vars.json",
                              R"({"ddl_nfs_enabled": false})")
                .ok());
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 5); // the spec's variables changed

    rig.st.nodes[0].address = "10.0.0.99";
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 6); // the node is reached elsewhere (inventory)

    NodeState w = rig.st.nodes[0];
    w.name = "worker1";
    w.group = "workers";
    w.configured_inputs.clear();
    rig.st.nodes.push_back(w);
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 7); // a node joined
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 7);
}

TEST_CASE("a failed configure leaves no node marked as configured, so the next one runs Ansible") {
    ConfigureRig rig;
    REQUIRE(rig.configure().ok());
    REQUIRE(write_file_atomic(rig.dist + "/bin/ddl-launch-local", "v2").ok());
    rig.ansible(true);
    CHECK_FALSE(rig.configure().ok());
    CHECK(rig.st.nodes[0].configured_inputs.empty());
    REQUIRE(write_file_atomic(rig.dist + "/bin/ddl-launch-local", "v1").ok()); // back to the applied runtime
    rig.ansible(false);
    REQUIRE(rig.configure().ok());
    CHECK(rig.playbook_runs() == 3);
}

TEST_CASE("configure writes each node's identity file before Ansible, and stops at a node it cannot write") {
    ConfigureRig rig;
    NodeState w = master_node();
    w.name = "worker1";
    w.group = "workers";
    w.address = "10.0.0.12";
    rig.st.nodes.push_back(w);
    REQUIRE(rig.configure().ok());
    // The script is in the command, the runtime archive on its input.
    const std::string& written = rig.remote.commands["10.0.0.12"];
    CHECK(written.find("echo /etc/ddl/node.env;") != std::string::npos);
    CHECK(written.find("tar --compare") != std::string::npos);
    CHECK(rig.remote.inputs["10.0.0.12"].find("./bin/ddl-launch-local") != std::string::npos);
    CHECK(written.find("DDL_NODE=worker1\nDDL_MASTER_ADDR=10.0.0.11\nDDL_MASTER_PORT=29500\n") !=
          std::string::npos);
    CHECK(written.find("DDL_STATE_DIR=" + rig.store.cluster_dir("demo") + "\n") != std::string::npos);

    rig.remote.sudo_refuses = {"10.0.0.12"};
    auto r = rig.configure(true);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(
              "cannot write /etc/ddl/node.env or unpack the runtime into /opt/ddl on worker1: "
              "exit 1: sudo: a password is required (log in as root, or give the login user sudo without a "
              "password)") != std::string::npos);
    CHECK(rig.playbook_runs() == 1); // Ansible did not run
    CHECK(rig.st.nodes[1].configured_inputs.empty());
}

TEST_CASE(
    "node.env names the hostfiles' first node as master: a worker when the probe left the master no slots") {
    ConfigureRig rig;
    NodeState w = master_node();
    w.name = "worker1";
    w.group = "workers";
    w.address = "10.0.0.12";
    rig.st.nodes.push_back(w);
    auto c = rig.ctx(DeployOptions{});
    CHECK(node_env(c, rig.st.nodes[1]).find("\nDDL_MASTER_ADDR=10.0.0.11\nDDL_MASTER_PORT=29500\n") !=
          std::string::npos);
    rig.st.nodes[0].slots = 0; // a GPU-less master beside GPU workers: in no hostfile
    rig.st.nodes[1].slots = 4;
    CHECK(node_env(c, rig.st.nodes[1]).find("\nDDL_MASTER_ADDR=10.0.0.12\n") != std::string::npos);
    rig.st.nodes[1].slots = 0;
    CHECK(node_env(c, rig.st.nodes[1]).find("\nDDL_MASTER_ADDR=10.0.0.11\n") != std::string::npos);
}
