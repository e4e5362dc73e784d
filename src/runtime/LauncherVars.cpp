#include "runtime/LauncherVars.hpp"

#include "util/Strings.hpp"

#include <cstdint>
#include <vector>

namespace ddl::runtime {

namespace {

constexpr const char* k_ddl = "ddl run";
constexpr const char* k_ompi = "Open MPI's mpirun";
constexpr const char* k_hydra = "MPICH's Hydra (mpiexec)";
constexpr const char* k_horovod = "Horovod's horovodrun";
constexpr const char* k_slurm = "Slurm's srun";
constexpr const char* k_torch = "torchrun";

struct Source {
    const char* launcher;
    const char* rank;
    const char* size;
    const char* local_rank;
    const char* local_size;
};

// In precedence order (see the header). Hydra's names: MPICH src/pm/hydra/proxy/pmip_cb.c (launch_procs);
// Horovod's: horovod/runner/gloo_run.py; Open MPI's: its "Environment variables set for MPI applications".
constexpr Source k_sources[] = {
    {k_ddl, "DDL_RANK", "DDL_SIZE", "DDL_LOCAL_RANK", "DDL_LOCAL_SIZE"},
    {k_ompi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {k_hydra, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {k_horovod, "HOROVOD_RANK", "HOROVOD_SIZE", "HOROVOD_LOCAL_RANK", "HOROVOD_LOCAL_SIZE"},
    {k_slurm, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
    {k_torch, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
};

// A variable only a launcher sets for the processes it starts, and what makes that launcher give a
// rank and size this runtime reads.
struct Sign {
    const char* variable;
    const char* launcher;
    const char* fix;
};

constexpr const char* k_hydra_port_fix =
    "run mpiexec without -pmi-port (Hydra then sets PMI_RANK and PMI_SIZE)";
constexpr const char* k_hydra_fix = "start it with MPICH's mpiexec, which sets PMI_RANK and PMI_SIZE";

constexpr Sign k_signs[] = {
    {"PMI_PORT", k_hydra, k_hydra_port_fix},
    {"PMI_ID", k_hydra, k_hydra_port_fix},
    {"HYDI_CONTROL_FD", k_hydra, k_hydra_fix},
    {"MPI_LOCALNRANKS", k_hydra, k_hydra_fix},
    {"PMI_FD", "a PMI launcher (MPICH's mpiexec, srun --mpi=pmi2)",
     "start it with a launcher that sets PMI_RANK and PMI_SIZE (MPICH's mpiexec, srun --mpi=pmi2)"},
    {"OMPI_COMM_WORLD_RANK", k_ompi,
     "start it with Open MPI's mpirun, which sets OMPI_COMM_WORLD_RANK and _SIZE"},
    {"OMPI_COMM_WORLD_SIZE", k_ompi,
     "start it with Open MPI's mpirun, which sets OMPI_COMM_WORLD_RANK and _SIZE"},
    {"PMIX_RANK", "a PMIx launcher (Open MPI's mpirun or prterun, srun --mpi=pmix)",
     "start it with Open MPI's mpirun (OMPI_COMM_WORLD_RANK and _SIZE) or with srun (SLURM_PROCID and "
     "SLURM_NTASKS)"},
    {"HOROVOD_RANK", k_horovod, "start it with horovodrun, which sets HOROVOD_RANK and HOROVOD_SIZE"},
    {"HOROVOD_SIZE", k_horovod, "start it with horovodrun, which sets HOROVOD_RANK and HOROVOD_SIZE"},
};

// Launchers' counts of the processes they started (whole job or this node's).
struct Count {
    const char* variable;
    const char* launcher;
    bool local;
};

constexpr Count k_counts[] = {
    {"OMPI_COMM_WORLD_SIZE", k_ompi, false},
    {"OMPI_COMM_WORLD_LOCAL_SIZE", k_ompi, true},
    {"PMI_SIZE", k_hydra, false},
    {"MPI_LOCALNRANKS", k_hydra, true},
    {"HOROVOD_SIZE", k_horovod, false},
    {"HOROVOD_LOCAL_SIZE", k_horovod, true},
};

constexpr const char* k_or_else =
    ", or set DDL_RANK and DDL_SIZE for each process, or start the job with `ddl run`";

bool is_set(const GetEnv& getenv, const char* name) {
    const char* v = getenv(name);
    return v != nullptr && *v != '\0';
}

// srun's PMI plugins give PMI_RANK/PMI_SIZE equal to SLURM_PROCID/SLURM_NTASKS: not Hydra's.
bool is_sruns_pmi(const GetEnv& getenv) {
    const char* procid = getenv("SLURM_PROCID");
    const char* ntasks = getenv("SLURM_NTASKS");
    return procid != nullptr && ntasks != nullptr && trim(procid) == trim(getenv("PMI_RANK")) &&
           trim(ntasks) == trim(getenv("PMI_SIZE"));
}

const Source* chosen_source(const GetEnv& getenv) {
    for (const Source& src : k_sources) {
        if (!is_set(getenv, src.rank) || !is_set(getenv, src.size)) continue;
        if (src.launcher == k_hydra && is_sruns_pmi(getenv)) continue;
        return &src;
    }
    return nullptr;
}

// A process with a launcher's signs and no rank and size to read.
ddl::Status refuse_unreadable(const GetEnv& getenv) {
    for (const Sign& s : k_signs) {
        if (!is_set(getenv, s.variable)) continue;
        return ddl::Error{std::string("started by ") + s.launcher + " (" + s.variable +
                          " is set) but without a rank and size libddlcomm reads, so each process would run "
                          "alone as a job of size 1: " +
                          s.fix + k_or_else};
    }
    return {};
}

// A set that says size 1 while a launcher counts more processes: variables inherited from the shell that
// started the launcher (MPICH's mpiexec passes the whole environment on) hide the launcher's own.
ddl::Status refuse_size_one(const GetEnv& getenv, const Source& src) {
    for (const Count& c : k_counts) {
        int n = 0;
        if (!read_env_int(getenv, c.variable, 1, 1 << 20, n).ok() || n <= 1) continue;
        return ddl::Error{std::string(src.size) + "=1 (" + src.launcher + ") but " + c.variable + "=" +
                          std::to_string(n) + " (" + c.launcher + ") counts " + std::to_string(n) +
                          " processes" + (c.local ? " on this node" : "") +
                          ": each would run alone as a job of size 1; unset " + src.rank + " and " +
                          src.size +
                          " where the job is started (a launcher passes its shell's variables on)"};
    }
    return {};
}

} // namespace

ddl::Result<LauncherRanks> launcher_ranks(const GetEnv& getenv) {
    LauncherRanks out;
    const Source* src = chosen_source(getenv);
    if (src == nullptr) {
        if (auto st = refuse_unreadable(getenv); !st) return st.error();
        return out;
    }
    std::vector<std::string> errors;
    auto check = [&](const ddl::Status& st) {
        if (!st) errors.push_back(st.error().message);
    };
    out.launcher = src->launcher;
    out.from_slurm = src->launcher == k_slurm;
    check(read_env_int(getenv, src->rank, 0, 1 << 20, out.rank));
    check(read_env_int(getenv, src->size, 1, 1 << 20, out.size));
    check(read_env_int(getenv, src->local_rank, 0, 1 << 20, out.local_rank));
    // SLURM_NTASKS_PER_NODE may be "4(x2)" (CommOptions reads the step's layout); a bad local size is not
    // worth failing for.
    if (!read_env_int(getenv, src->local_size, 1, 1 << 20, out.local_size).ok()) out.local_size = 1;
    if (!errors.empty()) return ddl::Error{join(errors, "; ")};
    if (out.size == 1)
        if (auto st = refuse_size_one(getenv, *src); !st) return st.error();
    return out;
}

} // namespace ddl::runtime
