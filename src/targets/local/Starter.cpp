#include "targets/local/LocalSection.hpp"

namespace ddl {

std::string local_starter_body() {
    return R"(
# N nodes on this machine (network namespaces, one sshd each). Needs root.
local:
  nodes: 4               # 1-16; the first is the master
  bandwidth: 1gbit       # link shaping per node: e.g. 1gbit, 10gbit, unlimited
  # subnet: 10.231.0.0/24  # default: derived from the name
)";
}

} // namespace ddl
