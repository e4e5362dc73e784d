#pragma once
// Everything a phase needs, passed explicitly: the spec, the cluster's state and the side-effect
// interfaces (processes, SSH, progress). Tests build a Context around fakes.
#include "provision/Progress.hpp"
#include "remote/RemoteExecutor.hpp"
#include "spec/Spec.hpp"
#include "state/StateStore.hpp"
#include "util/Process.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace ddl {

struct DeployOptions {
    bool yes = false;
    std::chrono::milliseconds ssh_deadline{std::chrono::seconds(90)};
    std::size_t parallel = 16;    // concurrent SSH operations
    bool skip_preflight = false;  // target checks against the cloud's APIs (openstack)
    std::string terraform_bin;    // openstack: "terraform", "tofu" or a path; empty: the spec's choice
    std::string manifest_path;    // virtualwall without the jFed CLI: the manifest RSpec jFed's GUI saved
    bool force_configure = false; // run Ansible even when no node's configure inputs changed
};

struct Context {
    Spec spec;
    ClusterState& state;
    const StateStore& store;
    ProcessRunner& proc;
    RemoteExecutor& remote;
    Progress& progress;
    DeployOptions options;
    // Set by SIGINT/SIGTERM; long steps check it and stop at the next safe point.
    const std::atomic<bool>* interrupted = nullptr;
    // Asked before a deploy destroys or replaces something that exists (`changes`: one line each). The
    // CLI asks on a terminal; unset, only options.yes approves. See approve_destructive().
    std::function<Status(const std::string& what, const std::vector<std::string>& changes)> approve;
    // Set when approval was refused for want of a terminal and of -y (the deploy then exits 2).
    bool approval_needs_yes = false;

    std::string cluster_dir() const { return store.cluster_dir(state.cluster); }
    std::string key_path() const { return cluster_dir() + "/id_ed25519"; }
    std::string known_hosts_path() const { return cluster_dir() + "/known_hosts"; }
    // What the master needs to end the cluster itself (autostop.node_credential), written by the target after
    // provision, read by configure; absent without one.
    std::string node_credential_path() const { return cluster_dir() + "/node-credential.json"; }
    // How to reach a node: through its jump host (another node, or user@host:port) when it has one.
    SshEndpoint endpoint(const NodeState& node) const;
    std::optional<SshEndpoint> jump_endpoint(const NodeState& node) const;
    // OpenSSH options that pin host keys in the cluster's known_hosts (for ssh, Ansible).
    std::string openssh_options() const;
    // An OpenSSH ProxyCommand through `jump` with the same pinning. ProxyCommand rather than
    // ProxyJump: OpenSSH does not pass -o options on to the jump connection.
    std::string openssh_proxy_command(const SshEndpoint& jump) const;
    // Saves the state, starting a usage spell first where the nodes or their power changed.
    Status save() const {
        state.note_spell(utc_now_iso());
        return store.save(state);
    }
    // Nothing to approve: ok; options.yes: ok; else the approve callback's answer (without one: refused).
    Status approve_destructive(const std::string& what, const std::vector<std::string>& changes);
    bool stop_requested() const { return interrupted && interrupted->load(); }

    // Runs a command and turns a non-zero exit into an Error with the program's last stderr line.
    Status run(const Command& cmd) const;
    Result<ProcessResult> run_capture(const Command& cmd) const;
};

// Parses "user@host:port" (host may be a bracketed IPv6 address; user and port optional).
std::optional<SshEndpoint> parse_jump_spec(const std::string& text, const std::string& default_user);

// Where playbooks/ and other data files are found: $DDL_DATA_DIR, else the build's source tree,
// else the installed share/ddl.
std::string data_dir();
// Where the built runtime (bin/, lib/) is: $DDL_DIST_DIR, else the build tree's dist/.
std::string dist_dir();

} // namespace ddl
