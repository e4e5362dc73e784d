// The spec's setup programs on every node (see WorkdirSync.hpp, run_setup): a node runs them when the
// digest of what they depend on differs from the one it recorded after its last successful run.
#include "cli/WorkdirSync.hpp"
#include "core/Log.hpp"
#include "remote/RemoteExecutor.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <mutex>
#include <string_view>

namespace ddl::cli {
namespace {

// The script a node runs (on bash's standard input, so the env's values are in no command line). It
// prints one of "ddl-setup:unchanged", "ddl-setup:ran", "ddl-setup:nodir" or
// "ddl-setup:failed:<program>:<line>:<exit status>".
std::string setup_script(const Context& ctx, const NodeState& n, const std::string& digest,
                         const std::map<std::string, std::string>& env) {
    const std::string base = "/var/lib/ddl/setup/" + ctx.spec.name + "-" + n.name;
    std::string s = "set -u\n";
    // The log holds what setup printed (tokens, paths): 0600 in a 0700 folder of the login user, also
    // where an older log or folder was made with wider modes.
    s += "if [ \"$(id -u)\" = 0 ]; then install -d -m 0700 /var/lib/ddl/setup; else sudo -n install -d -m "
         "0700 "
         "-o \"$(id -un)\" /var/lib/ddl/setup; fi\n";
    s += "chmod 700 /var/lib/ddl/setup 2>/dev/null\n";
    s += "base=" + shell_quote(base) + "\nwant=" + shell_quote(digest) + "\n";
    s += "if [ \"$(cat \"$base.hash\" 2>/dev/null)\" = \"$want\" ]; then echo ddl-setup:unchanged; exit 0; "
         "fi\n";
    s += "cd " + shell_quote(remote_workdir(ctx.spec)) + " || { echo ddl-setup:nodir; exit 1; }\n";
    s += "rm -f \"$base.hash\"\n";
    for (const auto& [name, value] : env)
        s += "export " + name + "=" + shell_quote(value) + "\n";
    s += "export DDL_WORKDIR=\"$PWD\" DDL_NODE=" + shell_quote(n.name) + "\n";
    s += "tmp=$(mktemp -d)\ntrap 'rm -rf \"$tmp\"' EXIT\n";
    s += "rm -f \"$base.log\"\n";
    // Made anew under umask 077 in a subshell: the setup programs keep the login's own umask.
    s += "(umask 077; echo \"== ddl setup on " + n.name + " $(date -u +%FT%TZ)\" > \"$base.log\")\n";
    const auto& programs = ctx.spec.work.setup;
    for (std::size_t i = 0; i < programs.size(); ++i) {
        const std::string idx = std::to_string(i);
        s += "printf '%s\\n' " + shell_quote(programs[i]) + " > \"$tmp/" + idx + ".sh\"\n";
        s += "echo \"== setup[" + idx + "]\" >> \"$base.log\"\n";
        s += "bash -c 'trap \"echo \\$LINENO > $0\" ERR; set -eE; . \"$1\"' \"$tmp/" + idx +
             ".line\" \"$tmp/" + idx + ".sh\" >> \"$base.log\" 2>&1 < /dev/null\n";
        s += "rc=$?\nif [ $rc -ne 0 ]; then echo \"ddl-setup:failed:" + idx + ":$(cat \"$tmp/" + idx +
             ".line\" 2>/dev/null || echo 0):$rc\"; tail -n 20 \"$base.log\" >&2; exit 1; fi\n";
    }
    s += "printf %s \"$want\" > \"$base.hash\"\necho ddl-setup:ran\n";
    return s;
}

// "cluster.yaml:12: setup[1] line 2 (pip install x) failed on node worker1 (exit 1)" from the marker line.
std::string failure_text(const Context& ctx, const NodeState& n, const std::string& marker) {
    auto parts = split(marker, ':'); // ddl-setup, failed, program, line, status
    if (parts.size() < 5) return "setup failed on node " + n.name;
    const auto idx = static_cast<std::size_t>(parse_int(parts[2]).value_or(0));
    const auto line = static_cast<int>(parse_int(parts[3]).value_or(0));
    const auto& w = ctx.spec.work;
    std::string where =
        idx < w.setup_lines.size() ? "line " + std::to_string(w.setup_lines[idx]) + " of the spec, " : "";
    std::string text;
    if (idx < w.setup.size()) {
        auto lines = split_lines(w.setup[idx]);
        if (line >= 1 && static_cast<std::size_t>(line) <= lines.size())
            text = " (" + trim(lines[static_cast<std::size_t>(line) - 1]) + ")";
    }
    return where + "setup[" + std::to_string(idx) + "] line " + std::to_string(line) + text +
           " failed on node " + n.name + " (exit " + parts[4] + ")";
}

// A node's setup failure: its message with the node's name as k_node_placeholder, and its log's end.
constexpr std::string_view k_node_placeholder = "\x01";
struct NodeFailure {
    std::string node, head, tail;
};

// Identical failures (the same program, line, status and output) said once with every node's name.
std::vector<std::string> grouped_failures(const Context& ctx, std::vector<NodeFailure> failures) {
    std::sort(failures.begin(), failures.end(),
              [](const NodeFailure& a, const NodeFailure& b) { return a.node < b.node; });
    std::vector<std::pair<const NodeFailure*, std::vector<std::string>>> groups;
    for (const auto& f : failures) {
        auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
            return g.first->head == f.head && g.first->tail == f.tail;
        });
        if (same == groups.end())
            groups.push_back({&f, {f.node}});
        else
            same->second.push_back(f.node);
    }
    std::vector<std::string> out;
    for (const auto& [f, names] : groups) {
        const bool several = names.size() > 1;
        std::string text = f->head;
        const std::string who = (several ? "nodes " : "node ") + join(names, ", ");
        const std::string placeholder = "node " + std::string(k_node_placeholder);
        if (auto at = text.find(placeholder); at != std::string::npos)
            text.replace(at, placeholder.size(), who);
        const std::string log =
            "/var/lib/ddl/setup/" + ctx.spec.name + "-" + (several ? "<node>" : names[0]) + ".log";
        if (!f->tail.empty())
            text += (several ? "; their logs " + log + " end (the same on each):\n  "
                             : "; its log " + log + " ends:\n  ") +
                    f->tail;
        out.push_back(std::move(text));
    }
    return out;
}

} // namespace

Result<SetupReport> run_setup(Context& ctx, const std::map<std::string, std::string>& env) {
    SetupReport report;
    if (ctx.spec.work.setup.empty()) return report;
    auto local = local_workdir(ctx);
    if (!local) return local.error();
    auto digested = setup_digest(ctx.spec, *local, env);
    if (!digested) return digested.error();
    const std::string digest = *digested;
    std::mutex mu;
    std::vector<std::string> failed;
    std::vector<NodeFailure> setup_failures;
    const auto& nodes = ctx.state.nodes;
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        const NodeState& n = nodes[i];
        auto r = ctx.remote.exec_with_input(ctx.endpoint(n), "bash -s", setup_script(ctx, n, digest, env),
                                            std::chrono::hours(2));
        std::lock_guard lock(mu);
        if (!r) {
            failed.push_back("node " + n.name + ": " + r.error().message);
            return;
        }
        std::string marker;
        for (const auto& l : split_lines(r->out))
            if (starts_with(l, "ddl-setup:")) marker = l;
        if (marker == "ddl-setup:ran") {
            report.ran.push_back(n.name);
        } else if (marker == "ddl-setup:unchanged") {
            report.unchanged.push_back(n.name);
        } else if (marker == "ddl-setup:nodir") {
            failed.push_back("node " + n.name + " has no workdir " + remote_workdir(ctx.spec) +
                             "; run `ddl sync`");
        } else {
            NodeState named = n;
            named.name = std::string(k_node_placeholder);
            std::string head =
                starts_with(marker, "ddl-setup:failed:")
                    ? failure_text(ctx, named, marker)
                    : "setup failed on node " + named.name + " (exit " + std::to_string(r->exit_status) + ")";
            // The log's end without ddl's own header line (node and time), so that alike failures group.
            std::vector<std::string> tail;
            for (auto& l : split_lines(r->err))
                if (!starts_with(l, "== ddl setup on ")) tail.push_back(std::move(l));
            setup_failures.push_back({n.name, std::move(head), join(tail, "\n  ")});
        }
    });
    for (auto& f : grouped_failures(ctx, setup_failures))
        failed.push_back(std::move(f));
    std::sort(report.ran.begin(), report.ran.end());
    std::sort(report.unchanged.begin(), report.unchanged.end());
    if (!failed.empty()) {
        std::sort(failed.begin(), failed.end());
        return Error{join(failed, "\n")};
    }
    return report;
}

} // namespace ddl::cli
