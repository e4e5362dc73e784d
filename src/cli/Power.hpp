#pragma once
// What `ddl stop`, `ddl start` and `ddl gc --expired` (autostop.action: stop) share: why a cluster cannot
// stop, and the target's power call with the nodes' probed facts kept across it.
#include "provision/Context.hpp"
#include "provision/TargetDriver.hpp"

#include <string>

namespace ddl::cli {

// Why `driver`'s cluster cannot stop keeping its disks (the target's reason); empty: it can.
std::string why_no_stop(TargetDriver& driver, const Context& ctx);

// Stops (on = false) or starts the cluster's machines through the target's PowerControl. The nodes keep
// what probe and configure recorded of them; their addresses are the ones the target gives now. The state
// records the stopped spell (stopped_at; its length goes to stopped_s at start) and is saved.
Status set_cluster_power(TargetDriver& driver, Context& ctx, bool on);

} // namespace ddl::cli
