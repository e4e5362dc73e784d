#include "runtime/CommOptions.hpp"

#include "runtime/LauncherVars.hpp"
#include "runtime/Net.hpp"
#include "runtime/NodeEnv.hpp"
#include "runtime/SlurmHostlist.hpp"
#include "util/Strings.hpp"

#include <cstdlib>
#include <unistd.h>
#include <vector>

namespace ddl::runtime {

namespace {

// srun describes the step's layout: the tasks on this task's node come from the step's
// tasks-per-node list at this node's index (SLURM_NTASKS_PER_NODE is unset unless the user passed it).
ddl::Status apply_slurm_step(const GetEnv& getenv, CommOptions& opts) {
    int node_id = -1;
    if (auto st = read_env_int(getenv, "SLURM_NODEID", 0, 1 << 20, node_id); !st) return st;
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
ddl::Status slurm_master(const GetEnv& getenv, CommOptions& opts, bool& found) {
    for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
        const char* v = getenv(name);
        if (v == nullptr || *v == '\0') continue;
        auto hosts = expand_slurm_hostlist(v);
        if (!hosts) return ddl::Error{std::string(name) + ": " + hosts.error().message};
        opts.master_addr = hosts->front();
        found = true;
        return {};
    }
    return {};
}

// What no variable gave of the master's address and port, from the node's node.env (DDL_NODE_ENV names
// another file; set empty: none).
ddl::Status apply_node_env(const GetEnv& getenv, CommOptions& opts, bool master_given, bool port_given) {
    const char* named = getenv("DDL_NODE_ENV");
    const std::string path = named != nullptr ? trim(named) : std::string(k_node_env_path);
    if (path.empty()) return {};
    auto file = read_node_env(path);
    if (!file) return file.error();
    if (!*file) return {};
    const NodeEnv& env = **file;
    if (const NodeEnvValue* v = env.find("DDL_MASTER_ADDR"); v != nullptr && !master_given) {
        opts.master_addr = v->value;
        opts.master_from = path;
    }
    if (const NodeEnvValue* v = env.find("DDL_MASTER_PORT"); v != nullptr && !port_given) {
        auto port = parse_int(v->value);
        if (!port || *port < 1 || *port > 65535)
            return ddl::Error{path + ":" + std::to_string(v->line) + ": DDL_MASTER_PORT='" + v->value +
                              "' is not a port (1-65535)"};
        opts.master_port = static_cast<int>(*port);
    }
    return {};
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
    auto ranks = launcher_ranks(getenv);
    if (!ranks) {
        errors.push_back(ranks.error().message);
    } else {
        opts.rank = ranks->rank;
        opts.size = ranks->size;
        opts.local_rank = ranks->local_rank;
        opts.local_size = ranks->local_size;
    }
    const bool from_slurm = ranks && ranks->from_slurm;
    if (from_slurm) check(apply_slurm_step(getenv, opts));
    bool master_given = false;
    for (const char* name : {"DDL_MASTER_ADDR", "MASTER_ADDR"}) {
        if (const char* v = getenv(name); v != nullptr && *v != '\0') {
            opts.master_addr = trim(v);
            master_given = true;
            break;
        }
    }
    if (from_slurm && !master_given) check(slurm_master(getenv, opts, master_given));
    bool port_given = false;
    for (const char* name : {"DDL_MASTER_PORT", "MASTER_PORT"}) {
        if (getenv(name) != nullptr) {
            check(read_env_int(getenv, name, 1, 65535, opts.master_port));
            port_given = true;
            break;
        }
    }
    // A job of one needs no master; a bigger one without a launcher's master takes the cluster's.
    if (opts.size > 1 && (!master_given || !port_given))
        check(apply_node_env(getenv, opts, master_given, port_given));
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
    check(read_env_int(getenv, "DDL_BOOTSTRAP_TIMEOUT_S", 1, 86400, bootstrap_s));
    if (bootstrap_s > 0) opts.bootstrap_timeout = std::chrono::seconds(bootstrap_s);
    check(read_env_int(getenv, "DDL_FUSION_THRESHOLD", 0, std::int64_t{1} << 40, opts.fusion_threshold));
    int cycle_ms = -1;
    check(read_env_int(getenv, "DDL_CYCLE_TIME_MS", 0, 60000, cycle_ms));
    if (cycle_ms >= 0) opts.cycle_time = std::chrono::milliseconds(cycle_ms);
    check(read_env_int(getenv, "DDL_SEGMENT_BYTES", 4096, 1 << 30, opts.segment_bytes));
    check(read_env_int(getenv, "DDL_SOCKET_BUFFER_BYTES", 0, 1 << 30, opts.socket_buffer_bytes));
    if (opts.rank >= opts.size)
        errors.push_back("rank " + std::to_string(opts.rank) + " is not below the size " +
                         std::to_string(opts.size));
    if (!errors.empty()) return ddl::Error{join(errors, "; ")};
    return opts;
}

ddl::Result<CommOptions> comm_options_from_env() {
    auto opts =
        comm_options_from_env([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
    if (!opts || opts->rank != 0 || opts->master_from.empty()) return opts;
    // mpirun and mpiexec start rank 0 on their hostfile's first host; node.env names the first host of
    // ddl's hostfiles. Another order would leave the other ranks calling a master nobody listens on.
    auto local = is_local_address(opts->master_addr);
    if (local && *local) return opts;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return ddl::Error{"rank 0 runs on " + std::string(host) + ", but the master is DDL_MASTER_ADDR=" +
                      opts->master_addr + " from " + opts->master_from +
                      " (the first node of ddl's hostfiles, where mpirun and mpiexec start rank 0" +
                      (local ? std::string() : "; " + local.error().message) +
                      "): list the hostfile's nodes in ddl's order, or pass every rank MASTER_ADDR=" + host +
                      " (mpirun -x, mpiexec -genv)"};
}

} // namespace ddl::runtime
