#include "runtime/NodeEnv.hpp"

#include "EnvOf.hpp"
#include "runtime/CommOptions.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace ddl::runtime;
using ddl::runtime::test::env_of;

namespace {

// As provision/NodeFiles.cpp node_env writes it.
const std::string k_node_env = "# Written by ddl at configure.\n"
                               "DDL_CLUSTER=lab\nDDL_NODE=worker2\nDDL_MASTER_ADDR=10.0.0.11\n"
                               "DDL_MASTER_PORT=29600\n# state\nDDL_STATE_DIR=/home/u/.ddl/lab\n";

// Hydra's variables of a 4-rank job.
std::map<std::string, std::string> hydra_with(const std::string& node_env_path) {
    return {{"PMI_RANK", "2"},        {"PMI_SIZE", "4"},        {"PMI_FD", "6"},
            {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "1"}, {"DDL_NODE_ENV", node_env_path}};
}

} // namespace

TEST_CASE("node.env is KEY=VALUE lines with comments, blank lines and optional quotes") {
    auto env = parse_node_env(k_node_env + "\n  QUOTED=\"a b\"\nSINGLE='x'\nEMPTY=\n", "/etc/ddl/node.env");
    REQUIRE(env.ok());
    REQUIRE(env->find("DDL_MASTER_ADDR") != nullptr);
    CHECK(env->find("DDL_MASTER_ADDR")->value == "10.0.0.11");
    CHECK(env->find("DDL_MASTER_ADDR")->line == 4);
    CHECK(env->find("DDL_STATE_DIR")->value == "/home/u/.ddl/lab");
    CHECK(env->find("QUOTED")->value == "a b");
    CHECK(env->find("SINGLE")->value == "x");
    CHECK(env->find("EMPTY") == nullptr);
    CHECK(env->find("MISSING") == nullptr);
}

TEST_CASE("a node.env line that is not KEY=VALUE is an error at its path and line") {
    auto env = parse_node_env("DDL_NODE=a\nthis is not it\n", "/etc/ddl/node.env");
    REQUIRE_FALSE(env.ok());
    CHECK(env.error().message.rfind("/etc/ddl/node.env:2: not a KEY=VALUE line: 'this is not it'", 0) == 0);
    CHECK_FALSE(parse_node_env("1X=2\n", "f").ok());
    CHECK_FALSE(parse_node_env("=2\n", "f").ok());
}

TEST_CASE("a missing node.env is no file, not an error") {
    ddl::TempDir dir;
    auto none = read_node_env(dir.path() + "/node.env");
    REQUIRE(none.ok());
    CHECK_FALSE(none->has_value());
    REQUIRE(ddl::write_file_atomic(dir.path() + "/node.env", k_node_env, 0644).ok());
    auto some = read_node_env(dir.path() + "/node.env");
    REQUIRE(some.ok());
    REQUIRE(some->has_value());
    CHECK((*some)->path == dir.path() + "/node.env");
}

TEST_CASE("without a launcher's master, a job of several ranks takes node.env's address and port") {
    ddl::TempDir dir;
    const std::string path = dir.path() + "/node.env";
    REQUIRE(ddl::write_file_atomic(path, k_node_env, 0644).ok());
    auto o = comm_options_from_env(env_of(hydra_with(path)));
    REQUIRE(o.ok());
    CHECK(o->master_addr == "10.0.0.11");
    CHECK(o->master_port == 29600);
    CHECK(o->rank == 2);
    CHECK(o->size == 4);
}

TEST_CASE("launchers' master variables come before node.env, each of address and port on its own") {
    ddl::TempDir dir;
    const std::string path = dir.path() + "/node.env";
    REQUIRE(ddl::write_file_atomic(path, k_node_env, 0644).ok());
    auto env = hydra_with(path);
    env["MASTER_ADDR"] = "head";
    auto addr = comm_options_from_env(env_of(env));
    REQUIRE(addr.ok());
    CHECK(addr->master_addr == "head");
    CHECK(addr->master_port == 29600);
    env.erase("MASTER_ADDR");
    env["DDL_MASTER_PORT"] = "4000";
    auto port = comm_options_from_env(env_of(env));
    REQUIRE(port.ok());
    CHECK(port->master_addr == "10.0.0.11");
    CHECK(port->master_port == 4000);
    // Under srun the step's first node is where rank 0 runs: it wins over node.env's master.
    auto srun = comm_options_from_env(env_of({{"SLURM_PROCID", "1"},
                                              {"SLURM_NTASKS", "2"},
                                              {"SLURM_STEP_NODELIST", "gpu[03-04]"},
                                              {"DDL_NODE_ENV", path}}));
    REQUIRE(srun.ok());
    CHECK(srun->master_addr == "gpu03");
    CHECK(srun->master_port == 29600);
}

TEST_CASE("node.env is not read for a job of one, nor when DDL_NODE_ENV is empty or names no file") {
    ddl::TempDir dir;
    const std::string path = dir.path() + "/node.env";
    REQUIRE(ddl::write_file_atomic(path, k_node_env, 0644).ok());
    auto one = comm_options_from_env(env_of({{"DDL_NODE_ENV", path}}));
    REQUIRE(one.ok());
    CHECK(one->master_addr == "127.0.0.1");
    CHECK(one->master_port == 29500);
    for (const std::string& none : {std::string(), dir.path() + "/absent"}) {
        auto o = comm_options_from_env(env_of(hydra_with(none)));
        REQUIRE(o.ok());
        CHECK(o->master_addr == "127.0.0.1");
        CHECK(o->master_port == 29500);
    }
}

TEST_CASE("a bad port or line in node.env fails the job naming the file and line") {
    ddl::TempDir dir;
    const std::string path = dir.path() + "/node.env";
    REQUIRE(ddl::write_file_atomic(path, "DDL_MASTER_ADDR=m\nDDL_MASTER_PORT=http\n", 0644).ok());
    auto port = comm_options_from_env(env_of(hydra_with(path)));
    REQUIRE_FALSE(port.ok());
    CHECK(port.error().message == path + ":2: DDL_MASTER_PORT='http' is not a port (1-65535)");
    REQUIRE(ddl::write_file_atomic(path, "DDL_MASTER_ADDR m\n", 0644).ok());
    auto line = comm_options_from_env(env_of(hydra_with(path)));
    REQUIRE_FALSE(line.ok());
    CHECK(line.error().message.rfind(path + ":1: not a KEY=VALUE line", 0) == 0);
}
