#pragma once
// The smoke test's checks on a deployed cluster: the built-in ones (SSH, GPUs, hostfile, services,
// training, allreduce) and the spec's own `smoke.checks`, each a testcase of the report, per node where
// it is per node.
#include "cli/SmokeReport.hpp"
#include "provision/Context.hpp"

namespace ddl::cli {

// Appends one result per check (and node) to `report`, and the figures they measure (busbw).
void run_builtin_checks(Context& ctx, SmokeReport& report);

} // namespace ddl::cli
