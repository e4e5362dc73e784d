#pragma once
// OpenSSH for what is interactive or long-lived (`ddl ssh`, `ddl tunnel`): ddl hands it the cluster's key,
// the cluster's pinned host keys and the node's jump host, then becomes it.
#include "provision/Context.hpp"

#include <string>
#include <vector>

namespace ddl::cli {

// OpenSSH's command line for one node: the key, IdentitiesOnly, the cluster's known_hosts with strict
// checking, port, user and ProxyCommand through its jump host; `extra` goes before the destination.
std::vector<std::string> openssh_argv(const Context& ctx, const NodeState& n,
                                      const std::vector<std::string>& extra);
// Replaces this process with `argv`; if ssh cannot be started, says so after "`who`: " and exits 1.
[[noreturn]] void exec_openssh(std::vector<std::string> argv, const std::string& who);
// The node named `node`; nullptr after telling (after "`who`: ") which nodes there are.
const NodeState* find_node_or_explain(const Context& ctx, const std::string& node, const std::string& who);

} // namespace ddl::cli
