#pragma once
// The optional capabilities of a target: small interfaces a driver implements and hands out through
// TargetDriver::capabilities(); the CLI and the pipeline ask for one and get nullptr where the target has
// none, so no caller tests which target it has.
#include "provision/Context.hpp"
#include "provision/Phase.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddl {

// A cluster found on the target's own side rather than in a state folder (`ddl gc` after the folder that
// deployed it is gone, as in a CI job whose container was thrown away).
struct FoundCluster {
    std::string cluster;
    long long age_s = 0;   // since the target created it (its own record of the time)
    std::string state_dir; // the cluster's folder in the state folder that deployed it
    std::string detail;    // what was found, one line ("3 namespace nodes", "job 123 RUNNING")
    std::string expires;   // when its lifetime ends as the target records it (RFC 3339; empty: not recorded)
    nlohmann::json record; // what destroy_found needs
};

// A batch scheduler's target: the ranks start as steps of the target's own job, and its nodes are not
// reached over SSH.
class JobSteps {
public:
    virtual ~JobSteps() = default;
    // Called before each deploy phase after provision: the target's own outcome for the phase (or its
    // skip); nullopt runs the common one.
    virtual std::optional<Status> replace_phase(PhaseId phase, Context& ctx) = 0;
    // Why `what` (something that needs SSH to the nodes) cannot work here.
    virtual std::string why_no_ssh(const std::string& what) const = 0;
    // The command that starts `argv` as `np` ranks of a job step with `env` added (`ddl run`).
    virtual Result<Command> job_step_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                             const std::map<std::string, std::string>& env) const = 0;
};

// Links between nodes that ddl shapes itself and can re-shape after deploy (`ddl bench train --bandwidths`).
class LinkShaping {
public:
    virtual ~LinkShaping() = default;
    // Shapes every node's link to `bps` (0: unshaped).
    virtual Status reshape_links(const Context& ctx, std::uint64_t bps) = 0;
};

// Machines the testbed itself takes back (a GPULab job's maxDuration after it started running, a Virtual
// Wall slice's expiry). `ddl status` and `ddl list` show the end; `ddl run`, `ddl bench` and `ddl smoke-test`
// warn when less than runtime.lease_warn_minutes is left.
class Lease {
public:
    virtual ~Lease() = default;
    // When the lease ends, from what provision recorded in `state`; nullopt: not known (yet).
    virtual std::optional<std::chrono::system_clock::time_point>
    lease_end(const ClusterState& state) const = 0;
    // `ddl renew`: extends the lease to now + `hours`; an Error where the testbed does not extend it.
    virtual Status renew_lease(Context& ctx, std::chrono::hours hours) = 0;
};

// Clusters ddl created that the target itself knows of, from the markers ddl puts on what it creates
// (`ddl gc` after the state folder that deployed them is gone, as in a CI job whose container was thrown
// away).
class LeakedClusters {
public:
    virtual ~LeakedClusters() = default;
    // Whether the target is asked with a spec's endpoint and credentials (`ddl gc --spec FILE`) rather than
    // as it is (this machine, the user's Slurm queue: `ddl gc --target`).
    virtual bool needs_spec() const = 0;
    // What the target still runs for ddl, with the state folder named in each record. `spec`: the spec
    // given with --spec; nullptr where !needs_spec().
    virtual Result<std::vector<FoundCluster>> find_clusters(const Spec* spec, ProcessRunner& proc) const = 0;
    // Removes a found cluster from its record alone (its state folder may be gone).
    virtual Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) = 0;
};

// Replacing one node of a deployed cluster by a fresh machine (`ddl deploy --replace NODE`).
class NodeReplacement {
public:
    virtual ~NodeReplacement() = default;
    // `ddl deploy --replace NODE`: removes the machine of `node` (a name in ctx.state.nodes) alone, after
    // ctx.approve_destructive, so that the phases from provision make it anew, or records it so that
    // provision replaces it (a Terraform target: its plan shows the replacement and asks); the other nodes
    // are left as they are.
    virtual Status remove_for_replace(Context& ctx, const std::string& node) = 0;
    // Whether a cluster of `spec` can have one node replaced (a target may depend on how the spec reaches
    // it, e.g. the Virtual Wall's client): what a healing run's default --on-node-fault follows.
    virtual bool replaces_one_node(const Spec& spec) const {
        (void)spec;
        return true;
    }
};

// What to tell the user beside a failed configure.
class ConfigureHints {
public:
    virtual ~ConfigureHints() = default;
    // `message` names node, task and error; empty: nothing target-specific to add.
    virtual std::string configure_failure_hint(const Context& ctx, const std::string& message) const = 0;
};

// Targets whose allocation the master's idle clock ends itself once idle for autostop.idle_minutes, with
// no cloud credential (a Slurm job it scancels, GPULab jobs whose command it ends): what the target says
// of that afterwards, so that ddl's state catches up on the next command.
class SelfEnding {
public:
    virtual ~SelfEnding() = default;
    // Once the cluster's allocation has ended: the line the idle clock left in the job's output or log
    // ("ddl-idle: autostop ends the allocation at ..."); nullopt while it still holds nodes, or when it
    // ended without such a line (a time limit, a cancel).
    virtual Result<std::optional<std::string>> autostop_end(Context& ctx) = 0;
};

// The last line of `log` in which the idle clock says it ended the allocation; nullopt without one.
inline std::optional<std::string> autostop_line(const std::string& log) {
    static const std::string k_mark = "ddl-idle: autostop ends the allocation";
    const auto at = log.rfind(k_mark);
    if (at == std::string::npos) return std::nullopt;
    return log.substr(at, log.find('\n', at) - at);
}

// Machines that stop and start again keeping their disks (`ddl stop`, `ddl start`, autostop.action: stop).
class PowerControl {
public:
    virtual ~PowerControl() = default;
    // Why this cluster's machines cannot stop (e.g. one-time Spot Instances); empty: they can.
    virtual std::string why_no_stop(const Spec& spec) const = 0;
    // What keeps costing while the machines are stopped (disks, addresses, quota), one line each.
    virtual std::vector<std::string> kept_while_stopped(const Context& ctx) const = 0;
    // Stops (on = false) or starts every machine of the cluster and waits until it is so; ctx.state.nodes
    // takes the addresses the machines have then (a public address may change at start).
    virtual Status set_power(Context& ctx, bool on) = 0;
};

// The capabilities a driver has; each nullptr (false) where it has not.
struct TargetCapabilities {
    JobSteps* job_steps = nullptr;
    LinkShaping* link_shaping = nullptr;
    Lease* lease = nullptr;
    LeakedClusters* leaked_clusters = nullptr;
    NodeReplacement* node_replacement = nullptr;
    ConfigureHints* configure_hints = nullptr;
    SelfEnding* self_ending = nullptr;
    PowerControl* power = nullptr;
    // Whether `ddl deploy --manifest FILE` applies (a manifest saved by the testbed's own tool).
    bool takes_manifest = false;
};

} // namespace ddl
