#pragma once
// The slurm target's section (`slurm:`): one Slurm job on a facility ddl does not run, whose allocation is
// the cluster.
#include "spec/TargetKind.hpp"

#include <string>

namespace ddl {

struct SlurmSpec : TargetSection {
    std::string partition;
    int nodes = 1;
    int gpus_per_node = 0;
    int tasks_per_node = 0; // 0: gpus_per_node or 1
    std::string time = "01:00:00";
    std::string account;
    // Where the compute nodes find the bundled runtime (bin/, lib/) on a shared file system; empty:
    // `ddl deploy` stages it into the cluster's state folder, which sbatch jobs see as their submit dir.
    std::string runtime_dir;
    int start_timeout_minutes = 30; // how long deploy waits for the job to start running

    // Tasks (ranks) per node: tasks_per_node, else the GPUs per node, else 1.
    int tasks() const {
        return tasks_per_node > 0 ? tasks_per_node : (gpus_per_node > 0 ? gpus_per_node : 1);
    }

    std::unique_ptr<TargetSection> clone() const override { return std::make_unique<SlurmSpec>(*this); }
    nlohmann::json to_json() const override;
    std::optional<int> node_count(const Spec&) const override { return nodes; }
    std::optional<int> expected_gpus(const Spec&, const std::string&, const std::string&) const override {
        return gpus_per_node;
    }
};

const TargetKind& slurm_kind();
// The `slurm:` part of `ddl init --target slurm`.
std::string slurm_starter_body();

} // namespace ddl
