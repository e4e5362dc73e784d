// After the idle clock inside the job scancelled it (autostop): what the job's output file says.
#include "targets/slurm/SlurmTarget.hpp"
#include "util/Files.hpp"

namespace ddl {

Result<std::optional<std::string>> SlurmTarget::autostop_end(Context& ctx) {
    const auto& td = ctx.state.target_data;
    const std::string id = td.contains("job_id") ? td["job_id"].get<std::string>() : "";
    const std::string output = td.value("output", std::string());
    if (id.empty() || output.empty()) return std::optional<std::string>{};
    Command c{.argv = {"scontrol", "show", "job", "-o", id}, .timeout = std::chrono::seconds(30)};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (r->success()) {
        const auto job = parse_scontrol_record(r->out);
        const std::string state = job.count("JobState") ? job.at("JobState") : "";
        // Still holding nodes (COMPLETING is on its way out).
        if (state == "RUNNING" || state == "PENDING" || state == "SUSPENDED" || state == "CONFIGURING")
            return std::optional<std::string>{};
    } else if (r->err.find("Invalid job id") == std::string::npos) {
        return Error{describe_failure(c, *r)};
    }
    auto text = read_file_limited(output, 1 << 20);
    if (!text) return std::optional<std::string>{}; // no output left to say why
    return autostop_line(*text);
}

} // namespace ddl
