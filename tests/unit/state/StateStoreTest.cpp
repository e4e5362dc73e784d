#include "state/StateStore.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ddl;

TEST_CASE("state round-trips through state.json with mode 0600") {
    TempDir dir;
    StateStore store(dir.path());
    ClusterState s;
    s.cluster = "demo";
    s.target = "local";
    s.mark_done("render", "2026-01-01T00:00:00Z");
    NodeState n;
    n.name = "master";
    n.address = "10.0.0.11";
    n.gpus = 2;
    n.gpu_names = {"A", "B"};
    n.jump = "proxyuser@proxy.example:2222";
    n.jump_key = "/keys/login.pem";
    n.cordoned = true;
    s.nodes.push_back(n);
    REQUIRE(store.save(s).ok());
    struct stat st {};
    REQUIRE(stat((dir.path() + "/demo/state.json").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    REQUIRE(stat((dir.path() + "/demo").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    auto loaded = store.load("demo");
    REQUIRE(loaded.ok());
    CHECK(loaded->to_json() == s.to_json());
    CHECK(loaded->nodes[0].jump_key == "/keys/login.pem");
    CHECK(loaded->nodes[0].cordoned);
    CHECK(loaded->phase_done("render"));
    CHECK_FALSE(loaded->phase_done("provision"));
    CHECK(store.clusters() == std::vector<std::string>{"demo"});
}

TEST_CASE("a stopped cluster's spell round-trips, and a running one writes no stopped keys") {
    TempDir dir;
    StateStore store(dir.path());
    ClusterState s;
    s.cluster = "demo";
    s.target = "openstack";
    CHECK_FALSE(s.stopped());
    CHECK_FALSE(s.to_json().contains("stopped_at"));
    CHECK_FALSE(s.to_json().contains("stopped_s"));
    s.stopped_at = "2026-11-27T16:00:00Z";
    s.stopped_s = 1800;
    REQUIRE(store.save(s).ok());
    auto loaded = store.load("demo");
    REQUIRE(loaded.ok());
    CHECK(loaded->stopped());
    CHECK(loaded->stopped_at == "2026-11-27T16:00:00Z");
    CHECK(loaded->stopped_s == 1800);
}

TEST_CASE("a state file from another schema version is refused with the versions named") {
    TempDir dir;
    StateStore store(dir.path());
    REQUIRE(store.ensure_cluster_dir("old").ok());
    REQUIRE(write_file_atomic(
                dir.path() + "/old/state.json",
                R"({"schema_version": 99, "cluster": "old", "target": "local", "phases": {}, "nodes": []})")
                .ok());
    auto r = store.load("old");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("version 99") != std::string::npos);
}

TEST_CASE("a corrupt state file is reported, not crashed on") {
    TempDir dir;
    StateStore store(dir.path());
    REQUIRE(store.ensure_cluster_dir("bad").ok());
    REQUIRE(write_file_atomic(dir.path() + "/bad/state.json", "{not json").ok());
    CHECK_FALSE(store.load("bad").ok());
}

TEST_CASE("a second lock on one cluster is refused and names the holder") {
    TempDir dir;
    StateStore store(dir.path());
    REQUIRE(store.ensure_cluster_dir("demo").ok());
    auto first = ClusterLock::acquire(store.cluster_dir("demo"), "ddl deploy a.yaml");
    REQUIRE(first.ok());
    // flock is per open file description: a child process shows what a second ddl would see.
    pid_t pid = fork();
    if (pid == 0) {
        auto second = ClusterLock::acquire(store.cluster_dir("demo"), "ddl destroy");
        _exit(!second.ok() && second.error().message.find("ddl deploy a.yaml") != std::string::npos ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a lock held by a process that died is taken over") {
    TempDir dir;
    StateStore store(dir.path());
    REQUIRE(store.ensure_cluster_dir("demo").ok());
    pid_t pid = fork();
    if (pid == 0) {
        auto held = ClusterLock::acquire(store.cluster_dir("demo"), "doomed");
        _exit(held.ok() ? 0 : 1); // dies holding the lock
    }
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WEXITSTATUS(status) == 0);
    CHECK(ClusterLock::acquire(store.cluster_dir("demo"), "next").ok());
}

TEST_CASE("reset_phases_from forgets the named phase and everything after it") {
    ClusterState s;
    for (const auto* p : {"render", "provision", "wait-ssh"})
        s.mark_done(p, "t");
    s.reset_phases_from({"render", "provision", "wait-ssh"}, "provision");
    CHECK(s.phase_done("render"));
    CHECK_FALSE(s.phase_done("provision"));
    CHECK_FALSE(s.phase_done("wait-ssh"));
}

TEST_CASE("taking the lock removes temp files a killed holder left between write and rename") {
    TempDir dir;
    StateStore store(dir.path());
    REQUIRE(store.ensure_cluster_dir("demo").ok());
    REQUIRE(make_dirs(store.cluster_dir("demo") + "/nodes/master").ok());
    REQUIRE(write_file_atomic(store.cluster_dir("demo") + "/.state.json.tmpAbC123", "{\"half").ok());
    REQUIRE(write_file_atomic(store.cluster_dir("demo") + "/nodes/master/.hosts.tmpXyZ789", "10.").ok());
    REQUIRE(write_file_atomic(store.cluster_dir("demo") + "/.keep.tmp", "not ours").ok());
    auto lock = ClusterLock::acquire(store.cluster_dir("demo"), "ddl deploy");
    REQUIRE(lock.ok());
    CHECK_FALSE(path_exists(store.cluster_dir("demo") + "/.state.json.tmpAbC123"));
    CHECK_FALSE(path_exists(store.cluster_dir("demo") + "/nodes/master/.hosts.tmpXyZ789"));
    CHECK(path_exists(store.cluster_dir("demo") + "/.keep.tmp"));
}

TEST_CASE("a cluster folder without state.json is a leftover, and remove takes the whole folder") {
    TempDir dir;
    StateStore store(dir.path());
    ClusterState s;
    s.cluster = "demo";
    s.target = "local";
    REQUIRE(store.save(s).ok());
    REQUIRE(write_file_atomic(store.cluster_dir("demo") + "/hostfile", "x slots=1\n").ok());
    CHECK_FALSE(store.leftover("demo"));
    CHECK_FALSE(store.leftover("absent"));
    REQUIRE(unlink((store.cluster_dir("demo") + "/state.json").c_str()) == 0);
    CHECK(store.leftover("demo"));
    REQUIRE(store.remove("demo").ok());
    CHECK_FALSE(path_exists(store.cluster_dir("demo")));
}
