#include "cli/WorkdirSync.hpp"

#include "cli/OpenSsh.hpp"
#include "core/Log.hpp"
#include "provision/NodeFiles.hpp"
#include "remote/RemoteExecutor.hpp"
#include "spec/WorkSection.hpp"
#include "util/Digest.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <regex>
#include <set>

namespace ddl::cli {
namespace {

namespace fs = std::filesystem;

const char* k_recorded = "workdir.path"; // in the cluster's state folder: the workdir of the last deploy

// Whether every node sees the same folder: the shared NFS folder, or nodes that share this machine's file
// system (the local target's namespaces), where one copy serves every node.
bool one_copy(const Spec& spec) {
    return spec.services.nfs || (spec.section.get() && spec.section.get()->nodes_are() == "namespaces");
}

std::string marker_path(const Spec& spec) {
    return "/var/lib/ddl/sync/" + spec.name + ".done";
}

// The nodes that hold a copy of the workdir: the master alone where the nodes share a folder.
std::vector<const NodeState*> copy_nodes(const Context& ctx) {
    std::vector<const NodeState*> nodes;
    for (const auto& n : ctx.state.nodes)
        if (!one_copy(ctx.spec) || nodes.empty()) nodes.push_back(&n);
    return nodes;
}

// Creates the remote workdir (owned by the login user) and removes the node's marker: from here until
// the marker is written again, the node's copy counts as not synced.
Status prepare_node(Context& ctx, const NodeState& n, const std::string& dir) {
    const std::string user = n.user.empty() ? ctx.spec.access.user : n.user;
    std::string script = "set -e\nmkdir -p " + shell_quote(dir) +
                         " /var/lib/ddl/sync /var/lib/ddl/setup /var/lib/ddl/jobs/" + ctx.spec.name + "\n" +
                         "chown " + shell_quote(user) + " " + shell_quote(dir) +
                         " /var/lib/ddl/setup /var/lib/ddl/jobs/" + ctx.spec.name +
                         // The setup logs hold what setup printed (tokens, paths): the login user's only.
                         "\nchmod 700 /var/lib/ddl/setup\nrm -f " + shell_quote(marker_path(ctx.spec)) + "\n";
    auto r = ctx.remote.exec(ctx.endpoint(n), root_shell_command(script), std::chrono::seconds(60));
    if (!r) return r.error();
    if (!r->ok()) return Error{"cannot prepare " + dir + ": " + trim(r->err + r->out)};
    return {};
}

Status mark_synced(Context& ctx, const NodeState& n) {
    auto r = ctx.remote.exec(ctx.endpoint(n),
                             root_shell_command("date -u +%FT%TZ > " + shell_quote(marker_path(ctx.spec))),
                             std::chrono::seconds(60));
    if (!r) return r.error();
    if (!r->ok()) return Error{"cannot record the sync: " + trim(r->err)};
    return {};
}

} // namespace

std::string rsync_ssh(const Context& ctx, const NodeState& n) {
    auto ssh = openssh_argv(ctx, n, {"-o", "BatchMode=yes"});
    ssh.pop_back(); // the destination: rsync adds it
    return shell_join(ssh);
}

std::string rsync_remote(const NodeState& n, const std::string& path) {
    std::string host = n.address.find(':') != std::string::npos ? "[" + n.address + "]" : n.address;
    return host + ":" + path;
}

Result<std::map<std::string, std::string>> resolve_spec_env(const Spec& spec) {
    std::map<std::string, std::string> env;
    for (const auto& v : spec.work.env) {
        if (v.from_env.empty()) {
            env[v.name] = v.value;
            continue;
        }
        const char* here = std::getenv(v.from_env.c_str());
        if (!here)
            return Error{"env." + v.name + " is read from $" + v.from_env +
                         ", which is not set here; export it before running ddl"};
        if (*here) log::register_secret(here);
        env[v.name] = here;
    }
    return env;
}

std::string remote_workdir(const Spec& spec) {
    return node_workdir(spec);
}

Result<std::string> local_workdir(const Context& ctx) {
    const auto& w = ctx.spec.work;
    if (w.workdir.empty())
        return Error{"cluster " + ctx.state.cluster +
                     " has no workdir; set \"workdir:\" in its spec and deploy"};
    std::string path = w.workdir_path;
    if (!fs::path(path).is_absolute()) {
        auto recorded = read_file_limited(ctx.cluster_dir() + "/" + k_recorded, 4096);
        if (!recorded)
            return Error{"the workdir of cluster " + ctx.state.cluster +
                         " is relative to its spec file; run `ddl deploy SPEC` once to record where it is"};
        path = trim(*recorded);
    }
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return Error{"workdir " + path + " is not a folder"};
    return path;
}

std::vector<std::string> rsync_filters(const std::string& workdir, const std::string& state_dir) {
    std::vector<std::string> f{"--filter=:- .gitignore", "--filter=:- .ddlignore", "--exclude=/.git/"};
    std::error_code ec;
    fs::path state = fs::weakly_canonical(fs::absolute(state_dir, ec), ec);
    fs::path root = fs::weakly_canonical(workdir, ec);
    auto rel = state.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != ".." && rel != ".") f.push_back("--exclude=/" + rel.string() + "/");
    return f;
}

std::vector<std::string> files_named_by(const std::string& program, const std::string& workdir) {
    static const std::regex word(R"([^\s;|&<>()'"=`$]+)");
    std::set<std::string> seen;
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(program.begin(), program.end(), word); it != std::sregex_iterator();
         ++it) {
        std::string w = it->str();
        while (starts_with(w, "./"))
            w = w.substr(2);
        if (w.empty() || w.front() == '/' || w.front() == '-' || w.find("..") != std::string::npos) continue;
        // Anything there but a folder: a link or a FIFO is named too, and setup_digest judges it.
        std::error_code ec;
        const fs::path p = fs::path(workdir) / w;
        if (fs::exists(fs::symlink_status(p, ec)) && !fs::is_directory(p, ec) && seen.insert(w).second)
            out.push_back(w);
    }
    return out;
}

Result<std::string> setup_digest(const Spec& spec, const std::string& workdir,
                                 const std::map<std::string, std::string>& env) {
    std::error_code ec;
    const fs::path root = fs::weakly_canonical(workdir, ec);
    Digest d;
    d.add("setup/1");
    for (std::size_t i = 0; i < spec.work.setup.size(); ++i) {
        const auto& p = spec.work.setup[i];
        d.add(p);
        for (const auto& f : files_named_by(p, workdir)) {
            d.add(f);
            const fs::path path = fs::path(workdir) / f;
            const fs::path real = fs::weakly_canonical(path, ec);
            const fs::path rel = ec ? fs::path("..") : real.lexically_relative(root);
            if (rel.empty() || *rel.begin() == "..") {
                // A link out of the workdir reaches the nodes as a link (rsync -l), so the link is what
                // setup depends on; what it points at here (/proc/kmsg, a huge file) is not read.
                const fs::path link = fs::read_symlink(path, ec);
                d.add("outside").add(ec ? real.string() : link.string());
                continue;
            }
            auto text = read_regular_file(path.string(), k_setup_file_limit);
            if (!text)
                return Error{(i < spec.work.setup_lines.size()
                                  ? "line " + std::to_string(spec.work.setup_lines[i]) + " of the spec, "
                                  : std::string()) +
                             "setup[" + std::to_string(i) + "] names " + f + ": " + text.error().message +
                             "; ddl reads each file setup names (up to " +
                             std::to_string(k_setup_file_limit >> 20) +
                             " MiB) to tell whether setup must run again; run a script that uses it instead"};
            d.add("file").add(*text);
        }
    }
    for (const auto& [name, value] : env)
        d.add(name).add(value);
    return d.hex();
}

Result<SyncReport> sync_workdir(Context& ctx, const std::string& state_dir) {
    auto local = local_workdir(ctx);
    if (!local) return local.error();
    // Again here: a stored spec's workdir (recorded at deploy) was not checked when it was read.
    if (auto why = refuse_workdir(ctx.spec, *local)) return Error{why.message + "; " + why.hint};
    (void)write_file_atomic(ctx.cluster_dir() + "/" + k_recorded, *local + "\n");
    SyncReport report;
    report.remote_dir = remote_workdir(ctx.spec);
    const auto nodes = copy_nodes(ctx);
    const auto start = std::chrono::steady_clock::now();
    std::mutex mu;
    std::vector<std::string> failed;
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        const NodeState& n = *nodes[i];
        auto fail = [&](const std::string& why) {
            std::lock_guard lock(mu);
            failed.push_back(n.name + ": " + why);
        };
        if (auto s = prepare_node(ctx, n, report.remote_dir); !s) return fail(s.error().message);
        Command c{.argv = {"rsync", "-rlptz", "--delete", "--partial-dir=.ddl-partial", "--delay-updates",
                           "--itemize-changes", "-e", rsync_ssh(ctx, n)}};
        for (auto& f : rsync_filters(*local, state_dir))
            c.argv.push_back(std::move(f));
        c.argv.push_back(*local + "/");
        c.argv.push_back(rsync_remote(n, report.remote_dir + "/"));
        c.timeout = std::chrono::hours(2);
        auto r = ctx.proc.run(c);
        if (!r) return fail(r.error().message);
        if (!r->success()) {
            auto lines = split_lines(r->err);
            return fail("rsync exit " + std::to_string(r->exit_code) +
                        (lines.empty() ? "" : ": " + lines.back()));
        }
        int changed = 0;
        for (const auto& line : split_lines(r->out))
            if (!line.empty() && line[0] != '.') ++changed;
        kill_point("sync:" + n.name + ":copied");
        if (auto s = mark_synced(ctx, n); !s) return fail(s.error().message);
        std::lock_guard lock(mu);
        report.nodes.push_back(n.name);
        report.changed += changed;
    });
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::sort(report.nodes.begin(), report.nodes.end());
    if (!failed.empty()) {
        std::sort(failed.begin(), failed.end());
        return Error{"sync failed on " + join(failed, "; ")};
    }
    return report;
}

Status check_synced(Context& ctx) {
    if (!ctx.state.setup_failed.empty())
        return Error{"the setup failed: " + ctx.state.setup_failed +
                     "\nhint: fixed in a file it names: `ddl sync " + ctx.state.cluster +
                     "` runs it again; fixed in the spec: `ddl deploy " +
                     (ctx.state.spec_file.empty() ? std::string("<the spec>") : ctx.state.spec_file) + "`"};
    std::mutex mu;
    std::vector<std::string> missing;
    const auto nodes = copy_nodes(ctx);
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        auto r = ctx.remote.exec(ctx.endpoint(*nodes[i]), "test -e " + shell_quote(marker_path(ctx.spec)),
                                 std::chrono::seconds(30));
        std::lock_guard lock(mu);
        if (!r || !r->ok()) missing.push_back(nodes[i]->name);
    });
    if (missing.empty()) return {};
    std::sort(missing.begin(), missing.end());
    return Error{"the workdir is not synced on " + join(missing, ", ") +
                 " (no sync finished there since the last one started); run `ddl sync " + ctx.state.cluster +
                 "`"};
}

} // namespace ddl::cli
