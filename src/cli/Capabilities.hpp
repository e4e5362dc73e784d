#pragma once
// What the commands ask of a cluster's target, answered by its driver and spec section (the registry
// finds them); no command names a target.
#include "provision/Context.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddl::cli {

// Whether the cluster's ranks are a step of a batch scheduler's job, whose nodes ddl does not reach
// over SSH.
bool ranks_run_as_job_step(const Spec& spec);
// An Error saying what to use instead when `what` works over SSH and the nodes are not reached over SSH.
Status check_nodes_over_ssh(const Spec& spec, const std::string& what);
// Where the target lets the master's idle clock end the allocation itself (SelfEnding): the clock's line
// once it did; nullopt while the allocation holds nodes, when it ended otherwise, or on other targets.
Result<std::optional<std::string>> autostop_end(Context& ctx);
// `ddl run` where ranks_run_as_job_step: the job step's command (argv and environment).
Result<Command> job_step_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& extra_env);

// Whether the target's rendered inputs carry the cluster's public key (`ddl render --public-key`).
bool render_needs_public_key(const Spec& spec);
// Whether `ddl deploy --manifest` applies (a manifest saved by the testbed's own tool).
bool takes_manifest(const Spec& spec);

// The links' bandwidth the spec sets, in bit/s; 0 when it sets none (bench allreduce's limit).
std::uint64_t spec_link_bps(const Spec& spec);
// Whether ddl shapes the links itself, and so can re-shape them after deploy (bench train --bandwidths).
bool shapes_links(const Spec& spec);
// The rate ddl shaped the links to at deploy; 0 where it does not shape them.
std::uint64_t shaped_link_bps(const Spec& spec);
// Where shapes_links: re-shaping every link, and shaping them back as deployed.
Status reshape_links(const Context& ctx, std::uint64_t bps);
void restore_links(const Context& ctx);

// When the testbed itself ends the cluster's machines (its driver's lease_end); nullopt: nothing ends them,
// or the state names a target this ddl does not know.
std::optional<std::chrono::system_clock::time_point> lease_end(const ClusterState& state);
// For commands that start work: a warning on stderr (once per cluster and process) when the lease or the
// spec's lifetime ends within the spec's runtime.lease_warn_minutes (0: never).
void warn_short_lease(const Context& ctx);

// How many GPUs the spec expects on a node (the smoke test's GPU checks).
int expected_gpus(const Spec& spec, const NodeState& node);

} // namespace ddl::cli
