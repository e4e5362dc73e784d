#include "targets/virtualwall/VirtualwallSection.hpp"

namespace ddl {

std::string virtualwall_starter_body() {
    return R"(
nodes:
  master: {flavor: gpunode, gpus: 1}
  workers: {count: 3, flavor: gpunode, gpus: 1}

virtualwall:
  testbed: wall2
  project: myproject
  hardware_type: gpunode
  disk_image: urn:publicid:IDN+wall2.ilabt.iminds.be+image+emulab-ops:UBUNTU22-64-STD
  link_capacity: 10gbit
)";
}

} // namespace ddl
