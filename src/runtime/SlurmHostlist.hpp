#pragma once
// Slurm's compressed host lists and per-node task counts, as srun leaves them in a task's environment
// (SLURM_JOB_NODELIST="gpu[01-03,7],login", SLURM_STEP_TASKS_PER_NODE="2(x3),1"). The runtime reads
// them so that `srun` can start workers with no launcher and no MASTER_ADDR of its own.
#include "util/Result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddl::runtime {

// Expands a host list: comma-separated names, each with any number of bracketed ranges/lists
// ("n[1-3]", "r[1-2]n[01-02]"); zero padding is kept. An Error names the malformed part.
[[nodiscard]] ddl::Result<std::vector<std::string>> expand_slurm_hostlist(const std::string& list);

// The number of tasks on node `node_index` of a step from a tasks-per-node list ("2(x3),1"), or nothing
// when the list is malformed or shorter than the index.
[[nodiscard]] std::optional<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node_index);

} // namespace ddl::runtime
