#pragma once
// What ddl itself puts on every node over its own SSH rather than through a role: before the roles run,
// the bundled runtime (/opt/ddl) and the node's identity file (/etc/ddl/node.env); after the probe, the
// hostfiles. One remote command per node writes a whole set, as root: through `sudo -n` when the node's
// login is not root. (Two Ansible tasks per file cost the controller about a tenth of a CPU-second per
// node each, docs/performance.md.)
#include "provision/Context.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ddl {

struct NodeFile {
    std::string path; // absolute
    std::string content;
};

// A POSIX sh script that writes every file with mode 0644, creating its folder (0755) when missing.
// Each file is written beside its place and renamed over it, and only when its content or mode differ:
// a reader never sees half a file, and a rewrite that changes nothing keeps the file's modification
// time (gc ages an ssh-target cluster by node.env's). It prints the path of each file it replaced.
std::string write_files_script(const std::vector<NodeFile>& files);

// The lines that unpack the runtime archive (POSIX ustar, provision/RuntimeArchive.hpp) read from standard
// input into `dir` (/opt/ddl on nodes), when any file there differs from it (contents, mode, time, link: a
// new runtime, or a file edited or removed on the node). tar replaces a file by unlinking it first, so a
// running program keeps its old copy. Prints `dir` when it unpacked. Needs GNU tar (--compare), as on Debian
// and Ubuntu.
std::string unpack_runtime_script(const std::string& dir);

// A command that runs a script with sh as root: directly when the login is root, else through `sudo -n`
// (which fails at once rather than waiting for a password). The script is `script`, or, when that is
// empty, the command's standard input.
std::string root_shell_command(const std::string& script = {});

// /etc/ddl/node.env for `node`: the cluster, the node, the rendezvous master's address and port that the
// runtime falls back to (DDL_MASTER_ADDR: the first node of ddl's hostfiles, where mpirun and mpiexec
// start rank 0; DDL_MASTER_PORT: runtime.master_port), and the controller's state folder of the cluster
// (DDL_STATE_DIR: how `ddl gc --spec` finds a cluster on the ssh target whose folder is gone).
std::string node_env(const Context& ctx, const NodeState& node);

// Writes files_of(node) on every node of the cluster, ctx.options.parallel at a time, and unpacks
// `runtime_archive` (the archive's bytes; empty: none) into /opt/ddl. The result counts, per node name,
// the files that changed (the runtime counts one); an error names every node that failed, with what it was
// writing and what the node said.
Result<std::map<std::string, int>>
write_node_files(Context& ctx, const std::function<std::vector<NodeFile>(const NodeState&)>& files_of,
                 const std::string& runtime_archive = {});

} // namespace ddl
