#pragma once
// `ddl run --max-restarts N [--restart-on node-fault|any] [--on-node-fault spare|replace|cordon|shrink]
// [--min-nodes M]`: when a rank fails, the launcher has stopped every rank; the health checks (`ddl
// doctor`'s) run, and the nodes that fail them are dealt with as --on-node-fault says: a ready spare
// (nodes.spares) takes each one's place (the default where the cluster has one), replaced by a new
// machine (`ddl deploy --replace`'s path: the target makes it, configure, probe, hostfiles, workdir and
// setup; the default where the target can make one machine), cordoned when the job fits without them
// (`cordon`, the default elsewhere), or cordoned with the job going on with fewer ranks while at least
// --min-nodes nodes are left (`shrink`, as torchrun's elastic agent does). Then the job starts again with
// DDL_RESTART_COUNT one higher. Every attempt gets DDL_CHECKPOINT_DIR, the folder on the shared folder
// where a job keeps the checkpoints it resumes from.
#include "cli/CommandTable.hpp"
#include "cli/Launch.hpp"
#include "runtime/Launcher.hpp"

#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace ddl::cli {

struct RestartPolicy {
    int max_restarts = 0;
    std::string restart_on =
        "any"; // any | node-fault (only when the failed rank's node fails a health check)
    // spare | replace | cordon | shrink; empty: spare where the cluster has a ready one, else replace where
    // the target can, else cordon
    std::string on_node_fault;
    int min_nodes = 1; // shrink: the fewest nodes with ranks the job goes on with
};

void add_restart_options(CLI::App& sub, RestartPolicy& p);

// The checkpoint folder convention: <services.nfs.mount>/checkpoints/<cluster>; empty without a shared
// folder.
std::string checkpoint_dir(const Context& ctx);

// The variables an attempt adds before the user's -x ones (which win): DDL_RESTART_COUNT=attempt and,
// where there is a shared folder, DDL_CHECKPOINT_DIR.
std::vector<std::string> attempt_env(const Context& ctx, int attempt);

// What to do after a failed attempt, from the failed rank's host and the nodes failing the health checks.
struct RestartDecision {
    bool restart = false;
    std::vector<std::string> cordon;                       // nodes to cordon first
    std::vector<std::string> replace;                      // nodes to replace first
    std::vector<std::pair<std::string, std::string>> swap; // (failed node, the ready spare taking its place)
    int np = -1;                                           // the next attempt's ranks (shrink); -1: as asked
    std::string why;                                       // why not, or what was decided
};
// Pure: `nodes` as in the state (current cordons and spares), `failing` the nodes a health check failed
// on, `np` the ranks asked for (0: every slot), `can_replace` whether the target makes one machine
// (deploy --replace).
RestartDecision decide_restart(const RestartPolicy& p, const runtime::LaunchResult& failed,
                               const std::vector<NodeState>& nodes, const std::vector<std::string>& failing,
                               int np, bool can_replace = false);
// The policy's --on-node-fault as it applies: empty -> spare where `has_spare`, else replace where
// `can_replace`, else cordon.
std::string node_fault_action(const RestartPolicy& p, bool can_replace, bool has_spare = false);

// `ddl run` with the policy (max_restarts 0: one attempt); the command's exit code.
int run_with_restarts(const Invocation& inv, Context& ctx, const RunArgs& a, const RestartPolicy& p);

} // namespace ddl::cli
