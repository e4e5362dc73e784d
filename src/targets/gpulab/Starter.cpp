#include "targets/gpulab/GpulabSection.hpp"

namespace ddl {

std::string gpulab_starter_body() {
    return R"(
nodes:
  master: {gpus: 4}   # one GPULab job with all 4 GPUs on one worker

gpulab:
  project: myproject
  cluster_id: "1"
  docker_image: nvcr.io/nvidia/pytorch:24.05-py3
)";
}

} // namespace ddl
