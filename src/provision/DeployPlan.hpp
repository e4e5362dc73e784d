#pragma once
// What a deploy of a spec would do to a cluster, before it does anything (`ddl plan`): one line per node
// and, for targets that run Terraform, per cloud resource, each with its action. The deploy's own
// approval question shows the same lines for the changes that touch what exists.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl {

struct PlannedChange {
    // create | update | replace | delete | keep (nothing changes); Terraform's "no-op" is shown as keep.
    std::string action;
    std::string kind; // node | resource | config
    std::string
        address; // the node's name, the Terraform resource address, or the setting (services.nfs.enabled)
    std::string detail; // one line: what the node or resource is, or why it changes (may be empty)

    // Whether the change touches something that exists (update, replace, delete): a deploy asks first.
    bool touches_existing() const { return action == "update" || action == "replace" || action == "delete"; }
};

// A node as a target would have it for a spec: its name and what describes it ("flavor m1.large, 1 GPU",
// "host 10.0.0.5"). Two specs give the same node when name and description agree.
struct PlannedNode {
    std::string name;
    std::string detail;
};

// The nodes of `before` (the spec the cluster was deployed with; empty for a new cluster) against those of
// `after`: create for new names, delete for names gone, update when the description changed, else keep.
std::vector<PlannedChange> node_changes(const std::vector<PlannedNode>& before,
                                        const std::vector<PlannedNode>& after);

struct DeployPlan {
    std::string cluster;
    std::string target;
    bool exists = false; // the cluster has been deployed before (the plan is against its state)
    std::vector<PlannedChange> changes;
    std::vector<std::string> notes; // what the plan could not know, one line each

    // Changes of `kind` (node, resource) with `action`.
    int count(const std::string& kind, const std::string& action) const;
    bool touches_existing() const;
    // {"cluster", "target", "exists", "changes": [{action, kind, address, detail}], "touches_existing",
    //  "summary": {"nodes": {create, update, replace, delete, keep}, "resources": {...}}, "notes"}
    nlohmann::json to_json() const;
    // Terraform-like text: one "  + create node worker3 (flavor m1.large)" line per change that is not
    // keep, then "Nodes: N to create, N to update, N to replace, N to delete (N unchanged)." and, when
    // there are resources, Terraform's own summary "Resources: N to add, N to change, N to destroy."
    // (a replacement counts as one to add and one to destroy).
    std::string to_text() const;
};

} // namespace ddl
