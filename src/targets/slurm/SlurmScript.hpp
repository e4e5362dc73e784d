#pragma once
// The slurm target's batch script. One script serves both uses: submitted with no arguments it holds
// the allocation (what `ddl deploy` submits, so later commands can use the nodes); submitted with a
// program it runs that program once per task with srun, ranks taken from Slurm's own variables.
// Inside the allocation it writes a hostfile from `scontrol show hostnames "$SLURM_JOB_NODELIST"`.
#include "targets/slurm/SlurmSection.hpp"

#include <string>

namespace ddl {

struct SlurmScript {
    // Where ddl puts the script below the rendered folder.
    static constexpr const char* k_path = "slurm/job.sbatch";

    // The job's name in the queue: how `ddl deploy` finds its job again after an interruption.
    static std::string job_name(const Spec& spec);
    // The output file pattern (relative to the submit directory; %j is the job id).
    static std::string output_pattern(const Spec& spec);
    // The hostfile the job writes (relative to the submit directory) for a job id.
    static std::string hostfile_name(const Spec& spec, const std::string& job_id);

    // The script text; pure (same spec, same bytes).
    static std::string render(const Spec& spec);
};

} // namespace ddl
