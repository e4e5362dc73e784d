#include "provision/HostfileWriter.hpp"

#include "util/Net.hpp"

namespace ddl {

std::string format_hostfile(const std::vector<NodeState>& nodes, HostfileFormat format) {
    std::string out;
    if (format == HostfileFormat::openmpi) out += "# Written by ddl from the probed cluster state\n";
    for (const auto& n : nodes) {
        if (format == HostfileFormat::mpich)
            out += host_for_port(n.address) + ":" + std::to_string(n.slots) + "\n";
        else
            out += n.address + " slots=" + std::to_string(n.slots) + "\n";
    }
    return out;
}

} // namespace ddl
