#pragma once
// Spare nodes (the spec's nodes.spares): running, configured nodes that get no ranks until one takes the
// place of a node that failed a health check. The mark lives in the state (NodeState::spare); these pure
// functions keep exactly the spec's number of nodes marked, and move the mark when a spare is taken.
#include "state/ClusterState.hpp"

#include <set>
#include <string>
#include <vector>

namespace ddl {

// Marks exactly `wanted` nodes as spares, never the master: the marks already there stay; when too few,
// nodes in `fresh` (made by this deploy) are marked first, then workers that are not cordoned, then any,
// the highest-numbered first;
// when too many, ready spares lose the mark first, the lowest-numbered first. Returns the nodes whose mark
// changed, in node order.
std::vector<std::string> assign_spares(std::vector<NodeState>& nodes, int wanted,
                                       const std::set<std::string>& fresh);

// The ready spares (marked, not cordoned), in node order.
std::vector<std::string> ready_spares(const std::vector<NodeState>& nodes);

// `spare` takes `failed`'s place: the spare gets ranks; the failed node becomes a spare out of service
// (cordoned), so the count of spares stays and `ddl deploy --replace` makes it a ready one again. An
// Error (nothing changed) when `spare` is no ready spare or `failed` no node with ranks.
Status swap_in_spare(std::vector<NodeState>& nodes, const std::string& failed, const std::string& spare);

} // namespace ddl
