#pragma once
#include "spec/Spec.hpp"
#include "state/ClusterState.hpp"

#include <string>
#include <vector>

namespace ddl {

// The cluster's hostfile from probed state: OpenMPI "host slots=N" (a header comment), Horovod (same
// syntax, strictly no blank or comment lines), MPICH "host:N" (IPv6 in brackets).
std::string format_hostfile(const std::vector<NodeState>& nodes, HostfileFormat format);

} // namespace ddl
