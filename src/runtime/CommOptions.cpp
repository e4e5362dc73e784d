#include "runtime/CommOptions.hpp"

#include "runtime/SlurmHostlist.hpp"
#include "util/Strings.hpp"

#include <cstdlib>
#include <vector>

namespace ddl::runtime {

namespace {

struct Source {
    const char* rank;
    const char* size;
    const char* local_rank;
    const char* local_size;
};

// In precedence order (see the header).
constexpr Source k_sources[] = {
    {"DDL_RANK", "DDL_SIZE", "DDL_LOCAL_RANK", "DDL_LOCAL_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
    {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
};

ddl::Status read_int(const GetEnv& getenv, const char* name, std::int64_t min, std::int64_t max, auto& out) {
    const char* text = getenv(name);
    if (text == nullptr || *text == '\0') return {};
    auto value = parse_int(trim(text));
    if (!value || *value < min || *value > max)
        return ddl::Error{std::string(name) + "='" + text + "' is not an integer in [" + std::to_string(min) +
                          ", " + std::to_string(max) + "]"};
    out = static_cast<std::remove_reference_t<decltype(out)>>(*value);
    return {};
}

// srun describes the step's layout: the tasks on this task's node come from the step's
// tasks-per-node list at this node's index (SLURM_NTASKS_PER_NODE is unset unless the user passed it).
ddl::Status apply_slurm_step(const GetEnv& getenv, CommOptions& opts) {
    int node_id = -1;
    if (auto st = read_int(getenv, "SLURM_NODEID", 0, 1 << 20, node_id); !st) return st;
    for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
        const char* v = getenv(name);
        if (v == nullptr || node_id < 0) continue;
        if (auto n = slurm_tasks_on_node(v, node_id)) {
            opts.local_size = *n;
            return {};
        }
        return ddl::Error{std::string(name) + "='" + v +
                          "' has no entry for SLURM_NODEID=" + std::to_string(node_id)};
    }
    return {};
}

// Without MASTER_ADDR, rank 0 is on the first node of the step: srun places task 0 there.
ddl::Status slurm_master(const GetEnv& getenv, CommOptions& opts) {
    for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
        const char* v = getenv(name);
        if (v == nullptr || *v == '\0') continue;
        auto hosts = expand_slurm_hostlist(v);
        if (!hosts) return ddl::Error{std::string(name) + ": " + hosts.error().message};
        opts.master_addr = hosts->front();
        return {};
    }
    return {}; // like the other launchers' variables without a master: the default, loopback
}

} // namespace

const char* backend_kind_name(BackendKind kind) {
    switch (kind) {
    case BackendKind::tcp:
        return "tcp";
    case BackendKind::nccl:
        return "nccl";
    default:
        return "auto";
    }
}

ddl::Result<CommOptions> comm_options_from_env(const GetEnv& getenv) {
    CommOptions opts;
    std::vector<std::string> errors;
    auto check = [&](const ddl::Status& st) {
        if (!st) errors.push_back(st.error().message);
    };
    bool from_slurm = false;
    for (const Source& src : k_sources) {
        const char* rank = getenv(src.rank);
        const char* size = getenv(src.size);
        if (rank == nullptr || size == nullptr) continue;
        check(read_int(getenv, src.rank, 0, 1 << 20, opts.rank));
        check(read_int(getenv, src.size, 1, 1 << 20, opts.size));
        check(read_int(getenv, src.local_rank, 0, 1 << 20, opts.local_rank));
        // SLURM_NTASKS_PER_NODE may be "4(x2)"; a bad local size is not worth failing for.
        if (!read_int(getenv, src.local_size, 1, 1 << 20, opts.local_size).ok()) opts.local_size = 1;
        from_slurm = std::string(src.rank) == "SLURM_PROCID";
        break;
    }
    if (from_slurm) check(apply_slurm_step(getenv, opts));
    bool master_given = false;
    for (const char* name : {"DDL_MASTER_ADDR", "MASTER_ADDR"}) {
        if (const char* v = getenv(name); v != nullptr && *v != '\0') {
            opts.master_addr = trim(v);
            master_given = true;
            break;
        }
    }
    if (from_slurm && !master_given) check(slurm_master(getenv, opts));
    for (const char* name : {"DDL_MASTER_PORT", "MASTER_PORT"}) {
        if (getenv(name) != nullptr) {
            check(read_int(getenv, name, 1, 65535, opts.master_port));
            break;
        }
    }
    if (const char* v = getenv("DDL_IFACE"); v != nullptr) opts.iface = trim(v);
    if (const char* v = getenv("DDL_BACKEND"); v != nullptr && *v != '\0') {
        const std::string b = to_lower(trim(v));
        if (b == "tcp")
            opts.backend = BackendKind::tcp;
        else if (b == "nccl")
            opts.backend = BackendKind::nccl;
        else if (b == "auto")
            opts.backend = BackendKind::automatic;
        else
            errors.push_back("DDL_BACKEND='" + std::string(v) + "' must be tcp, nccl or auto");
    }
    double timeout_s = 0;
    if (const char* v = getenv("DDL_TIMEOUT_S"); v != nullptr && *v != '\0') {
        char* end = nullptr;
        timeout_s = std::strtod(v, &end);
        if (end == v || *end != '\0' || timeout_s <= 0)
            errors.push_back("DDL_TIMEOUT_S='" + std::string(v) + "' must be a positive number");
        else
            opts.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
    }
    int bootstrap_s = 0;
    check(read_int(getenv, "DDL_BOOTSTRAP_TIMEOUT_S", 1, 86400, bootstrap_s));
    if (bootstrap_s > 0) opts.bootstrap_timeout = std::chrono::seconds(bootstrap_s);
    check(read_int(getenv, "DDL_FUSION_THRESHOLD", 0, std::int64_t{1} << 40, opts.fusion_threshold));
    int cycle_ms = -1;
    check(read_int(getenv, "DDL_CYCLE_TIME_MS", 0, 60000, cycle_ms));
    if (cycle_ms >= 0) opts.cycle_time = std::chrono::milliseconds(cycle_ms);
    check(read_int(getenv, "DDL_SEGMENT_BYTES", 4096, 1 << 30, opts.segment_bytes));
    check(read_int(getenv, "DDL_SOCKET_BUFFER_BYTES", 0, 1 << 30, opts.socket_buffer_bytes));
    if (opts.rank >= opts.size)
        errors.push_back("rank " + std::to_string(opts.rank) + " is not below the size " +
                         std::to_string(opts.size));
    if (!errors.empty()) return ddl::Error{join(errors, "; ")};
    return opts;
}

ddl::Result<CommOptions> comm_options_from_env() {
    return comm_options_from_env(
        [](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

} // namespace ddl::runtime
