#pragma once
#include "provision/NodeFiles.hpp"
#include "spec/Spec.hpp"
#include "state/ClusterState.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ddl {

// The cluster's hostfile from probed state, in one format: OpenMPI "host slots=N" (a header comment),
// Horovod (same syntax, strictly no blank or comment lines, and the node's name where its address is
// IPv6: horovodrun accepts host names and IPv4 addresses only), MPICH "host:N" (the node's name where
// its address is IPv6: Hydra splits a host at its first ':').
std::string format_hostfile(const std::vector<NodeState>& nodes, HostfileFormat format);

// What every node gets, whatever the spec's format: /etc/ddl/hostfile in the syntax that Open MPI's
// mpirun and Horovod's horovodrun both read (the Horovod form above), and /etc/ddl/hostfile.mpich for
// MPICH's mpiexec -f.
std::vector<NodeFile> node_hostfiles(const std::vector<NodeState>& nodes);

// The deploy's hostfile phase, also after a cordon: ddl's own copy (.ddl/<cluster>/hostfile, the spec's
// format) and, on every node, the hostfiles above and node.env. Cordoned nodes and nodes without slots get
// no line; every node, cordoned ones too, gets the files.
Status write_hostfiles(Context& ctx);

} // namespace ddl
