#include "runtime/SlurmHostlist.hpp"

#include "EnvOf.hpp"
#include "runtime/CommOptions.hpp"

#include <catch2/catch.hpp>
#include <map>

using namespace ddl::runtime;
using ddl::runtime::test::env_of;
using Hosts = std::vector<std::string>;

TEST_CASE("a Slurm host list expands ranges and lists, keeping zero padding") {
    CHECK(*expand_slurm_hostlist("node[1-4]") == Hosts{"node1", "node2", "node3", "node4"});
    CHECK(*expand_slurm_hostlist("gpu[01-03,7],login") == Hosts{"gpu01", "gpu02", "gpu03", "gpu7", "login"});
    CHECK(*expand_slurm_hostlist("master,worker[1-2]") == Hosts{"master", "worker1", "worker2"});
    CHECK(*expand_slurm_hostlist("r[1-2]n[08-09]") == Hosts{"r1n08", "r1n09", "r2n08", "r2n09"});
    CHECK(*expand_slurm_hostlist("single") == Hosts{"single"});
    CHECK(*expand_slurm_hostlist("n[098-100]") == Hosts{"n098", "n099", "n100"});
}

TEST_CASE("a malformed Slurm host list is an error naming the bad part") {
    for (const char* bad : {"", "node[1-", "node1]", "node[a-b]", "node[4-1]", "a,,b", "node[1,]"}) {
        INFO(bad);
        auto r = expand_slurm_hostlist(bad);
        CHECK_FALSE(r.ok());
    }
    CHECK(expand_slurm_hostlist("node[4-1]").error().message.find("\"4-1\"") != std::string::npos);
}

TEST_CASE("tasks per node are found at the node's index in the step's list") {
    CHECK(slurm_tasks_on_node("4", 0) == 4);
    CHECK(slurm_tasks_on_node("2(x3),1", 0) == 2);
    CHECK(slurm_tasks_on_node("2(x3),1", 2) == 2);
    CHECK(slurm_tasks_on_node("2(x3),1", 3) == 1);
    CHECK_FALSE(slurm_tasks_on_node("2(x3),1", 4).has_value());
    CHECK_FALSE(slurm_tasks_on_node("2(3)", 0).has_value());
    CHECK_FALSE(slurm_tasks_on_node("x", 0).has_value());
}

TEST_CASE("srun's variables give rank, size, local size and the master without MASTER_ADDR") {
    auto o = comm_options_from_env(env_of({{"SLURM_PROCID", "5"},
                                           {"SLURM_NTASKS", "7"},
                                           {"SLURM_LOCALID", "1"},
                                           {"SLURM_NODEID", "2"},
                                           {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"},
                                           {"SLURM_STEP_NODELIST", "gpu[07-10]"},
                                           {"SLURM_JOB_NODELIST", "gpu[01-10]"}}));
    REQUIRE(o.ok());
    CHECK(o->rank == 5);
    CHECK(o->size == 7);
    CHECK(o->local_rank == 1);
    CHECK(o->local_size == 2);
    CHECK(o->master_addr == "gpu07");
    CHECK(o->master_port == 29500);
}

TEST_CASE("under srun an explicit master address wins over the node list") {
    auto o = comm_options_from_env(env_of({{"SLURM_PROCID", "0"},
                                           {"SLURM_NTASKS", "2"},
                                           {"SLURM_JOB_NODELIST", "n[1-2]"},
                                           {"MASTER_ADDR", "10.0.0.5"},
                                           {"MASTER_PORT", "29600"}}));
    REQUIRE(o.ok());
    CHECK(o->master_addr == "10.0.0.5");
    CHECK(o->master_port == 29600);
}

TEST_CASE("under srun a bad node list or tasks-per-node list is reported by name") {
    auto bad = comm_options_from_env(
        env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "n[1-"}}));
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("SLURM_JOB_NODELIST") != std::string::npos);
    auto none = comm_options_from_env(env_of({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}}));
    REQUIRE(none.ok()); // hand-set variables without a node list: the default master, as for the others
    CHECK(none->master_addr == "127.0.0.1");
    auto short_list = comm_options_from_env(env_of({{"SLURM_PROCID", "1"},
                                                    {"SLURM_NTASKS", "2"},
                                                    {"SLURM_NODEID", "3"},
                                                    {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
                                                    {"SLURM_JOB_NODELIST", "n[1-2]"}}));
    REQUIRE_FALSE(short_list.ok());
    CHECK(short_list.error().message.find("SLURM_STEP_TASKS_PER_NODE='1(x2)'") != std::string::npos);
}

TEST_CASE("DDL variables set by ddl run win over Slurm's inside an allocation") {
    auto o = comm_options_from_env(env_of({{"DDL_RANK", "1"},
                                           {"DDL_SIZE", "2"},
                                           {"SLURM_PROCID", "0"},
                                           {"SLURM_NTASKS", "1"},
                                           {"SLURM_JOB_NODELIST", "n1"}}));
    REQUIRE(o.ok());
    CHECK(o->rank == 1);
    CHECK(o->master_addr == "127.0.0.1");
}
