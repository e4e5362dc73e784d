#pragma once
// What the local target asks this machine about its nodes, shared by provision (LocalTarget.cpp) and
// destroy (LocalDestroy.cpp): links, namespaces, and a node's sshd.
#include "provision/Context.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddl {

// Whether link `name` exists, in the root namespace or in `netns`.
bool local_link_exists(const Context& ctx, const std::string& name, const std::string& netns = "");

// The names `ip netns list` prints.
std::vector<std::string> local_netns_list(const Context& ctx);

// The pid of a node's sshd while it runs: the process its pidfile (in `node_dir`, where the state folder is
// now) names, if that process was started with the sshd_config of `started_from` (the node folder it was
// started from: node_dir itself, or that of the place the state folder was moved from).
std::optional<std::int64_t> local_sshd_pid(const std::string& node_dir, const std::string& started_from);

} // namespace ddl
