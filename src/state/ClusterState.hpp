#pragma once
// What ddl knows about one cluster: which phases finished, the nodes and what probing found.
// Serialized as .ddl/<cluster>/state.json with a schema version.
#include "util/Result.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddl {

struct NodeState {
    std::string name;
    std::string group;           // master | workers
    std::string address;         // where ddl reaches it (through `jump` when set)
    std::string private_address; // where the other nodes reach it; empty: `address`
    int port = 22;
    std::string user;
    std::string jump; // "" or the name of the node used as bastion
    std::string key;  // private key for this node; empty: the cluster's own key
    // private key for a jump host given as user@host:port (one outside the cluster, e.g. GPULab's SSH
    // proxy, which takes the user's login key); empty: `key`
    std::string jump_key;
    std::string netns; // local target only
    // Filled by probe:
    bool probed = false;
    int gpus = 0;
    std::vector<std::string> gpu_names;
    int cpus = 0;
    long long memory_mb = 0;
    std::string os;
    std::string kernel;
    std::string hostname;
    int slots = 1;
    // The CUDA the runtime role chose for the node ("12.9", from its /etc/ddl/cuda.json); empty: none.
    std::string cuda;
    // Digest of what the last successful configure applied to this node (playbooks, variables, runtime,
    // inventory, pinned host keys); empty when none. Equal digests on every node: configure skips Ansible.
    std::string configured_inputs;
    // Taken out of the hostfiles by `ddl cordon` (or `ddl doctor --cordon`): the node keeps running and
    // stays configured, but no launcher gives it a rank until `ddl uncordon`.
    bool cordoned = false;

    // Whether launchers give this node ranks: it has slots and is not cordoned.
    bool gets_ranks() const { return slots > 0 && !cordoned; }
    // The address for node-to-node traffic (hostfile, runtime rendezvous).
    const std::string& cluster_address() const { return private_address.empty() ? address : private_address; }
};

struct PhaseState {
    bool done = false;
    std::string finished_at; // ISO 8601 UTC
};

struct ClusterState {
    static constexpr int k_schema_version = 1;

    std::string cluster;
    std::string target;
    nlohmann::json spec;   // normalized spec the cluster was deployed from
    std::string spec_text; // the spec file as given (specs hold no secrets), re-read by later commands
    std::map<std::string, PhaseState> phases;
    std::vector<NodeState> nodes;
    nlohmann::json target_data = nlohmann::json::object(); // provisioner-specific (e.g. the local plan)
    bool destroying = false;
    // Generated per cluster when the spec enables JupyterLab; only here (0600) and on the master.
    std::string jupyter_token;
    // When the cluster was first deployed (ISO 8601 UTC): its lifetime and its node-hours count from here.
    // Empty in states written before it was recorded: the earliest phase's finish stands in.
    std::string created_at;
    // Set while the cluster's machines are stopped (`ddl stop`, autostop.action: stop): since when (ISO 8601
    // UTC). Empty: running.
    std::string stopped_at;
    // Seconds the cluster spent stopped in earlier stopped spells (its node-hours leave them out).
    long long stopped_s = 0;

    bool stopped() const { return !stopped_at.empty(); }
    bool phase_done(const std::string& name) const;
    void mark_done(const std::string& name, const std::string& when);
    void reset_phases_from(const std::vector<std::string>& order, const std::string& first);
    const NodeState* node(const std::string& name) const;

    nlohmann::json to_json() const;
    static Result<ClusterState> from_json(const nlohmann::json& j);
};

std::string utc_now_iso();

} // namespace ddl
