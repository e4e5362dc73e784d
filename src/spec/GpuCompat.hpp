#pragma once
// The spec's `gpu` section and what the bundled runtime's NCCL backend needs of a node's driver, checked
// at validate time: every CUDA major the runtime loads and the oldest driver branch that runs each come
// from cmake/cuda_compat.cmake (none where this ddl was built without the NCCL backend). docs/gpus.md has
// the table.
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <span>
#include <yaml-cpp/yaml.h>

namespace ddl {

// One row of cmake/cuda_compat.cmake.
struct CudaMajorNeeds {
    int major = 0;
    int min_driver = 0;
    const char* min_compute_capability = "";
};

// The CUDA majors the runtime loads, newest first; empty without the NCCL backend.
std::span<const CudaMajorNeeds> runtime_cuda_majors();

// The newest CUDA major in `table` that driver branch `branch` runs; 0 when none does.
int newest_cuda_for_branch(std::span<const CudaMajorNeeds> table, int branch);

// Reads gpu: driver, driver_branch, kernel_modules, container_toolkit, allow_reboot.
void read_gpu(SectionReader& r, const YAML::Node& n, GpuSpec& out);

// An error at gpu.driver_branch when the driver role would install a branch that runs none of the CUDA
// majors the runtime loads (unless the driver role is off or the backend is tcp).
void check_driver_branch(SectionReader& r, const YAML::Node& doc, const Spec& spec);

} // namespace ddl
