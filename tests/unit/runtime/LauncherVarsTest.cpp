#include "runtime/LauncherVars.hpp"

#include "EnvOf.hpp"
#include "runtime/CommOptions.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace ddl::runtime;
using ddl::runtime::test::env_of;

namespace {

// What MPICH 4.0's Hydra gave the second of two processes on one host (mpiexec.mpich -n 2 env).
const std::map<std::string, std::string> k_hydra{{"PMI_RANK", "1"},        {"PMI_SIZE", "4"},
                                                 {"PMI_FD", "8"},          {"HYDI_CONTROL_FD", "7"},
                                                 {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}};

bool one_line(const std::string& s) {
    return s.find('\n') == std::string::npos;
}

} // namespace

TEST_CASE("MPICH Hydra's PMI_RANK, PMI_SIZE, MPI_LOCALRANKID and MPI_LOCALNRANKS give the ranks") {
    auto r = launcher_ranks(env_of(k_hydra));
    REQUIRE(r.ok());
    CHECK(r->launcher == "MPICH's Hydra (mpiexec)");
    CHECK(r->rank == 1);
    CHECK(r->size == 4);
    CHECK(r->local_rank == 1);
    CHECK(r->local_size == 2);
    CHECK_FALSE(r->from_slurm);
}

TEST_CASE("Horovod's HOROVOD_RANK, HOROVOD_SIZE, HOROVOD_LOCAL_RANK and HOROVOD_LOCAL_SIZE give the ranks") {
    auto o = comm_options_from_env(env_of({{"HOROVOD_RANK", "3"},
                                           {"HOROVOD_SIZE", "8"},
                                           {"HOROVOD_LOCAL_RANK", "1"},
                                           {"HOROVOD_LOCAL_SIZE", "2"},
                                           {"HOROVOD_CROSS_RANK", "1"}}));
    REQUIRE(o.ok());
    CHECK(o->rank == 3);
    CHECK(o->size == 8);
    CHECK(o->local_rank == 1);
    CHECK(o->local_size == 2);
}

TEST_CASE(
    "launchers' variables are read in the documented order: ddl, Open MPI, Hydra, Horovod, Slurm, torchrun") {
    // Each launcher's set with a size of its own; taking the first away leaves the next one read.
    std::map<std::string, std::string> env{{"DDL_RANK", "0"},
                                           {"DDL_SIZE", "2"},
                                           {"OMPI_COMM_WORLD_RANK", "0"},
                                           {"OMPI_COMM_WORLD_SIZE", "3"},
                                           {"PMI_RANK", "0"},
                                           {"PMI_SIZE", "4"},
                                           {"HOROVOD_RANK", "0"},
                                           {"HOROVOD_SIZE", "5"},
                                           {"SLURM_PROCID", "1"},
                                           {"SLURM_NTASKS", "6"},
                                           {"RANK", "0"},
                                           {"WORLD_SIZE", "7"}};
    const std::pair<const char*, const char*> order[] = {
        {"DDL_RANK", "DDL_SIZE"},         {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},         {"HOROVOD_RANK", "HOROVOD_SIZE"},
        {"SLURM_PROCID", "SLURM_NTASKS"}, {"RANK", "WORLD_SIZE"}};
    int expected = 2;
    for (const auto& [rank, size] : order) {
        auto r = launcher_ranks(env_of(env));
        REQUIRE(r.ok());
        CHECK(r->size == expected);
        env.erase(rank);
        env.erase(size);
        ++expected;
    }
    auto none = launcher_ranks(env_of(env));
    REQUIRE(none.ok());
    CHECK(none->launcher.empty());
    CHECK(none->size == 1);
}

TEST_CASE("srun's PMI variables, equal to SLURM_PROCID and SLURM_NTASKS, leave the ranks to Slurm's set") {
    auto srun = launcher_ranks(env_of({{"PMI_RANK", "2"},
                                       {"PMI_SIZE", "4"},
                                       {"PMI_FD", "5"},
                                       {"SLURM_PROCID", "2"},
                                       {"SLURM_NTASKS", "4"}}));
    REQUIRE(srun.ok());
    CHECK(srun->from_slurm);
    // mpiexec inside an allocation: Hydra's proxies are srun's tasks, its ranks are others.
    auto hydra = launcher_ranks(
        env_of({{"PMI_RANK", "5"}, {"PMI_SIZE", "8"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}}));
    REQUIRE(hydra.ok());
    CHECK_FALSE(hydra->from_slurm);
    CHECK(hydra->rank == 5);
    CHECK(hydra->size == 8);
}

TEST_CASE(
    "a process Hydra started with -pmi-port (no PMI_RANK, PMI_SIZE) is refused in one line with the fix") {
    auto r = comm_options_from_env(env_of({{"PMI_PORT", "node1:37213"},
                                           {"PMI_ID", "1"},
                                           {"HYDI_CONTROL_FD", "7"},
                                           {"MPI_LOCALRANKID", "1"},
                                           {"MPI_LOCALNRANKS", "2"}}));
    REQUIRE_FALSE(r.ok());
    const std::string& m = r.error().message;
    CHECK(one_line(m));
    CHECK(m.find("MPICH's Hydra (mpiexec)") != std::string::npos);
    CHECK(m.find("PMI_PORT is set") != std::string::npos);
    CHECK(m.find("without -pmi-port") != std::string::npos);
    CHECK(m.find("ddl run") != std::string::npos);
}

TEST_CASE("PMIx's and Horovod's signs without a size are refused, naming the launcher") {
    auto pmix = launcher_ranks(env_of({{"PMIX_RANK", "3"}, {"PMIX_NAMESPACE", "1931542529"}}));
    REQUIRE_FALSE(pmix.ok());
    CHECK(pmix.error().message.find("PMIx launcher") != std::string::npos);
    CHECK(pmix.error().message.find("OMPI_COMM_WORLD_RANK") != std::string::npos);
    auto hvd = launcher_ranks(env_of({{"HOROVOD_RANK", "1"}}));
    REQUIRE_FALSE(hvd.ok());
    CHECK(hvd.error().message.find("Horovod's horovodrun (HOROVOD_RANK is set)") != std::string::npos);
    auto fd = launcher_ranks(env_of({{"PMI_FD", "6"}}));
    REQUIRE_FALSE(fd.ok());
    CHECK(fd.error().message.find("PMI_FD is set") != std::string::npos);
}

TEST_CASE("a size of 1 inherited from the shell while the launcher counts more processes is refused") {
    auto env = k_hydra;
    env["DDL_RANK"] = "0";
    env["DDL_SIZE"] = "1";
    auto r = comm_options_from_env(env_of(env));
    REQUIRE_FALSE(r.ok());
    const std::string& m = r.error().message;
    CHECK(one_line(m));
    CHECK(m.find("DDL_SIZE=1 (ddl run) but PMI_SIZE=4 (MPICH's Hydra (mpiexec)) counts 4 processes") !=
          std::string::npos);
    CHECK(m.find("unset DDL_RANK and DDL_SIZE") != std::string::npos);
    // torchrun's names exported while Hydra (-pmi-port) counts two processes on this node.
    auto local = launcher_ranks(
        env_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"PMI_PORT", "n:1"}, {"MPI_LOCALNRANKS", "2"}}));
    REQUIRE_FALSE(local.ok());
    CHECK(local.error().message.find(
              "MPI_LOCALNRANKS=2 (MPICH's Hydra (mpiexec)) counts 2 processes on this node") !=
          std::string::npos);
}

TEST_CASE("a job of one started by a launcher, or by none, runs") {
    auto mpirun1 = launcher_ranks(env_of({{"OMPI_COMM_WORLD_RANK", "0"},
                                          {"OMPI_COMM_WORLD_SIZE", "1"},
                                          {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"},
                                          {"PMIX_RANK", "0"}}));
    REQUIRE(mpirun1.ok());
    CHECK(mpirun1->size == 1);
    auto mpiexec1 = launcher_ranks(
        env_of({{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}, {"PMI_FD", "6"}, {"MPI_LOCALNRANKS", "1"}}));
    REQUIRE(mpiexec1.ok());
    auto alone = comm_options_from_env(env_of({}));
    REQUIRE(alone.ok());
    CHECK(alone->size == 1);
    CHECK(alone->master_addr == "127.0.0.1");
}

TEST_CASE("bad values in a launcher's set are reported by name") {
    auto r = launcher_ranks(env_of({{"PMI_RANK", "one"}, {"PMI_SIZE", "0"}}));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("PMI_RANK='one'") != std::string::npos);
    CHECK(r.error().message.find("PMI_SIZE='0'") != std::string::npos);
}
