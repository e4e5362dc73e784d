#pragma once
// CommOptions: everything a communicator needs to bootstrap, and where each value comes from in the
// environment. Rank, size, local rank and local size: the launcher's variables, in the order of
// LauncherVars.hpp (ddl run, Open MPI, MPICH's Hydra, Horovod, Slurm, torchrun; a size-1 job started N
// times is refused there). The master's address: DDL_MASTER_ADDR, then MASTER_ADDR, then under srun
// (ranks from SLURM_*) the first host of SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST), then for a job of
// more than one rank the node's node.env (DDL_MASTER_ADDR there; NodeEnv.hpp; DDL_NODE_ENV names another
// file, empty: none), else 127.0.0.1. The port: DDL_MASTER_PORT, then MASTER_PORT, then node.env's
// DDL_MASTER_PORT (jobs of more than one), else 29500. Under srun the local size comes from the step's
// tasks per node at SLURM_NODEID.
#include "util/Result.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace ddl::runtime {

enum class BackendKind { automatic, tcp, nccl };

struct CommOptions {
    int rank = 0;
    int size = 1;
    int local_rank = 0;
    int local_size = 1;
    std::string master_addr = "127.0.0.1";
    int master_port = 29500;
    // The node.env file the master's address came from; empty: a variable or the default gave it.
    std::string master_from;
    // Interface whose address this rank advertises to its peers; empty: the first interface that is
    // not loopback and not docker* (loopback when the master address is a loopback address).
    std::string iface;
    BackendKind backend = BackendKind::automatic;
    // No progress on any socket for this long is a failure (DDL_TIMEOUT_S).
    std::chrono::milliseconds timeout{std::chrono::seconds(30)};
    // The whole bootstrap (rendezvous + ring connections) must finish within this (DDL_BOOTSTRAP_TIMEOUT_S).
    std::chrono::milliseconds bootstrap_timeout{std::chrono::seconds(120)};
    // Tensor fusion knobs (DDL_FUSION_THRESHOLD in bytes, DDL_CYCLE_TIME_MS).
    std::size_t fusion_threshold = 64u << 20;
    std::chrono::milliseconds cycle_time{5};
    // Ring pipelining granularity (DDL_SEGMENT_BYTES) and the ring sockets' kernel buffer size
    // (DDL_SOCKET_BUFFER_BYTES; 0 leaves the sizes to the kernel's autotuning).
    std::size_t segment_bytes = 512u << 10;
    int socket_buffer_bytes = 4 << 20;
};

using GetEnv = std::function<const char*(const char*)>;

// Reads CommOptions from the environment (`getenv` substitutes ::getenv in tests). An Error names the
// variable and its bad value, or says that no launcher variables were found when size > 1 cannot be known.
[[nodiscard]] ddl::Result<CommOptions> comm_options_from_env(const GetEnv& getenv);
// The same from the process environment; when the master's address came from node.env, rank 0 also checks
// that it runs there (an Error saying where it runs and how to name its node instead of a bootstrap that
// times out).
[[nodiscard]] ddl::Result<CommOptions> comm_options_from_env();

[[nodiscard]] const char* backend_kind_name(BackendKind kind);

} // namespace ddl::runtime
