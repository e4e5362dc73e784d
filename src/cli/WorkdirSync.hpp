#pragma once
// The researcher's code on the cluster (spec keys workdir, setup, env; docs/spec.md): the workdir sent with
// rsync over the cluster's pinned SSH keys (once where the nodes share a folder, else to every node), and
// the setup programs run on every node when what they depend on changed.
#include "provision/Context.hpp"

#include <map>
#include <string>
#include <vector>

namespace ddl::cli {

// rsync's -e program for `n`: OpenSSH with the cluster's key and pinned host keys (as `ddl ssh`), batch mode.
std::string rsync_ssh(const Context& ctx, const NodeState& n);
// "address:path" as rsync reads a remote path (an IPv6 address in brackets).
std::string rsync_remote(const NodeState& n, const std::string& path);

// The spec's env with each {from_env} read from this process's environment now; an Error names the first
// variable that is not set. The values read are registered as secrets (never logged).
Result<std::map<std::string, std::string>> resolve_spec_env(const Spec& spec);

// Where the workdir is on the nodes: <services.nfs.mount>/work with NFS, else /var/lib/ddl/work/<cluster>.
std::string remote_workdir(const Spec& spec);

// The workdir on this machine: the spec's (from a file), else the one recorded at the last deploy; an
// Error when the spec has none or the folder is gone.
Result<std::string> local_workdir(const Context& ctx);

// The rsync filter rules for a workdir: the .gitignore and .ddlignore files of every folder, the
// repository's own .git, and the cluster state folder `state_dir` when it lies inside the workdir.
std::vector<std::string> rsync_filters(const std::string& workdir, const std::string& state_dir);

// The words of a setup program that name files of the workdir (as `pip install -r requirements.txt`
// names requirements.txt): relative paths, "./" dropped, that exist under `workdir` and are not folders.
std::vector<std::string> files_named_by(const std::string& program, const std::string& workdir);

// The most ddl reads of one file a setup program names.
inline constexpr std::size_t k_setup_file_limit = std::size_t{64} << 20;

// What setup depends on: the programs, the files they name and the env (values too), as one digest. A
// named file is read (at most k_setup_file_limit bytes, never waiting: util/Files.hpp, read_regular_file)
// unless it leads out of the workdir, where its link's text counts; an Error names the setup key and the
// file when it is not a regular file or is larger.
Result<std::string> setup_digest(const Spec& spec, const std::string& workdir,
                                 const std::map<std::string, std::string>& env);

struct SyncReport {
    std::string remote_dir;
    std::vector<std::string> nodes; // the nodes it was sent to (one where they share a folder)
    int changed = 0;                // files and folders rsync created, updated or deleted (over all nodes)
    double seconds = 0;
};

// Sends the workdir to the cluster with rsync (only what changed; files land in place at the end with
// --delay-updates, a partial file is kept for the next try). A node's marker
// (/var/lib/ddl/sync/<cluster>.done) is removed first and written only after its rsync succeeded.
Result<SyncReport> sync_workdir(Context& ctx, const std::string& state_dir);

// Ok when every node that holds a copy has its marker; else an Error naming the nodes without one.
Status check_synced(Context& ctx);

struct SetupReport {
    std::vector<std::string> ran;       // nodes where setup ran
    std::vector<std::string> unchanged; // nodes whose recorded digest matched
};

// Runs the spec's setup on every node whose recorded digest (/var/lib/ddl/setup/<cluster>-<node>.hash)
// differs, in the remote workdir with `env`; output goes to /var/lib/ddl/setup/<cluster>-<node>.log on the
// node. An Error names each failing node with the program, its line and the line's text.
Result<SetupReport> run_setup(Context& ctx, const std::map<std::string, std::string>& env);

} // namespace ddl::cli
