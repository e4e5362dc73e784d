#include "spec/GpuCompat.hpp"

#include "util/Strings.hpp"

#include <string>

namespace ddl {

void check_driver_branch(SectionReader& r, const YAML::Node& doc, const Spec& spec) {
    constexpr int min_branch = DDL_RUNTIME_MIN_DRIVER;
    if (min_branch == 0 || !spec.gpu.driver || spec.runtime.backend == Backend::tcp) return;
    const auto branch = parse_int(spec.gpu.driver_branch);
    if (!branch || *branch >= min_branch) return;
    const YAML::Node at =
        doc["gpu"].IsMap() && doc["gpu"]["driver_branch"] ? doc["gpu"]["driver_branch"] : doc;
    r.diags().error(r.pos(at),
                    "gpu.driver_branch \"" + spec.gpu.driver_branch + "\" cannot run CUDA " +
                        std::to_string(DDL_RUNTIME_CUDA_MAJOR) +
                        ", which ddl's NCCL backend uses (it needs driver branch " +
                        std::to_string(min_branch) + " or newer)",
                    "set gpu.driver_branch: \"" + std::to_string(min_branch) +
                        "\" or newer, or runtime.backend: tcp; docs/gpus.md lists which driver, CUDA and GPU "
                        "generations go together");
}

} // namespace ddl
