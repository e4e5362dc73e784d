#pragma once
// LauncherVars: a process's rank, size, local rank and local size, read from the variables that the
// launcher which started it sets. First complete (rank and size) set wins, in this order:
//   1. `ddl run`                 DDL_RANK, DDL_SIZE, DDL_LOCAL_RANK, DDL_LOCAL_SIZE
//   2. Open MPI's mpirun         OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
//   3. MPICH's Hydra (mpiexec)   PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS
//   4. Horovod's horovodrun      HOROVOD_RANK, HOROVOD_SIZE, HOROVOD_LOCAL_RANK, HOROVOD_LOCAL_SIZE
//   5. Slurm's srun              SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE
//   6. torchrun                  RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE
// A launcher started inside a Slurm allocation (mpirun, mpiexec or horovodrun in a batch script) sees the
// allocation's SLURM_* too, so the launchers' own variables come before Slurm's. Slurm's PMI plugins
// (srun --mpi=pmi2) set PMI_RANK/PMI_SIZE equal to SLURM_PROCID/SLURM_NTASKS: then Slurm's set is the
// one read (it also gives the step's layout and its first node).
//
// A job of size 1 started N times is refused: a process that carries a launcher's signs (PMI_FD, PMI_PORT,
// PMI_ID, HYDI_CONTROL_FD, MPI_LOCALNRANKS, OMPI_COMM_WORLD_*, PMIX_RANK, HOROVOD_*) but no complete set
// above, or whose set says size 1 while a launcher's count (OMPI_COMM_WORLD_SIZE, _LOCAL_SIZE, PMI_SIZE,
// MPI_LOCALNRANKS, HOROVOD_SIZE, HOROVOD_LOCAL_SIZE) says more, gets a one-line Error naming the launcher and
// the fix, instead of running alone as if it were the whole job.
#include "runtime/CommOptions.hpp"
#include "util/Result.hpp"
#include "util/Strings.hpp"

#include <cstdint>
#include <string>

namespace ddl::runtime {

struct LauncherRanks {
    std::string launcher; // who set them ("ddl run", "Open MPI's mpirun", …); empty: none, a job of 1
    int rank = 0;
    int size = 1;
    int local_rank = 0;
    int local_size = 1;
    bool from_slurm = false; // srun's variables: the step's layout and nodes say more (CommOptions)
};

// Reads the ranks as above. An Error names bad values (variable and value) or the refusal.
// Reads the integer variable `name` into `out` when it is set and not empty (else leaves `out`); an Error
// names the variable and its bad value.
template <typename T>
[[nodiscard]] ddl::Status read_env_int(const GetEnv& getenv, const char* name, std::int64_t min,
                                       std::int64_t max, T& out) {
    const char* text = getenv(name);
    if (text == nullptr || *text == '\0') return {};
    auto value = parse_int(trim(text));
    if (!value || *value < min || *value > max)
        return ddl::Error{std::string(name) + "='" + text + "' is not an integer in [" + std::to_string(min) +
                          ", " + std::to_string(max) + "]"};
    out = static_cast<T>(*value);
    return {};
}

[[nodiscard]] ddl::Result<LauncherRanks> launcher_ranks(const GetEnv& getenv);

} // namespace ddl::runtime
