#include "provision/HostfileWriter.hpp"

#include "runtime/Hostfile.hpp"

namespace ddl {

std::string format_hostfile(const std::vector<NodeState>& nodes, HostfileFormat format) {
    std::vector<runtime::HostfileEntry> entries;
    for (const auto& n : nodes) {
        runtime::HostfileEntry e;
        e.host = n.cluster_address();
        e.slots = n.slots;
        entries.push_back(e);
    }
    switch (format) {
    case HostfileFormat::openmpi:
        return runtime::write_hostfile(entries, runtime::HostfileFormat::openmpi,
                                       {"Written by ddl from the probed cluster state"});
    case HostfileFormat::horovod:
        return runtime::write_hostfile(entries, runtime::HostfileFormat::horovod);
    case HostfileFormat::mpich:
        return runtime::write_hostfile(entries, runtime::HostfileFormat::mpich);
    }
    return {};
}

} // namespace ddl
