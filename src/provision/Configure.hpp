#pragma once
#include "provision/Context.hpp"

namespace ddl {

// Ansible inventory (YAML) for the cluster's nodes: groups master, workers, gpu; SSH through the
// cluster key and the pinned known_hosts.
std::string render_inventory(const Context& ctx);

struct AnsibleSummary {
    std::map<std::string, int> changed;    // per host
    std::map<std::string, int> failures;   // per host (failures + unreachable)
    std::vector<std::string> failed_tasks; // "node: task: message"
};

// Parses the JSON lines of ddl's own stdout callback (playbooks/callback_plugins/ddl_events.py).
Result<AnsibleSummary> parse_ansible_events(const std::string& out);

// Runs playbooks/site.yml with the rendered inventory; succeeds with a note when there is no playbook,
// and without running Ansible when no node's inputs changed since the last successful configure
// (unless ctx.options.force_configure).
Result<AnsibleSummary> run_configure(Context& ctx);

// The values of a node credential's `secret_keys` (node-credential.json: {"env", "ca_pem", "secret_keys"})
// registered as log secrets; the other values (region, server ids) stay readable.
void register_node_credential_secrets(const nlohmann::json& credential);

} // namespace ddl
