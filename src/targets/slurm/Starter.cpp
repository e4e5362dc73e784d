#include "targets/slurm/SlurmSection.hpp"

namespace ddl {

std::string slurm_starter_body() {
    return R"(
slurm:
  partition: gpu
  nodes: 2
  gpus_per_node: 4
  time: "02:00:00"
)";
}

} // namespace ddl
