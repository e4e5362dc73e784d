#include "targets/slurm/SlurmTarget.hpp"

#include "provision/HostfileWriter.hpp"
#include "provision/Probe.hpp"
#include "targets/slurm/SlurmScript.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <pwd.h>
#include <regex>
#include <set>
#include <thread>
#include <unistd.h>

namespace ddl {
namespace {

namespace fs = std::filesystem;
using Record = std::map<std::string, std::string>;

const std::vector<std::string> k_tools{"sbatch", "squeue", "scontrol", "scancel", "srun"};
// Job states after which the job holds no nodes (COMPLETING still does, but is on its way out).
const std::set<std::string> k_ended{"BOOT_FAIL", "CANCELLED", "COMPLETED",     "COMPLETING", "DEADLINE",
                                    "FAILED",    "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",  "TIMEOUT"};

std::string current_user() {
    if (const passwd* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
    return std::to_string(geteuid());
}

std::string job_id_of(const Context& ctx) {
    const auto& td = ctx.state.target_data;
    return td.contains("job_id") ? td["job_id"].get<std::string>() : "";
}

// The job's record, or nothing once Slurm has forgotten it (ended longer than MinJobAge ago).
Result<std::optional<Record>> show_job(const Context& ctx, const std::string& id) {
    Command c{.argv = {"scontrol", "show", "job", "-o", id}, .timeout = std::chrono::seconds(30)};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (!r->success()) {
        if (r->err.find("Invalid job id") != std::string::npos) return std::optional<Record>{};
        return Error{describe_failure(c, *r)};
    }
    for (const auto& line : split_lines(r->out)) {
        auto rec = parse_scontrol_record(line);
        if (rec["JobId"] == id) return std::optional<Record>{rec};
    }
    return std::optional<Record>{};
}

std::string state_of(const Record& job) {
    auto it = job.find("JobState");
    return it == job.end() ? "" : it->second;
}

// The last lines of the job's output file, indented, for an error message.
std::string output_tail(const Record& job, std::size_t lines = 15) {
    auto it = job.find("StdOut");
    if (it == job.end() || it->second.empty()) return "";
    auto text = read_file_limited(it->second, 1 << 20);
    if (!text) return "\n      (its output " + it->second + " cannot be read: " + text.error().message + ")";
    auto all = split_lines(*text);
    while (!all.empty() && trim(all.back()).empty())
        all.pop_back();
    std::string out = "\n      last lines of " + it->second + ":";
    for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
        out += "\n      | " + all[i];
    if (all.empty()) out += " (empty)";
    return out;
}

// sbatch's refusals, turned into the spec key to fix.
std::string submit_hint(const std::string& err) {
    static const std::vector<std::pair<std::string, std::string>> hints{
        {"Invalid partition", "slurm.partition names no partition here; `sinfo -s` lists them"},
        {"Invalid account", "slurm.account is not one of yours; `sacctmgr show assoc user=$USER` lists them"},
        {"Invalid generic resource", "slurm.gpus_per_node: the partition has no GPUs as gres \"gpu\""},
        {"Requested node configuration is not available",
         "the partition has no nodes with that many GPUs/tasks; lower slurm.gpus_per_node or tasks_per_node"},
        {"Node count specification invalid", "slurm.nodes is more than the partition has"},
        {"time limit", "slurm.time is over the partition's limit; `sinfo -o '%P %l'` shows it"},
    };
    for (const auto& [needle, hint] : hints)
        if (err.find(needle) != std::string::npos) return hint;
    return "";
}

std::string last_line(const std::string& text) {
    auto lines = split_lines(trim(text));
    return lines.empty() ? "" : trim(lines.back());
}

} // namespace

std::map<std::string, std::string> parse_scontrol_record(const std::string& line) {
    static const std::regex key_re("^[A-Za-z][A-Za-z0-9_:/]*$");
    Record rec;
    std::string key;
    for (const auto& token : split(trim(line), ' ')) {
        auto eq = token.find('=');
        if (eq != std::string::npos && eq > 0 && std::regex_match(token.substr(0, eq), key_re)) {
            key = token.substr(0, eq);
            rec[key] = token.substr(eq + 1);
        } else if (!key.empty()) {
            rec[key] += " " + token;
        }
    }
    return rec;
}

std::string SlurmTarget::job_comment(const std::string& cluster) {
    return "ddl-deploy:" + cluster;
}

Result<RenderedFiles> SlurmTarget::render(const Spec& s, const RenderInputs&) const {
    RenderedFiles f;
    f[SlurmScript::k_path] = SlurmScript::render(s);
    return f;
}

Status SlurmTarget::preflight(const Context& ctx) {
    for (const auto& tool : k_tools) {
        if (find_in_path(tool).empty())
            return Error{"target slurm needs `" + tool +
                         "` on PATH: run ddl on the facility's login node (after `module load slurm` where "
                         "the site needs it)"};
    }
    if (!ctx.spec.target_section<SlurmSpec>().runtime_dir.empty() &&
        !path_exists(ctx.spec.target_section<SlurmSpec>().runtime_dir + "/bin"))
        return Error{
            "slurm.runtime_dir " + ctx.spec.target_section<SlurmSpec>().runtime_dir +
            " has no bin/: copy ddl's dist/bin and dist/lib there, or leave slurm.runtime_dir out and "
            "let ddl stage them in the cluster's state folder"};
    if (ctx.spec.target_section<SlurmSpec>().runtime_dir.empty() && !path_exists(dist_dir() + "/bin"))
        return Error{"the bundled runtime is not built (no " + dist_dir() +
                     "/bin): build ddl first, or set DDL_DIST_DIR"};
    // The partitions, asked from the controller: a clear message before anything is submitted.
    Command c{.argv = {"scontrol", "show", "partition", "-o"}, .timeout = std::chrono::seconds(30)};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (!r->success())
        return Error{"cannot reach the Slurm controller (" + describe_failure(c, *r) +
                     "); check SLURM_CONF and that slurmctld runs"};
    std::vector<std::string> known;
    for (const auto& line : split_lines(r->out)) {
        auto rec = parse_scontrol_record(line);
        if (!rec["PartitionName"].empty()) known.push_back(rec["PartitionName"]);
    }
    for (const auto& want : split(ctx.spec.target_section<SlurmSpec>().partition, ',')) {
        if (std::find(known.begin(), known.end(), want) == known.end())
            return Error{"slurm.partition: no partition \"" + want + "\" on this Slurm cluster (it has: " +
                         (known.empty() ? std::string("none") : join(known, ", ")) + ")"};
    }
    return {};
}

Status SlurmTarget::stage_runtime(Context& ctx, std::string& runtime_dir) {
    if (!ctx.spec.target_section<SlurmSpec>().runtime_dir.empty()) {
        runtime_dir = ctx.spec.target_section<SlurmSpec>().runtime_dir;
        return {};
    }
    // The state folder is where sbatch runs (the job's submit dir), so on a facility it is on the
    // shared file system the compute nodes see, like the user's home.
    runtime_dir = ctx.cluster_dir() + "/runtime";
    std::error_code ec;
    fs::remove_all(runtime_dir, ec);
    for (const char* sub : {"bin", "lib"}) {
        fs::path from = fs::path(dist_dir()) / sub;
        if (!fs::exists(from)) continue;
        fs::create_directories(fs::path(runtime_dir) / sub, ec);
        fs::copy(from, fs::path(runtime_dir) / sub,
                 fs::copy_options::recursive | fs::copy_options::overwrite_existing |
                     fs::copy_options::copy_symlinks,
                 ec);
        if (ec) return Error{"cannot stage the runtime into " + runtime_dir + ": " + ec.message()};
    }
    return {};
}

Result<std::string> SlurmTarget::find_submitted(Context& ctx) {
    Command c{
        .argv = {"squeue", "-h", "-u", current_user(), "-n", SlurmScript::job_name(ctx.spec), "-o", "%i|%k"},
        .timeout = std::chrono::seconds(30)};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (!r->success()) return Error{describe_failure(c, *r)};
    std::vector<std::string> ids;
    for (const auto& line : split_lines(r->out)) {
        auto bar = line.find('|');
        if (bar != std::string::npos && trim(line.substr(bar + 1)) == job_comment(ctx.state.cluster))
            ids.push_back(trim(line.substr(0, bar)));
    }
    if (ids.size() > 1)
        return Error{"several jobs of this cluster are queued (" + join(ids, ", ") +
                     "); cancel the extra ones with "
                     "scancel, then run `ddl deploy` again"};
    return ids.empty() ? std::string() : ids.front();
}

Result<std::string> SlurmTarget::submit(Context& ctx) {
    std::string runtime_dir;
    if (auto s = stage_runtime(ctx, runtime_dir); !s) return s.error();
    ctx.state.target_data["runtime_dir"] = runtime_dir;
    const std::string script = ctx.cluster_dir() + "/rendered/" + SlurmScript::k_path;
    if (!path_exists(script))
        return Error{"the batch script " + script + " is missing; run the render phase"};
    Command c{.argv = {"sbatch", "--parsable", "--comment=" + job_comment(ctx.state.cluster),
                       "--chdir=" + ctx.cluster_dir(), "--export=ALL,DDL_RUNTIME_DIR=" + runtime_dir},
              .cwd = ctx.cluster_dir(),
              .timeout = std::chrono::seconds(60)};
    if (const auto excluded = excluded_nodes(ctx); !excluded.empty())
        c.argv.push_back("--exclude=" + join(excluded, ","));
    c.argv.push_back(script);
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (!r->success()) {
        std::string msg = "sbatch refused the job: " + last_line(r->err);
        if (auto hint = submit_hint(r->err); !hint.empty()) msg += "\n      hint: " + hint;
        return Error{msg};
    }
    // "1234" or "1234;cluster"
    std::string id = trim(last_line(r->out).substr(0, last_line(r->out).find(';')));
    if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
        return Error{"sbatch --parsable printed no job id (got \"" + trim(r->out) + "\")"};
    return id;
}

Status SlurmTarget::wait_running(Context& ctx, const std::string& job_id) {
    using clock = std::chrono::steady_clock;
    const auto deadline_span = m_timing.start_deadline.value_or(
        std::chrono::minutes(ctx.spec.target_section<SlurmSpec>().start_timeout_minutes));
    const auto t0 = clock::now();
    std::string last_seen;
    while (true) {
        auto job = show_job(ctx, job_id);
        if (!job) return job.error();
        if (!job->has_value())
            return Error{"Slurm job " + job_id +
                         " is gone (it ended a while ago or was removed); `ddl deploy` "
                         "submits a new one"};
        const Record& rec = **job;
        const std::string state = state_of(rec);
        const std::string reason = rec.count("Reason") ? rec.at("Reason") : "";
        if (state + reason != last_seen) {
            ctx.progress.note("job " + job_id + " " + state +
                              (reason.empty() || reason == "None" ? "" : " (" + reason + ")"));
            last_seen = state + reason;
        }
        if (state == "RUNNING") {
            const double secs = std::chrono::duration<double>(clock::now() - t0).count();
            ctx.state.target_data["wait_running_s"] = std::round(secs * 100) / 100;
            return record_nodes(ctx, job_id, rec);
        }
        if (k_ended.count(state)) {
            // The next deploy submits afresh; this job is only kept for the message.
            ctx.state.target_data.erase("job_id");
            ctx.state.target_data["ended_job_id"] = job_id;
            (void)ctx.save();
            const std::string exit_code = rec.count("ExitCode") ? rec.at("ExitCode") : "?";
            return Error{"Slurm job " + job_id + " ended before the cluster was up: " + state +
                         (reason.empty() || reason == "None" ? "" : " (" + reason + ")") + ", exit code " +
                         exit_code + output_tail(rec)};
        }
        if (ctx.stop_requested())
            return Error{"interrupted while job " + job_id + " was " + state +
                         "; `ddl deploy` goes on waiting for the same job, `ddl destroy` cancels it"};
        if (clock::now() - t0 >= deadline_span)
            return Error{
                "Slurm job " + job_id + " is still " + state +
                (reason.empty() || reason == "None" ? "" : " (" + reason + ")") + " after " +
                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(deadline_span).count()) +
                " s (slurm.start_timeout_minutes); `ddl deploy` goes on waiting for it, `ddl destroy` "
                "cancels it"};
        std::this_thread::sleep_for(m_timing.poll);
    }
}

Status SlurmTarget::record_nodes(Context& ctx, const std::string& job_id, const Record& job) {
    const std::string nodelist = job.count("NodeList") ? job.at("NodeList") : "";
    if (nodelist.empty() || nodelist == "(null)") return Error{"job " + job_id + " runs but names no nodes"};
    Command hc{.argv = {"scontrol", "show", "hostnames", nodelist}, .timeout = std::chrono::seconds(30)};
    auto hosts = ctx.proc.run(hc);
    if (!hosts) return hosts.error();
    if (!hosts->success()) return Error{describe_failure(hc, *hosts)};
    Command nc{.argv = {"scontrol", "show", "node", "-o", nodelist}, .timeout = std::chrono::seconds(30)};
    auto nodes = ctx.proc.run(nc);
    if (!nodes) return nodes.error();
    if (!nodes->success()) return Error{describe_failure(nc, *nodes)};
    std::map<std::string, std::string> addr;
    for (const auto& line : split_lines(nodes->out)) {
        auto rec = parse_scontrol_record(line);
        if (!rec["NodeName"].empty())
            addr[rec["NodeName"]] = rec["NodeAddr"].empty() ? rec["NodeName"] : rec["NodeAddr"];
    }
    ctx.state.nodes.clear();
    const std::string user = current_user();
    for (const auto& raw : split_lines(hosts->out)) {
        const std::string name = trim(raw);
        if (name.empty()) continue;
        auto it = addr.find(name);
        if (it == addr.end())
            return Error{"`scontrol show node` did not describe node " + name + " of job " + job_id};
        NodeState n;
        n.name = name;
        n.group = ctx.state.nodes.empty() ? "master" : "workers";
        n.address = it->second;
        n.user = user;
        n.gpus = ctx.spec.target_section<SlurmSpec>().gpus_per_node;
        n.slots = ctx.spec.target_section<SlurmSpec>().tasks();
        ctx.state.nodes.push_back(n);
    }
    if (static_cast<int>(ctx.state.nodes.size()) != ctx.spec.target_section<SlurmSpec>().nodes)
        return Error{"job " + job_id + " got " + std::to_string(ctx.state.nodes.size()) +
                     " node(s), the spec asks for " +
                     std::to_string(ctx.spec.target_section<SlurmSpec>().nodes)};
    auto& td = ctx.state.target_data;
    td["nodelist"] = nodelist;
    td["batch_host"] = job.count("BatchHost") ? job.at("BatchHost") : "";
    td["output"] = job.count("StdOut") ? job.at("StdOut") : "";
    td["job_hostfile"] = ctx.cluster_dir() + "/" + SlurmScript::hostfile_name(ctx.spec, job_id);
    char waited[32];
    std::snprintf(waited, sizeof waited, "%.1f", td.value("wait_running_s", 0.0));
    ctx.progress.note("job " + job_id + " RUNNING on " + nodelist + " after " + waited + " s");
    return {};
}

Status SlurmTarget::provision(Context& ctx) {
    std::string id = job_id_of(ctx);
    if (id.empty()) {
        // An earlier deploy may have been killed between sbatch and saving the state.
        auto found = find_submitted(ctx);
        if (!found) return found.error();
        id = *found;
        if (!id.empty()) ctx.progress.note("found this cluster's job " + id + " in the queue; following it");
    } else {
        ctx.progress.note("following job " + id + " from the state (no second submission)");
    }
    if (id.empty()) {
        auto submitted = submit(ctx);
        if (!submitted) return submitted.error();
        id = *submitted;
        ctx.progress.note("submitted job " + id);
    }
    // Recorded before waiting: an interrupted or timed-out deploy resumes with this job.
    ctx.state.target_data["job_id"] = id;
    if (auto s = ctx.save(); !s) return s;
    return wait_running(ctx, id);
}

Status SlurmTarget::destroy(Context& ctx) {
    std::string id = job_id_of(ctx);
    if (id.empty()) {
        auto found = find_submitted(ctx);
        if (!found) return found.error();
        id = *found;
    }
    if (id.empty()) return {}; // nothing was submitted, or it is long gone
    Command c{.argv = {"scancel", id}, .timeout = std::chrono::seconds(60)};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    // A job that ended on its own (autostop's scancel, its time limit) is no failure of the cancel.
    if (!r->success() && r->err.find("Invalid job id") == std::string::npos &&
        r->err.find("already completing or completed") == std::string::npos)
        return Error{"scancel " + id + " failed: " + last_line(r->err)};
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    while (true) {
        auto job = show_job(ctx, id);
        if (!job) return job.error();
        const std::string state = job->has_value() ? state_of(**job) : "";
        if (!job->has_value() || (k_ended.count(state) && state != "COMPLETING")) {
            ctx.progress.note("job " + id + (state.empty() ? " is gone" : " " + state));
            ctx.state.target_data.erase("job_id");
            return {};
        }
        if (clock::now() - t0 >= m_timing.cancel_deadline)
            return Error{"job " + id + " is still " + state +
                         " after scancel; ask the facility's admins, or check "
                         "`scontrol show job " +
                         id + "`"};
        std::this_thread::sleep_for(m_timing.poll);
    }
}

Status SlurmTarget::probe(Context& ctx) {
    const std::string id = job_id_of(ctx);
    if (id.empty()) return Error{"no Slurm job in the state; run the provision phase first"};
    const std::string n = std::to_string(ctx.state.nodes.size());
    // One task per node inside the allocation, next to the job's own (holding) step.
    Command c{.argv = {"srun", "--jobid=" + id, "--overlap", "--nodes=" + n, "--ntasks=" + n,
                       "--ntasks-per-node=1", "--label", "/bin/sh", "-c",
                       "echo \"@slurm $SLURMD_NODENAME\"; " + probe_command()},
              .timeout = std::chrono::seconds(120)};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (!r->success()) return Error{"probe through srun failed: " + describe_failure(c, *r)};
    // "<task>: <line>" -> each task's own lines, in order.
    std::map<std::string, std::string> by_task;
    for (const auto& line : split_lines(r->out)) {
        auto colon = line.find(": ");
        if (colon == std::string::npos) continue;
        by_task[trim(line.substr(0, colon))] += line.substr(colon + 2) + "\n";
    }
    std::vector<std::string> problems;
    std::set<std::string> probed;
    for (const auto& [task, text] : by_task) {
        std::string node_name;
        for (const auto& l : split_lines(text))
            if (starts_with(l, "@slurm ")) node_name = trim(l.substr(7));
        auto it = std::find_if(ctx.state.nodes.begin(), ctx.state.nodes.end(),
                               [&](const NodeState& ns) { return ns.name == node_name; });
        if (it == ctx.state.nodes.end()) {
            problems.push_back("task " + task + " ran on \"" + node_name + "\", not a node of the job");
            continue;
        }
        if (auto s = parse_probe_output(text, *it); !s) {
            problems.push_back(it->name + ": " + s.error().message);
            continue;
        }
        it->slots = ctx.spec.target_section<SlurmSpec>()
                        .tasks(); // srun starts this many ranks per node, whatever was probed
        probed.insert(it->name);
        ctx.progress.node(it->name, std::to_string(it->gpus) + " GPU(s), " + std::to_string(it->cpus) +
                                        " CPU(s), " + it->os);
    }
    for (const auto& node : ctx.state.nodes)
        if (!probed.count(node.name)) problems.push_back(node.name + ": no probe answer");
    if (!problems.empty()) return Error{"probe failed: " + join(problems, "; ")};
    return {};
}

Status SlurmTarget::write_hostfile(Context& ctx) {
    // The nodes are the job's: no SSH to them, so the hostfile stays here (the job writes its own too).
    return write_file_atomic(ctx.cluster_dir() + "/hostfile",
                             format_hostfile(ctx.state.nodes, ctx.spec.hostfile_format), 0600);
}

std::string SlurmTarget::why_no_ssh(const std::string& what) const {
    return what + " works over SSH, which a Slurm facility's nodes do not offer ddl; on a slurm cluster use "
                  "`ddl run -- PROG` (an srun step of the job)";
}

std::optional<Status> SlurmTarget::replace_phase(PhaseId phase, Context& ctx) {
    if (phase == PhaseId::wait_ssh) {
        ctx.progress.note("slurm: nodes are reached through Slurm (srun), not SSH; nothing to wait for");
        return Status{};
    }
    if (phase == PhaseId::configure) {
        ctx.progress.note(
            "slurm: configure skipped (no root on a facility's nodes); the runtime is staged in " +
            ctx.state.target_data.value("runtime_dir", std::string("slurm.runtime_dir")));
        return Status{};
    }
    if (phase == PhaseId::probe) return probe(ctx);
    if (phase == PhaseId::hostfile) return write_hostfile(ctx);
    return std::nullopt;
}

std::vector<PlannedNode> SlurmTarget::planned_nodes(const Spec& spec) const {
    const auto& s = spec.target_section<SlurmSpec>();
    std::string what =
        std::to_string(s.nodes) + " node(s)" + (s.partition.empty() ? "" : " in partition " + s.partition) +
        ", " + std::to_string(s.tasks()) + " task(s) per node" +
        (s.gpus_per_node > 0 ? ", " + std::to_string(s.gpus_per_node) + " GPU(s) per node" : "") + ", time " +
        s.time + (s.account.empty() ? "" : ", account " + s.account);
    return {{"allocation", what}};
}

Status SlurmTarget::plan(const PlanRequest& req, DeployPlan& out) {
    const std::string id = job_id_of(req.ctx);
    const auto wanted = planned_nodes(req.ctx.spec).front();
    if (id.empty()) {
        out.changes.push_back({"create", "node", wanted.name, wanted.detail});
    } else {
        // provision follows the job it submitted; it never submits a second one for a changed spec.
        const auto had = req.deployed ? planned_nodes(*req.deployed).front().detail : wanted.detail;
        out.changes.push_back({"keep", "node", wanted.name, "job " + id + ": " + had});
        if (had != wanted.detail)
            out.notes.push_back("the spec asks for " + wanted.detail + "; a deploy keeps following job " +
                                id + ": destroy the cluster and deploy again for the new allocation");
    }
    out.notes.push_back("Slurm names the nodes when it allocates them; `ddl status` lists them after deploy");
    return {};
}

} // namespace ddl
