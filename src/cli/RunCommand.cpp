// `ddl run`: a program on every slot with the bundled runtime's launcher (ranks over SSH), or, on a
// cluster whose ranks are a job step, as that step.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Datasets.hpp"
#include "cli/Invoke.hpp"
#include "cli/Launch.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "cli/Restarts.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ddl::cli {
namespace {

// `ddl run -d`: the job goes to the master's queue (JobsCommand.cpp).
struct DetachArgs {
    bool detach = false;
    std::string name;
    bool beside = false;
};

struct RunOptions {
    RunArgs a;
    RestartPolicy restarts;
    DetachArgs d;
};

void add_options(CLI::App& sub, RunArgs& a) {
    sub.add_option("-n,--np", a.np, "Number of ranks (default: every slot); -np N works too")
        ->check(CLI::Range(1, 1 << 20));
    add_cluster_ref(sub, a.cluster, ClusterRef::option);
    sub.add_option("--hostfile", a.hostfile, "Hostfile (openmpi/horovod/mpich) naming nodes of the cluster");
    sub.add_option("--iface", a.iface, "Network interface for the TCP ring and NCCL (default: the spec's)");
    sub.add_option("--port", a.port, "Rendezvous port on rank 0 (default: the spec's runtime.master_port)")
        ->check(CLI::Range(1024, 65535));
    sub.add_option("--startup-timeout", a.startup_timeout_s, "Seconds for every rank to start")
        ->check(k_seconds)
        ->capture_default_str();
    sub.add_option("-x,--env", a.env, "Pass NAME=VALUE (or NAME from this shell) to every rank; repeatable")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub.add_flag("--container", a.container, "Start each rank inside its node's training container");
    sub.add_option("command", a.command, "Program and arguments after --");
}

void add_detach_options(CLI::App& sub, DetachArgs& d) {
    sub.add_flag("-d,--detach", d.detach, "Queue it on the master and print its job id (see ddl jobs)");
    sub.add_option("--name", d.name, "With -d: the job's name in ddl jobs");
    sub.add_flag("--beside", d.beside, "With -d: start it now, beside the running job, not after it");
}

// The ranks as a step of the cluster's job: ddl becomes the scheduler's launcher (srun), which streams
// the ranks' output, forwards signals and stops every rank when one fails (--kill-on-bad-exit).
int run_as_job_step(const Invocation& inv, Context& ctx, const RunArgs& a) {
    if (!a.hostfile.empty() || a.max_nodes > 0 || !a.iface.empty() || a.port > 0)
        return inv.fail("on a slurm cluster the job's allocation decides the hosts; only -np and -x apply",
                        exit_code::k_bad_input);
    auto env = dataset_env(ctx.spec);
    for (auto& [name, value] : env_from_args(a.env))
        env[name] = std::move(value);
    auto cmd = job_step_command(ctx, a.np, a.command, env);
    if (!cmd) return inv.fail(cmd.error().message, exit_code::k_bad_input);
    log::info("running " + printable_argv(*cmd));
    for (const auto& name : cmd->env_unset)
        unsetenv(name.c_str());
    for (const auto& [name, value] : cmd->env_set)
        setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (auto& arg : cmd->argv)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    return inv.fail(std::string("cannot start srun: ") + std::strerror(errno), exit_code::k_failure);
}

int run(const Invocation& inv, const RunArgs& a, const RestartPolicy& restarts) {
    auto& ctx = *inv.cluster->ctx;
    if (ranks_run_as_job_step(ctx.spec) && restarts.max_restarts > 0)
        return inv.fail(
            "--max-restarts restarts ranks ddl starts over SSH; on a slurm cluster the job step is "
            "srun's (its --requeue and the batch script decide)",
            exit_code::k_bad_input);
    if (ranks_run_as_job_step(ctx.spec)) return run_as_job_step(inv, ctx, a);
    return run_with_restarts(inv, ctx, a, restarts);
}

} // namespace

CommandBody run_command() {
    auto o = std::make_shared<RunOptions>();
    o->a.as_job = true;
    return {.add_options =
                [o](CLI::App& sub) {
                    add_options(sub, o->a);
                    add_restart_options(sub, o->restarts);
                    add_detach_options(sub, o->d);
                },
            .prepare = [o](Invocation& inv) { return take_command_words(inv, o->a.command, true); },
            .cluster = [o] { return o->a.cluster; },
            .action =
                [o](Invocation& inv) {
                    if (o->d.detach && o->restarts.max_restarts > 0 && o->restarts.restart_on != "any")
                        return inv.fail("--restart-on " + o->restarts.restart_on +
                                            ": a detached job (-d) restarts on any failure (its master runs "
                                            "no health checks): leave out --restart-on, or run in the "
                                            "foreground",
                                        exit_code::k_bad_input);
                    if (o->d.detach && !o->restarts.on_node_fault.empty())
                        return inv.fail("--on-node-fault " + o->restarts.on_node_fault +
                                            ": a detached job (-d) restarts on the master, which runs no "
                                            "health checks and cannot make machines: run in the foreground "
                                            "(under nohup or tmux to outlive the terminal)",
                                        exit_code::k_bad_input);
                    return o->d.detach
                               ? run_detached(inv, o->a, o->d.name, o->d.beside, o->restarts.max_restarts)
                               : run(inv, o->a, o->restarts);
                }};
}

} // namespace ddl::cli
