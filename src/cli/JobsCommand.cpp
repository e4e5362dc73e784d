// `ddl jobs`, `ddl logs`, `ddl cancel` and `ddl run -d`: the cluster's job queue, which lives on its master
// (src/runtime/tools/ddl-run, docs/jobs.md); the controller only asks it over the cluster's SSH.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Datasets.hpp"
#include "cli/ForegroundRecord.hpp"
#include "cli/Invoke.hpp"
#include "cli/JobRecords.hpp"
#include "cli/Launch.hpp"
#include "cli/OpenCluster.hpp"
#include "cli/OpenSsh.hpp"
#include "cli/Restarts.hpp"
#include "cli/WorkdirSync.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

// Runs `command` on the master; its output, or an exit code after saying why (exit 2 when ddl-run refused
// the input, as it says in its one line).
struct MasterResult {
    int rc = exit_code::k_ok;
    std::string out;
};
const NodeState* configured_master(const Invocation& inv, Context& ctx) {
    const NodeState* m = master_of(ctx);
    if (m && ctx.state.phase_done("configure")) return m;
    (void)inv.fail("cluster " + ctx.state.cluster + " is not configured yet; run `ddl deploy` first",
                   exit_code::k_bad_input);
    return nullptr;
}
MasterResult answer(const Invocation& inv, const Result<ExecResult>& r);
MasterResult on_master(const Invocation& inv, Context& ctx, const std::string& command,
                       const std::string& input = {}) {
    const NodeState* m = configured_master(inv, ctx);
    if (!m) return {exit_code::k_bad_input, {}};
    return answer(inv,
                  ctx.remote.exec_with_input(ctx.endpoint(*m), command, input, std::chrono::seconds(120)));
}
// The command's output, or its refusal said as ddl's.
MasterResult answer(const Invocation& inv, const Result<ExecResult>& r) {
    if (!r) return {inv.fail(r.error().message, exit_code::k_failure), {}};
    if (!r->ok()) {
        std::string why = trim(r->err);
        if (starts_with(why, "ddl-run: ")) why = why.substr(9);
        if (r->exit_status == 127)
            why = "the master has no " + std::string(k_ddl_run) + "; run `ddl deploy` with this ddl";
        return {inv.fail(why.empty() ? "exit " + std::to_string(r->exit_status) : why,
                         r->exit_status == 2 ? exit_code::k_bad_input : exit_code::k_failure),
                {}};
    }
    return {exit_code::k_ok, r->out};
}

struct JobArgs {
    std::string cluster;
    std::string job;
    bool follow = false;
    int rank = -1;
};

int jobs(const Invocation& inv, const JobArgs&) {
    auto& ctx = *inv.cluster->ctx;
    auto r = on_master(inv, ctx, shell_join({k_ddl_run, "jobs", "--json"}));
    if (r.rc != exit_code::k_ok) return r.rc;
    auto records = parse_job_records(r.out);
    if (!records) return inv.fail(records.error().message, exit_code::k_failure);
    if (inv.g.json)
        std::cout << trim(r.out) << "\n";
    else
        std::cout << job_table(*records);
    return exit_code::k_ok;
}

int logs(const Invocation& inv, const JobArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    auto id = parse_job_id(a.job);
    if (!id) return inv.fail(id.error().message, exit_code::k_bad_input);
    std::vector<std::string> argv{k_ddl_run, "logs", std::to_string(*id)};
    if (a.rank >= 0) argv.insert(argv.end(), {"--rank", std::to_string(a.rank)});
    if (a.follow) {
        // Followed until the job ends: OpenSSH, which this process becomes (Ctrl-C stops following only).
        argv.push_back("-f");
        const NodeState* m = master_of(ctx);
        if (!m) return inv.fail("cluster " + ctx.state.cluster + " has no nodes", exit_code::k_bad_input);
        auto ssh = openssh_argv(ctx, *m, {"-T", "-o", "BatchMode=yes"});
        ssh.push_back(shell_join(argv));
        exec_openssh(ssh, "ddl logs");
    }
    // Passed on as it arrives: a log can be larger than this machine's memory.
    const NodeState* m = configured_master(inv, ctx);
    if (!m) return exit_code::k_bad_input;
    auto r = ctx.remote.exec_streaming(
        ctx.endpoint(*m), shell_join(argv),
        [](std::string_view out) {
            std::cout.write(out.data(), static_cast<std::streamsize>(out.size())).flush();
            return static_cast<bool>(std::cout);
        },
        std::chrono::seconds(120));
    if (!std::cout) return exit_code::k_failure; // its reader has gone (`| head`): nothing to say to it
    return answer(inv, r).rc;
}

int cancel(const Invocation& inv, const JobArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    auto id = parse_job_id(a.job);
    if (!id) return inv.fail(id.error().message, exit_code::k_bad_input);
    auto r = on_master(inv, ctx, shell_join({k_ddl_run, "cancel", std::to_string(*id)}));
    if (r.rc != exit_code::k_ok) return r.rc;
    // "job 3 cancelled", or "job 3 already succeeded" for one that had ended
    auto words = split(trim(r.out), ' ');
    if (inv.g.json)
        std::cout << nlohmann::json{{"id", *id}, {"state", words.empty() ? "" : words.back()}}.dump() << "\n";
    else
        std::cout << r.out << std::flush;
    return exit_code::k_ok;
}

CommandBody job_command(int (*action)(const Invocation&, const JobArgs&), bool takes_job) {
    auto a = std::make_shared<JobArgs>();
    return {.add_options =
                [a, takes_job, action](CLI::App& sub) {
                    if (takes_job)
                        sub.add_option("job", a->job, "Job id (ddl jobs lists them)")->required();
                    else
                        sub.add_option("cluster", a->cluster, "Cluster name or spec file");
                    sub.add_option("--cluster", a->cluster, "Cluster name or spec file");
                    if (action == &logs) {
                        sub.add_flag("-f,--follow", a->follow, "Follow the output until the job ends");
                        sub.add_option("--rank", a->rank, "Only this rank's output")
                            ->check(CLI::Range(0, 1 << 20));
                    }
                },
            .cluster = [a] { return a->cluster; },
            .action = [a, action](Invocation& inv) { return action(inv, *a); }};
}

} // namespace

int run_detached(const Invocation& inv, const RunArgs& a, const std::string& name, bool beside,
                 int max_restarts) {
    auto& ctx = *inv.cluster->ctx;
    if (auto s = check_nodes_over_ssh(ctx.spec, "ddl run -d"); !s)
        return inv.fail(s.error().message, exit_code::k_bad_input);
    if (auto s = check_env_args(a.env); !s) return inv.fail(s.error().message, exit_code::k_bad_input);
    warn_short_lease(ctx);
    if (!a.hostfile.empty() || a.container || !a.iface.empty() || a.port > 0)
        return inv.fail("a detached job runs on the master's hostfile: --hostfile, --container, --iface and "
                        "--port do not apply",
                        exit_code::k_bad_input);
    auto env = resolve_spec_env(ctx.spec);
    if (!env) return inv.fail(env.error().message, exit_code::k_bad_input);
    for (auto& [k, v] : dataset_env(ctx.spec))
        (*env)[k] = v;
    // Where a restarted job finds its checkpoints (the user's -x wins, as for a foreground run).
    if (const auto dir = checkpoint_dir(ctx); max_restarts > 0 && !dir.empty())
        (*env)["DDL_CHECKPOINT_DIR"] = dir;
    for (auto& [k, v] : env_from_args(a.env))
        (*env)[k] = v;
    const std::string workdir = ctx.spec.work.workdir.empty() ? std::string() : remote_workdir(ctx.spec);
    if (!workdir.empty() && ctx.state.phase_done("configure")) {
        if (auto s = check_synced(ctx); !s) return inv.fail(s.error().message, exit_code::k_bad_input);
    }
    auto r = on_master(inv, ctx, submit_command(name, a.np, beside, workdir, a.command, max_restarts),
                       env_block(*env));
    if (r.rc != exit_code::k_ok) return r.rc;
    const std::string id = trim(r.out);
    if (inv.g.json)
        std::cout << nlohmann::json{{"id", parse_int(id).value_or(0)}, {"cluster", ctx.state.cluster}}.dump()
                  << "\n";
    else {
        std::cout << id << "\n";
        inv.say("job " + id + " queued on the master; follow it with `ddl logs " + id + " -f`");
    }
    return exit_code::k_ok;
}

CommandBody jobs_command() {
    return job_command(&jobs, false);
}
CommandBody logs_command() {
    return job_command(&logs, true);
}
CommandBody cancel_command() {
    return job_command(&cancel, true);
}

} // namespace ddl::cli
