#pragma once
#include "provision/Context.hpp"

namespace ddl {

// The shell snippet run on each node, and the parser of its output (separate so tests can feed it
// recorded outputs from real machines).
std::string probe_command();
Status parse_probe_output(const std::string& out, NodeState& node);

// Probes every node in parallel (GPUs, CPUs, memory, OS, kernel) and sets slots.
Status probe_nodes(Context& ctx);

// Slots for a node: the spec's override, else its GPUs, else 1.
// Ranks a node runs: the spec's runtime.slots_per_node, else its GPUs; a GPU-less node gets 1 in a
// CPU cluster and 0 in a cluster where other nodes have GPUs.
int slots_for(const Spec& spec, const NodeState& node, bool cluster_has_gpus);

} // namespace ddl
