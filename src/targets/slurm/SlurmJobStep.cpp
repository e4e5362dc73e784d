// `ddl run` on a slurm cluster: the program as an srun step of the job that holds the allocation.
#include "targets/slurm/SlurmTarget.hpp"

#include <algorithm>
#include <cstdlib>

namespace ddl {

Result<Command> SlurmTarget::run_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                         const std::map<std::string, std::string>& extra_env) {
    const auto& td = ctx.state.target_data;
    const std::string id = td.contains("job_id") ? td["job_id"].get<std::string>() : "";
    if (id.empty() || ctx.state.nodes.empty())
        return Error{"cluster " + ctx.state.cluster + " holds no running Slurm job; run `ddl deploy` first"};
    const int slots = static_cast<int>(ctx.state.nodes.size()) * ctx.spec.target_section<SlurmSpec>().tasks();
    if (np <= 0) np = slots;
    if (np > slots)
        return Error{"-np " + std::to_string(np) + " is more than the job's " + std::to_string(slots) +
                     " task slots"};
    if (argv.empty()) return Error{"no program to run"};
    const std::string runtime_dir = ctx.state.target_data.value("runtime_dir", std::string());
    Command c;
    c.argv = {"srun",
              "--jobid=" + id,
              "--overlap",
              "--nodes=" +
                  std::to_string(std::min<std::size_t>(ctx.state.nodes.size(), static_cast<std::size_t>(np))),
              "--ntasks=" + std::to_string(np),
              "--kill-on-bad-exit=1",
              "--export=ALL"};
    c.argv.insert(c.argv.end(), argv.begin(), argv.end());
    // srun copies this environment into every task (--export=ALL): the master is the job's first node.
    c.env_set = extra_env;
    c.env_set["DDL_MASTER_ADDR"] = ctx.state.nodes.front().name;
    c.env_set["MASTER_ADDR"] = ctx.state.nodes.front().name;
    c.env_set["DDL_MASTER_PORT"] = std::to_string(ctx.spec.runtime.master_port);
    c.env_set["MASTER_PORT"] = std::to_string(ctx.spec.runtime.master_port);
    if (ctx.spec.runtime.backend != Backend::auto_select)
        c.env_set["DDL_BACKEND"] = to_string(ctx.spec.runtime.backend);
    if (!ctx.spec.runtime.interface.empty()) {
        c.env_set["DDL_IFACE"] = ctx.spec.runtime.interface;
        c.env_set["NCCL_SOCKET_IFNAME"] = ctx.spec.runtime.interface;
    }
    if (!runtime_dir.empty()) {
        const char* path = std::getenv("PATH");
        const char* ld = std::getenv("LD_LIBRARY_PATH");
        const char* py = std::getenv("PYTHONPATH");
        c.env_set["PATH"] = runtime_dir + "/bin" + (path && *path ? ":" + std::string(path) : "");
        c.env_set["LD_LIBRARY_PATH"] = runtime_dir + "/lib" + (ld && *ld ? ":" + std::string(ld) : "");
        c.env_set["PYTHONPATH"] = runtime_dir + "/python" + (py && *py ? ":" + std::string(py) : "");
    }
    // Launchers' variables from an enclosing `ddl run` would win over SLURM_PROCID in the ranks.
    c.env_unset = {"DDL_RANK",
                   "DDL_SIZE",
                   "DDL_LOCAL_RANK",
                   "DDL_LOCAL_SIZE",
                   "OMPI_COMM_WORLD_RANK",
                   "OMPI_COMM_WORLD_SIZE",
                   "RANK",
                   "WORLD_SIZE",
                   "LOCAL_RANK",
                   "LOCAL_WORLD_SIZE"};
    c.timeout = std::chrono::hours(24L * 365);
    return c;
}

} // namespace ddl
