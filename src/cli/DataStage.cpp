#include "cli/DataStage.hpp"

#include "cli/DataSource.hpp"
#include "cli/Datasets.hpp"
#include "cli/OpenCluster.hpp"
#include "cli/WorkdirSync.hpp"
#include "provision/NodeFiles.hpp"
#include "remote/RemoteExecutor.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"
#include "util/TreeLinks.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <regex>

namespace ddl::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto k_copy_timeout = std::chrono::hours(24);
constexpr auto k_hash_timeout = std::chrono::hours(6);

// Where a dataset's copy keeps its bookkeeping: beside it, in the same parent folder.
struct CopyPaths {
    std::string parent, dir, marker, cache;
};

CopyPaths copy_paths(const Spec& spec, const DatasetSpec& d) {
    CopyPaths p;
    p.dir = dataset_path(spec, d);
    p.parent = p.dir.substr(0, p.dir.rfind('/'));
    p.marker = p.parent + "/." + d.name + ".staged";
    p.cache = p.parent + "/." + d.name + ".manifest";
    return p;
}

// The nodes that hold a copy: every node for to: local, the master for to: shared.
std::vector<const NodeState*> copy_nodes(const Context& ctx, const DatasetSpec& d) {
    std::vector<const NodeState*> out;
    if (d.to_shared) {
        if (const NodeState* m = master_of(ctx)) out.push_back(m);
        return out;
    }
    for (const auto& n : ctx.state.nodes)
        out.push_back(&n);
    return out;
}

struct RsyncStats {
    int files = 0, deleted = 0;
    std::uint64_t bytes = 0;
};

std::uint64_t stat_number(const std::string& out, const std::string& label) {
    std::regex re(label + ": ([0-9,]+)");
    std::smatch m;
    if (!std::regex_search(out, m, re)) return 0;
    std::string digits = m[1];
    digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
    return static_cast<std::uint64_t>(parse_int(digits).value_or(0));
}

RsyncStats parse_stats(const std::string& out) {
    return {static_cast<int>(stat_number(out, "Number of regular files transferred")),
            static_cast<int>(stat_number(out, "Number of deleted files")),
            stat_number(out, "Total transferred file size")};
}

std::string first_error_line(const std::string& err) {
    auto lines = split_lines(trim(err));
    return lines.empty() ? "" : ": " + lines.front();
}

class Stager {
public:
    Stager(Context& ctx, const DatasetSpec& d, const SourceDir& src, const Manifest& want, bool verify,
           std::string excluded)
        : m_ctx(ctx), m_d(d), m_src(src), m_want(want), m_verify(verify), m_paths(copy_paths(ctx.spec, d)),
          m_excluded(std::move(excluded)) {}

    Result<NodeStage> run(const NodeState& n) {
        NodeStage out{.node = n.name};
        const auto start = Clock::now();
        if (auto s = prepare(n); !s) return s.error();
        auto copied = copy(n);
        if (!copied) return copied.error();
        out.sent_files = copied->files;
        out.sent_bytes = copied->bytes;
        out.deleted = copied->deleted;
        kill_point("data:" + m_d.name + ":" + n.name + ":copied");
        auto have = node_manifest(n, m_verify);
        if (!have) return have.error();
        out.hashed = have->hashed;
        auto diff = diff_manifests(m_want, *have);
        if (!diff.to_send().empty()) {
            const auto again = diff.to_send();
            m_ctx.progress.node(n.name, "data " + m_d.name + ": " + std::to_string(again.size()) +
                                            " file(s) differ from the source (first: " + again.front() +
                                            "); sending them again");
            if (auto s = resend(n, again); !s) return s.error();
            out.resent = static_cast<int>(again.size());
            have = node_manifest(n, false);
            if (!have) return have.error();
            out.hashed += have->hashed;
            diff = diff_manifests(m_want, *have);
        }
        if (!diff.empty()) {
            const auto& list = !diff.missing.empty()   ? diff.missing
                               : !diff.changed.empty() ? diff.changed
                                                       : diff.extra;
            return Error{std::to_string(diff.missing.size()) + " missing, " +
                         std::to_string(diff.changed.size()) + " different, " +
                         std::to_string(diff.extra.size()) +
                         " not in the source after the copy (first: " + list.front() + ")"};
        }
        if (auto s = mark(n); !s) return s.error();
        out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return out;
    }

private:
    std::string user(const NodeState& n) const { return n.user.empty() ? m_ctx.spec.access.user : n.user; }

    // The copy's folder, owned by the login user (rsync and the hashing run as it); its marker removed: from
    // here until it is written again the copy counts as not staged.
    Status prepare(const NodeState& n) {
        const std::string u = shell_quote(user(n));
        std::string script = "set -e\nmkdir -p " + shell_quote(m_paths.dir) + "\nchown " + u + " " +
                             shell_quote(m_paths.parent) + " " + shell_quote(m_paths.dir) + "\nrm -f " +
                             shell_quote(m_paths.marker) + "\n";
        auto r = m_ctx.remote.exec(m_ctx.endpoint(n), root_shell_command(script), std::chrono::seconds(60));
        if (!r) return r.error();
        if (!r->ok()) return Error{"cannot prepare " + m_paths.dir + first_error_line(r->err + r->out)};
        return {};
    }

    // The rsync argv: from this machine over the cluster's SSH key, or on the node from the shared folder.
    // Links are copied as links (-l), never followed (no -L, no --copy-unsafe-links): rsync reads no file
    // through one. --safe-links leaves out those whose text leads out of the tree; the ones that do so only
    // through other links are excluded by name (see stage_dataset).
    std::vector<std::string> rsync_argv(const NodeState& n, std::vector<std::string> opts) const {
        std::vector<std::string> argv{"rsync", "--safe-links"};
        argv.insert(argv.end(), opts.begin(), opts.end());
        argv.push_back("--partial-dir=.ddl-partial");
        if (!m_src.in_cluster) argv.insert(argv.end(), {"-e", rsync_ssh(m_ctx, n)});
        argv.push_back(m_src.dir + "/");
        argv.push_back(m_src.in_cluster ? m_paths.dir + "/" : rsync_remote(n, m_paths.dir + "/"));
        return argv;
    }

    // Runs `argv` here or (shared: source) on `n`; its output, or an Error with rsync's first complaint.
    Result<std::string> run_rsync(const NodeState& n, const std::vector<std::string>& argv,
                                  const std::string& input,
                                  const std::function<void(const std::string&)>& on_line) {
        if (m_src.in_cluster) {
            auto r = m_ctx.remote.exec_with_input(m_ctx.endpoint(n), shell_join(argv), input, k_copy_timeout);
            if (!r) return r.error();
            if (!r->ok())
                return Error{"rsync exit " + std::to_string(r->exit_status) + first_error_line(r->err)};
            return r->out;
        }
        Command c{.argv = argv, .timeout = k_copy_timeout, .stdin_data = input, .on_stdout_line = on_line};
        auto r = m_ctx.proc.run(c);
        if (!r) return r.error();
        if (!r->success())
            return Error{"rsync exit " + std::to_string(r->exit_code) + first_error_line(r->err)};
        return r->out;
    }

    Result<RsyncStats> copy(const NodeState& n) {
        int files = 0;
        std::uint64_t bytes = 0;
        auto last = Clock::now();
        auto on_line = [&](const std::string& line) {
            const auto sp = line.find(' ');
            if (sp == std::string::npos || ends_with(line, "/")) return;
            ++files;
            bytes += static_cast<std::uint64_t>(parse_int(line.substr(0, sp)).value_or(0));
            kill_point("data:" + m_d.name + ":file");
            if (Clock::now() - last < std::chrono::seconds(2)) return;
            last = Clock::now();
            m_ctx.progress.node(n.name, "data " + m_d.name + ": " + std::to_string(files) + " file(s), " +
                                            size_text(bytes) + " sent so far");
        };
        std::vector<std::string> opts{"-rlt", "--delete", "--stats", "--out-format=%l %n"};
        if (!m_src.in_cluster) opts.push_back("--exclude-from=-");
        auto out = run_rsync(n, rsync_argv(n, opts), m_excluded, on_line);
        if (!out) return out.error();
        return parse_stats(*out);
    }

    Status resend(const NodeState& n, const std::vector<std::string>& files) {
        auto out = run_rsync(n, rsync_argv(n, {"-lt", "--ignore-times", "--files-from=-"}),
                             join(files, "\n") + "\n", nullptr);
        if (!out) return out.error();
        return {};
    }

    Result<Manifest> node_manifest(const NodeState& n, bool all) {
        auto r = m_ctx.remote.exec(
            m_ctx.endpoint(n), shell_join(manifest_argv(m_paths.dir, m_paths.cache, all)), k_hash_timeout);
        if (!r) return r.error();
        if (!r->ok()) return Error{"cannot list " + m_paths.dir + first_error_line(r->err)};
        return parse_manifest(r->out);
    }

    Status mark(const NodeState& n) {
        auto r = m_ctx.remote.exec(m_ctx.endpoint(n),
                                   "echo " + m_want.digest() + " $(date -u +%FT%TZ) > " +
                                       shell_quote(m_paths.marker),
                                   std::chrono::seconds(60));
        if (!r) return r.error();
        if (!r->ok()) return Error{"cannot record the stage" + first_error_line(r->err)};
        return {};
    }

    Context& m_ctx;
    const DatasetSpec& m_d;
    const SourceDir& m_src;
    const Manifest& m_want;
    bool m_verify;
    CopyPaths m_paths;
    std::string m_excluded; // rsync exclude patterns, one a line: the links that lead out of the source
};

// An rsync pattern that matches the one path `rel` from the top of the copy: wildcard characters escaped
// (rsync honours the backslash only in a pattern that holds a wildcard).
std::string exact_pattern(const std::string& rel) {
    if (rel.find_first_of("*?[") == std::string::npos) return "/" + rel;
    std::string out = "/";
    for (char c : rel) {
        if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// The exclude list for a source on this machine: its links that lead out of it, found by resolving them
// (rsync's --safe-links judges a link's text alone, and a chain such as d -> . and x -> d/d/../.. passes
// it). A warning names the first.
Result<std::string> excluded_links(Context& ctx, const DatasetSpec& d, const SourceDir& src) {
    if (src.in_cluster) return std::string();
    auto links = escaping_links(src.dir);
    if (!links) return Error{"dataset " + d.name + ": " + links.error().message};
    std::string out;
    for (const auto& l : *links)
        out += exact_pattern(l.path) + "\n";
    if (!links->empty())
        ctx.progress.note("warning: data " + d.name + ": " + std::to_string(links->size()) +
                          " link(s) lead out of " + src.dir + " and are not copied (first: " +
                          links->front().path + " -> " + links->front().target + ")");
    return out;
}

// The source's manifest: made here, or on the master for a shared: source (its cache folder made first).
Result<Manifest> source_manifest(Context& ctx, const DatasetSpec& d, const SourceDir& src, bool all) {
    const auto argv = manifest_argv(src.dir, src.cache, all);
    if (src.in_cluster) {
        const NodeState* m = master_of(ctx);
        if (!m) return Error{"cluster " + ctx.state.cluster + " has no nodes"};
        const std::string parent = src.cache.substr(0, src.cache.rfind('/'));
        const std::string user = m->user.empty() ? ctx.spec.access.user : m->user;
        const std::string make = root_shell_command("mkdir -p " + shell_quote(parent) + " && chown " +
                                                    shell_quote(user) + " " + shell_quote(parent));
        // In a subshell: root_shell_command ends in exec.
        auto r = ctx.remote.exec(ctx.endpoint(*m), "(" + make + ") && " + shell_join(argv), k_hash_timeout);
        if (!r) return r.error();
        if (!r->ok())
            return Error{"dataset " + d.name + ": cannot list " + src.dir + " on the master" +
                         first_error_line(r->err)};
        return parse_manifest(r->out);
    }
    if (auto s = make_dirs(src.cache.substr(0, src.cache.rfind('/')), 0700); !s) return s.error();
    Command c{.argv = argv, .timeout = k_hash_timeout};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (!r->success())
        return Error{"dataset " + d.name + ": cannot list " + src.dir + first_error_line(r->err)};
    return parse_manifest(r->out);
}

} // namespace

std::string size_text(std::uint64_t bytes) {
    char buf[32];
    if (bytes >= 1000ULL * 1000 * 1000)
        std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(bytes) / 1e9);
    else
        std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return buf;
}

Result<DatasetStage> stage_dataset(Context& ctx, const DatasetSpec& d, bool verify) {
    const auto start = Clock::now();
    auto src = resolve_source(ctx, d, true);
    if (!src) return src.error();
    if (src->downloaded)
        ctx.progress.note("data " + d.name + ": downloaded " + size_text(src->downloaded_bytes) +
                          " and unpacked");
    auto want = source_manifest(ctx, d, *src, verify);
    if (!want) return want.error();
    DatasetStage out{.name = d.name,
                     .path = dataset_path(ctx.spec, d),
                     .files = static_cast<int>(want->files.size()),
                     .bytes = want->bytes(),
                     .source_hashed = want->hashed};
    const auto nodes = copy_nodes(ctx, d);
    ctx.progress.note("data " + d.name + ": " + std::to_string(out.files) + " file(s), " +
                      size_text(out.bytes) + " to " + out.path + " on " + std::to_string(nodes.size()) +
                      " node(s)");
    auto excluded = excluded_links(ctx, d, *src);
    if (!excluded) return excluded.error();
    Stager stager(ctx, d, *src, *want, verify, std::move(*excluded));
    std::mutex mu;
    std::vector<std::string> failed;
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        const NodeState& n = *nodes[i];
        auto r = stager.run(n);
        std::lock_guard lock(mu);
        if (!r) {
            failed.push_back(n.name + ": " + r.error().message);
            return;
        }
        ctx.progress.node(n.name, "data " + d.name + ": sent " + std::to_string(r->sent_files) +
                                      " file(s) (" + size_text(r->sent_bytes) + "), deleted " +
                                      std::to_string(r->deleted) + ", hashed " + std::to_string(r->hashed) +
                                      ", sent again " + std::to_string(r->resent));
        out.nodes.push_back(*r);
    });
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::sort(out.nodes.begin(), out.nodes.end(),
              [](const NodeStage& a, const NodeStage& b) { return a.node < b.node; });
    if (!failed.empty()) {
        std::sort(failed.begin(), failed.end());
        return Error{"dataset " + d.name + " not staged on " + join(failed, "; ")};
    }
    return out;
}

Result<std::vector<NodeDataState>> dataset_state(Context& ctx, const DatasetSpec& d) {
    std::string digest;
    if (auto src = resolve_source(ctx, d, false)) {
        auto m = source_manifest(ctx, d, *src, false);
        if (!m) return m.error();
        digest = m->digest();
    }
    const auto paths = copy_paths(ctx.spec, d);
    const auto nodes = copy_nodes(ctx, d);
    std::vector<NodeDataState> out(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        out[i].node = nodes[i]->name;
        out[i].state = "not staged";
        auto r = ctx.remote.exec(ctx.endpoint(*nodes[i]), "cat " + shell_quote(paths.marker) + " 2>/dev/null",
                                 std::chrono::seconds(30));
        if (!r || !r->ok()) return;
        const auto words = split(trim(r->out), ' ');
        if (words.size() != 2) return;
        out[i].state = digest.empty() ? "staged" : words[0] == digest ? "current" : "stale";
        out[i].staged_at = words[1];
    });
    return out;
}

} // namespace ddl::cli
