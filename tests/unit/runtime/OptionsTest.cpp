#include "EnvOf.hpp"
#include "runtime/CommOptions.hpp"
#include "runtime/Net.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <sys/socket.h>

using namespace ddl::runtime;
using ddl::runtime::test::env_of;

TEST_CASE("rank and size come from DDL variables before OpenMPI, Slurm and torchrun ones") {
    auto o = comm_options_from_env(env_of({{"DDL_RANK", "1"},
                                           {"DDL_SIZE", "4"},
                                           {"DDL_LOCAL_RANK", "1"},
                                           {"OMPI_COMM_WORLD_RANK", "3"},
                                           {"OMPI_COMM_WORLD_SIZE", "8"},
                                           {"DDL_MASTER_ADDR", "node1"},
                                           {"DDL_MASTER_PORT", "1234"}}));
    REQUIRE(o.ok());
    CHECK(o->rank == 1);
    CHECK(o->size == 4);
    CHECK(o->local_rank == 1);
    CHECK(o->master_addr == "node1");
    CHECK(o->master_port == 1234);
}

TEST_CASE("OpenMPI, Slurm and torchrun variables are understood") {
    auto ompi = comm_options_from_env(env_of({{"OMPI_COMM_WORLD_RANK", "2"},
                                              {"OMPI_COMM_WORLD_SIZE", "3"},
                                              {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                              {"MASTER_ADDR", "::1"}}));
    REQUIRE(ompi.ok());
    CHECK(ompi->rank == 2);
    CHECK(ompi->master_addr == "::1");
    auto slurm = comm_options_from_env(env_of({{"SLURM_PROCID", "5"},
                                               {"SLURM_NTASKS", "6"},
                                               {"SLURM_LOCALID", "1"},
                                               {"SLURM_NTASKS_PER_NODE", "2(x3)"}}));
    REQUIRE(slurm.ok());
    CHECK(slurm->rank == 5);
    CHECK(slurm->local_rank == 1);
    auto torch = comm_options_from_env(env_of({{"RANK", "0"},
                                               {"WORLD_SIZE", "2"},
                                               {"MASTER_PORT", "29400"},
                                               {"DDL_TIMEOUT_S", "2.5"},
                                               {"DDL_FUSION_THRESHOLD", "1024"},
                                               {"DDL_CYCLE_TIME_MS", "1"},
                                               {"DDL_SOCKET_BUFFER_BYTES", "0"},
                                               {"DDL_BACKEND", "tcp"}}));
    REQUIRE(torch.ok());
    CHECK(torch->size == 2);
    CHECK(torch->master_port == 29400);
    CHECK(torch->timeout == std::chrono::milliseconds(2500));
    CHECK(torch->fusion_threshold == 1024);
    CHECK(torch->cycle_time == std::chrono::milliseconds(1));
    CHECK(torch->socket_buffer_bytes == 0);
    CHECK(torch->backend == BackendKind::tcp);
}

TEST_CASE("bad environment values are all reported by name") {
    auto o = comm_options_from_env(env_of(
        {{"DDL_RANK", "x"}, {"DDL_SIZE", "2"}, {"DDL_BACKEND", "mpi"}, {"DDL_SOCKET_BUFFER_BYTES", "-1"}}));
    REQUIRE_FALSE(o.ok());
    CHECK(o.error().message.find("DDL_SOCKET_BUFFER_BYTES='-1'") != std::string::npos);
    CHECK(o.error().message.find("DDL_RANK='x'") != std::string::npos);
    CHECK(o.error().message.find("DDL_BACKEND='mpi'") != std::string::npos);
}

TEST_CASE("a rank advertises the local address that routes to the master") {
    auto lo = ddl::runtime::source_address_towards("127.0.0.1");
    REQUIRE(lo.ok());
    CHECK(*lo == "127.0.0.1");
    // Any address of this machine routes to itself: the answer is that address.
    auto own = ddl::runtime::interface_address("", AF_INET);
    REQUIRE(own.ok());
    auto back = ddl::runtime::source_address_towards(*own);
    REQUIRE(back.ok());
    CHECK(*back == *own);
    CHECK_FALSE(ddl::runtime::source_address_towards("no-such-host.invalid").ok());
}

TEST_CASE("an address of this machine is local; another machine's is not; a name that does not resolve is an "
          "error") {
    auto lo = ddl::runtime::is_local_address("127.0.0.1");
    REQUIRE(lo.ok());
    CHECK(*lo);
    auto own = ddl::runtime::interface_address("", AF_INET);
    REQUIRE(own.ok());
    auto mine = ddl::runtime::is_local_address(*own);
    REQUIRE(mine.ok());
    CHECK(*mine);
    auto other = ddl::runtime::is_local_address("192.0.2.1"); // TEST-NET-1 (RFC 5737), never assigned here
    REQUIRE(other.ok());
    CHECK_FALSE(*other);
    CHECK_FALSE(ddl::runtime::is_local_address("no-such-host.invalid").ok());
}
