#include "spec/GpuCompat.hpp"

#include "util/Strings.hpp"

#include <iterator>
#include <string>

namespace ddl {
namespace {

// {major, min_driver, min_compute_capability}, newest first; a sentinel row keeps the array non-empty.
constexpr CudaMajorNeeds k_table[] = {
#include "spec/CudaTable.inc"
    {0, 0, ""}};

} // namespace

std::span<const CudaMajorNeeds> runtime_cuda_majors() {
    return {k_table, std::size(k_table) - 1};
}

int newest_cuda_for_branch(std::span<const CudaMajorNeeds> table, int branch) {
    for (const auto& row : table)
        if (branch >= row.min_driver) return row.major;
    return 0;
}

void read_gpu(SectionReader& r, const YAML::Node& n, GpuSpec& out) {
    if (!r.expect_map(n, "gpu")) return;
    r.check_keys(n, "gpu",
                 {"driver", "driver_branch", "kernel_modules", "container_toolkit", "allow_reboot"});
    if (auto x = r.boolean(n, "driver", "gpu")) out.driver = *x;
    if (auto x = r.string(n, "driver_branch", "gpu")) {
        if (x->empty() || x->find_first_not_of("0123456789") != std::string::npos || x->size() > 4)
            r.diags().error(r.pos(n["driver_branch"]),
                            "gpu.driver_branch must be a driver branch number (got \"" +
                                SectionReader::printable(*x) + "\")",
                            "e.g. \"580\"");
        else
            out.driver_branch = *x;
    }
    if (auto x = r.choice(n, "kernel_modules", "gpu", {"auto", "open", "proprietary"}))
        out.kernel_modules = *x;
    if (auto x = r.boolean(n, "container_toolkit", "gpu")) out.container_toolkit = *x;
    if (auto x = r.boolean(n, "allow_reboot", "gpu")) out.allow_reboot = *x;
}

void check_driver_branch(SectionReader& r, const YAML::Node& doc, const Spec& spec) {
    const auto table = runtime_cuda_majors();
    if (table.empty() || !spec.gpu.driver || spec.runtime.backend == Backend::tcp) return;
    const auto branch = parse_int(spec.gpu.driver_branch);
    if (!branch || newest_cuda_for_branch(table, static_cast<int>(*branch)) != 0) return;
    const auto& oldest = table.back();
    const YAML::Node at =
        doc["gpu"].IsMap() && doc["gpu"]["driver_branch"] ? doc["gpu"]["driver_branch"] : doc;
    r.diags().error(r.pos(at),
                    "gpu.driver_branch \"" + spec.gpu.driver_branch +
                        "\" runs none of the CUDA majors ddl's NCCL backend loads (the oldest, CUDA " +
                        std::to_string(oldest.major) + ", needs driver branch " +
                        std::to_string(oldest.min_driver) + " or newer)",
                    "set gpu.driver_branch: \"" + std::to_string(table.front().min_driver) + "\" (CUDA " +
                        std::to_string(table.front().major) + ") or at least \"" +
                        std::to_string(oldest.min_driver) +
                        "\", or runtime.backend: tcp; docs/gpus.md lists which driver, CUDA and GPU "
                        "generations go together");
}

} // namespace ddl
