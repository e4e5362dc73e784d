#include <catch2/catch.hpp>

#include "provision/Configure.hpp"
#include "util/Files.hpp"
#include "Fakes.hpp"

using namespace ddl;

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
    st.nodes = {m, w};
    SystemProcessRunner proc;
    test::FakeRemote remote;
    test::FakeProgress progress;
    Context ctx{Spec{}, st, store, proc, remote, progress, {}, nullptr};
    auto inv = render_inventory(ctx);
    CHECK(inv.find("    master:\n      hosts:\n        master:\n          ansible_host: \"10.0.0.11\"") != std::string::npos);
    CHECK(inv.find("    gpu:\n      hosts:\n        worker1:") != std::string::npos);
    CHECK(inv.find("UserKnownHostsFile=" + store.cluster_dir("demo") + "/known_hosts -o StrictHostKeyChecking=yes") !=
          std::string::npos);
}

TEST_CASE("ansible's JSON result gives changes per host and the failed task with its message") {
    std::string out = R"({"plays": [{"tasks": [{"task": {"name": "install x"}, "hosts": {
        "master": {"changed": true}, "worker1": {"failed": true, "msg": "No package matching 'x'"}}}]}],
        "stats": {"master": {"changed": 1, "failures": 0, "unreachable": 0},
                  "worker1": {"changed": 0, "failures": 1, "unreachable": 0}}})";
    auto s = parse_ansible_json(out);
    REQUIRE(s.ok());
    CHECK(s->changed["master"] == 1);
    CHECK(s->failures["worker1"] == 1);
    REQUIRE(s->failed_tasks.size() == 1);
    CHECK(s->failed_tasks[0] == "worker1: install x: No package matching 'x'");
}

TEST_CASE("output that is not ansible JSON is an error") { CHECK_FALSE(parse_ansible_json("ERROR! oops").ok()); }
