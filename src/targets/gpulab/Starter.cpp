#include "targets/gpulab/GpulabSection.hpp"

namespace ddl {

std::string gpulab_starter_body() {
    return R"(
nodes:
  master: {gpus: 1}
  workers: {count: 3, gpus: 1}

gpulab:
  project: myproject
  cluster_id: "1"
  docker_image: nvcr.io/nvidia/pytorch:24.05-py3
  layout: jobs-per-gpu   # or one-job
)";
}

} // namespace ddl
