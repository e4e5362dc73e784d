#pragma once
// Cordoned nodes: they keep running and stay configured, but get no rank. The flag lives in the cluster's
// state (NodeState::cordoned); every launcher reads the hostfiles, so those are rewritten on every node.
#include "cli/CommandTable.hpp"
#include "provision/Context.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ddl::cli {

// Sets (or clears) the flag of `names` in ctx.state, saves the state, then rewrites the hostfiles and
// node.env on every node. Refused (nothing changed) when a name is no node of the cluster, or when
// cordoning would leave no node with ranks.
Status set_cordoned(Context& ctx, const std::vector<std::string>& names, bool cordoned);

// For a command that holds the cluster read-only (doctor, run): takes the cluster's lock for set_cordoned,
// then copies the new flags into ctx.state.
Status cordon_with_lock(const Invocation& inv, Context& ctx, const std::vector<std::string>& names);

// For a run that heals (--on-node-fault spare): under the cluster's lock, each ready spare takes its failed
// node's place (swap_in_spare: the failed node becomes a spare out of service), the state is saved and the
// hostfiles rewritten; then ctx.state takes the new marks. Nothing changes when one swap is refused.
Status swap_with_lock(const Invocation& inv, Context& ctx,
                      const std::vector<std::pair<std::string, std::string>>& failed_and_spare);

} // namespace ddl::cli
