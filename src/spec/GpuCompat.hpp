#pragma once
// What the bundled runtime's NCCL backend needs of a node's driver, checked at validate time: the CUDA
// major it loads and the oldest driver branch that runs it come from cmake/cuda_compat.cmake (none where
// this ddl was built without the NCCL backend). docs/gpus.md has the table.
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <yaml-cpp/yaml.h>

namespace ddl {

// An error at gpu.driver_branch when the driver role would install a branch too old for the runtime's
// CUDA (unless the driver role is off or the backend is tcp).
void check_driver_branch(SectionReader& r, const YAML::Node& doc, const Spec& spec);

} // namespace ddl
