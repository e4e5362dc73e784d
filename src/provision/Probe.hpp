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
int slots_for(const Spec& spec, const NodeState& node);

} // namespace ddl
