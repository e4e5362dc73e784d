// After the master's idle clock ended the jobs' commands (autostop): what GPULab says of the jobs.
#include "targets/gpulab/GpulabStatus.hpp"
#include "targets/gpulab/GpulabTarget.hpp"

namespace ddl {

Result<std::optional<std::string>> GpulabTarget::autostop_end(Context& ctx) {
    const auto& td = ctx.state.target_data;
    if (!td.contains("jobs") || !td["jobs"].is_object() || td["jobs"].empty())
        return std::optional<std::string>{};
    auto api = m_factory(ctx);
    if (!api) return api.error();
    std::string master_job;
    for (const auto& [node, id] : td["jobs"].items()) {
        auto job = (*api)->get(id.get<std::string>());
        if (!job) return job.error();
        if (gpulab::active(gpulab::status_of(*job))) return std::optional<std::string>{};
        if (node == "master") master_job = id.get<std::string>();
    }
    if (master_job.empty()) return std::optional<std::string>{};
    auto log = (*api)->log(master_job);
    if (!log) return log.error();
    return autostop_line(*log);
}

} // namespace ddl
