#include "provision/NodeFiles.hpp"

#include "util/Strings.hpp"

#include <filesystem>

namespace ddl {

std::string write_files_script(const std::vector<NodeFile>& files) {
    // cmp and stat: diffutils and coreutils, both Essential packages on Debian and Ubuntu.
    std::string s = "set -eu\numask 022\n";
    for (const auto& f : files) {
        const std::string path = shell_quote(f.path);
        const std::string tmp = shell_quote(f.path + ".ddl-tmp");
        s += "mkdir -p " + shell_quote(std::filesystem::path(f.path).parent_path().string()) + "\n";
        // A write that fails (a full disk) leaves no half-written file beside the real one.
        s += "if ! { printf '%s' " + shell_quote(f.content) + " >" + tmp + " && chmod 0644 " + tmp +
             "; }; then rm -f " + tmp + "; exit 1; fi\n";
        s += "if cmp -s " + tmp + " " + path + " && [ \"$(stat -c %a " + path + ")\" = 644 ]; then rm -f " +
             tmp + "; else mv -f " + tmp + " " + path + "; echo " + path + "; fi\n";
    }
    return s;
}

std::string unpack_runtime_script(const std::string& dir) {
    const std::string d = shell_quote(dir);
    return "mkdir -p " + d + "\nt=" + shell_quote(dir + "/.runtime.tar.ddl-tmp") +
           "\ntrap 'rm -f \"$t\"' EXIT\ncat >\"$t\"\n"
           "if ! tar --compare --file \"$t\" --directory " +
           d +
           " >/dev/null 2>&1; then\n"
           "  tar --extract --file \"$t\" --directory " +
           d + "\n  echo " + d +
           "\nfi\n"
           // Where earlier versions of ddl (a role copied the archive) left it.
           "rm -f " +
           shell_quote(dir + "/runtime.tar") + "\n";
}

std::string root_shell_command(const std::string& script) {
    const std::string sh = script.empty() ? "sh -s" : "sh -c " + shell_quote(script);
    return "if [ \"$(id -u)\" = 0 ]; then exec " + sh + "; else exec sudo -n " + sh + "; fi";
}

std::string node_env(const Context& ctx, const NodeState& node) {
    // Where rank 0 runs when mpirun/mpiexec read ddl's hostfiles: their first node (HostfileWriter: the
    // nodes in order, those with slots), which is the master node unless the probe gave it no slots (a
    // GPU-less master beside GPU workers) or cordoned. Before the first probe every node counts one slot.
    std::string master_address;
    for (const auto& n : ctx.state.nodes) {
        if (n.gets_ranks()) {
            master_address = n.cluster_address();
            break;
        }
    }
    if (master_address.empty()) {
        for (const auto& n : ctx.state.nodes) {
            if (n.group == "master") {
                master_address = n.cluster_address();
                break;
            }
        }
    }
    std::error_code ec;
    const std::string state_dir =
        std::filesystem::absolute(ctx.cluster_dir(), ec).lexically_normal().string();
    return "# Written by ddl (configure, and again with the hostfiles). The bundled runtime (libddlcomm) "
           "takes "
           "the rendezvous master's address and port from here when no launcher variable (MASTER_ADDR, "
           "MASTER_PORT, DDL_MASTER_*) gives them: rank 0's node under /etc/ddl/hostfile and "
           "/etc/ddl/hostfile.mpich, and runtime.master_port.\nDDL_CLUSTER=" +
           ctx.spec.name + "\nDDL_NODE=" + node.name + "\nDDL_MASTER_ADDR=" + master_address +
           "\nDDL_MASTER_PORT=" + std::to_string(ctx.spec.runtime.master_port) +
           "\n# The controller's state folder of this cluster: `ddl gc --spec` (target ssh) finds a cluster "
           "whose folder is gone by this file, and ages it by the file's modification time.\nDDL_STATE_DIR=" +
           state_dir + "\n";
}

Result<std::map<std::string, int>>
write_node_files(Context& ctx, const std::function<std::vector<NodeFile>(const NodeState&)>& files_of,
                 const std::string& runtime_archive) {
    const auto& nodes = ctx.state.nodes;
    std::vector<Status> results(nodes.size());
    std::vector<int> changed(nodes.size(), 0);
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        const auto files = files_of(nodes[i]);
        std::vector<std::string> paths;
        paths.reserve(files.size());
        for (const auto& f : files)
            paths.push_back(f.path);
        const std::string what = "cannot write " + join(paths, ", ") +
                                 (runtime_archive.empty() ? "" : " or unpack the runtime into /opt/ddl") +
                                 " on " + nodes[i].name + ": ";
        // The archive, when there is one, takes the standard input; the script then goes in the command.
        const std::string script =
            write_files_script(files) + (runtime_archive.empty() ? "" : unpack_runtime_script("/opt/ddl"));
        auto r = runtime_archive.empty()
                     ? ctx.remote.exec_with_input(ctx.endpoint(nodes[i]), root_shell_command(), script,
                                                  std::chrono::seconds(60))
                     : ctx.remote.exec_with_input(ctx.endpoint(nodes[i]), root_shell_command(script),
                                                  runtime_archive, std::chrono::seconds(120));
        if (!r) {
            results[i] = Error{what + r.error().message};
        } else if (!r->ok()) {
            std::string err = trim(r->err);
            if (err.find("sudo") != std::string::npos)
                err += " (log in as root, or give the login user sudo without a password)";
            results[i] =
                Error{what + "exit " + std::to_string(r->exit_status) + (err.empty() ? "" : ": " + err)};
        } else {
            for (const auto& line : split(r->out, '\n'))
                if (!trim(line).empty()) ++changed[i];
        }
    });
    std::vector<std::string> failed;
    std::map<std::string, int> out;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!results[i])
            failed.push_back(results[i].error().message);
        else
            out[nodes[i].name] = changed[i];
    }
    if (!failed.empty()) return Error{join(failed, "\n    ")};
    return out;
}

} // namespace ddl
