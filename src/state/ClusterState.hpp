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
    // One of the spec's nodes.spares: configured and running, given no ranks until it takes a failed
    // node's place. A spare that is also cordoned is out of service (the node it replaced, failed):
    // `ddl deploy --replace` makes it anew as a ready spare.
    bool spare = false;

    // Whether launchers give this node ranks: it has slots and is neither cordoned nor a spare.
    bool gets_ranks() const { return slots > 0 && !cordoned && !spare; }
    bool ready_spare() const { return spare && !cordoned; }
    // The address for node-to-node traffic (hostfile, runtime rendezvous).
    const std::string& cluster_address() const { return private_address.empty() ? address : private_address; }
};

struct PhaseState {
    bool done = false;
    std::string finished_at; // ISO 8601 UTC
};

// A span of the cluster's life with one set of machines: from `at` until the next spell (or now). Usage
// (node-hours, GPU-hours, cost) adds the spells up, so a resize, stop or start never rewrites the past.
struct UsageSpell {
    struct Node {
        std::string name;
        std::string group;
        int gpus = -1; // as probed; -1: not probed yet (the spec's expectation counts)
        std::string gpu_name;
    };
    std::string at; // ISO 8601 UTC
    bool running = true;
    std::vector<Node> nodes;
};

struct ClusterState {
    static constexpr int k_schema_version = 1;

    std::string cluster;
    std::string target;
    nlohmann::json spec;   // normalized spec the cluster was deployed from
    std::string spec_text; // the spec file as given (specs hold no secrets), re-read by later commands
    std::string spec_file; // where that file was (absolute), compared by later commands; empty: not known
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
    // The last setup's failure, its first line ("setup[1] line 2 (pip install …) failed on node worker1
    // (exit 1)"); empty: none, or it succeeded since. `ddl run` refuses while it is set.
    std::string setup_failed;
    // The cluster's machines over time, oldest first (note_spell); empty in states written before it.
    std::vector<UsageSpell> spells;

    bool stopped() const { return !stopped_at.empty(); }
    bool phase_done(const std::string& name) const;
    void mark_done(const std::string& name, const std::string& when);
    void reset_phases_from(const std::vector<std::string>& order, const std::string& first);
    const NodeState* node(const std::string& name) const;
    // Starts a spell at `now` when the nodes (names, GPUs) or running/stopped differ from the last one's;
    // the first one starts at created_at where that is set. Called before every save.
    void note_spell(const std::string& now);

    nlohmann::json to_json() const;
    static Result<ClusterState> from_json(const nlohmann::json& j);
};

std::string utc_now_iso();

} // namespace ddl
