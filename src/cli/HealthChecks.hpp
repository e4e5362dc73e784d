#pragma once
// The health checks of `ddl doctor`, which the smoke test runs as its test cases too: one script per node
// over ddl's own SSH (all nodes in parallel) gathers what HealthJudge judges, then the connect matrix runs
// between the nodes (ConnectMatrix).
#include "cli/HealthJudge.hpp"
#include "provision/Context.hpp"

#include <string>
#include <vector>

namespace ddl::cli {

// The scratch folder checked for free space beside the shared folder (services.nfs.mount when NFS is on).
inline constexpr const char* k_scratch_folder = "/tmp";

// The POSIX sh script a node runs: its clock first, then `nvidia-smi -q`, /etc/ddl/cuda.json, the
// kernel log's Xid lines since boot, `dcgmi diag -r 1` where DCGM is installed, free space in `folders`,
// the MTU of the interface holding `address`, and what each of `names` resolves to; "@@ NAME" lines
// between the parts.
std::string node_script(const std::vector<std::string>& folders, const std::string& address,
                        const std::vector<std::string>& names);
// The script's output as facts (the clock readings are the caller's).
NodeFacts parse_node_output(const std::string& node, const std::string& output);

// Runs every check on every node of the cluster (cordoned ones included: that is where a fault is
// expected to stay); the findings, passing ones too, in node order.
std::vector<Finding> run_health_checks(Context& ctx);

} // namespace ddl::cli
