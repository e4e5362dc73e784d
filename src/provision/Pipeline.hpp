#pragma once
// ddl deploy / destroy as lists of named phases over one cluster's state. Each phase's success is
// recorded, so a failed or interrupted deploy resumes where it stopped and a re-run converges.
#include "provision/Context.hpp"
#include "provision/TargetDriver.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ddl {

struct Phase {
    Phase(PhaseId i, std::string w, std::function<Status(Context&, TargetDriver&)> r)
        : id(i), name(phase_name(i)), why(std::move(w)), run(std::move(r)) {}
    PhaseId id;
    std::string name; // phase_name(id)
    std::string why;  // why it comes where it does
    std::function<Status(Context&, TargetDriver&)> run;
};

const std::vector<Phase>& deploy_phases();
std::vector<std::string> phase_names();

struct DeployRequest {
    std::string only_phase; // empty: all pending phases
};

// Runs the pending phases (or one with only_phase). Exit code: 0 ok, 1 failure, 130 interrupted.
int run_deploy(Context& ctx, TargetDriver& driver, const DeployRequest& req);

// `ddl deploy --replace NODE` and a healing run's replacement: the target removes (or marks) the node's
// machine after ctx.approve_destructive, the node is reset (configured from scratch, probed again,
// uncordoned: replacing a bad node is what its cordon waited for) and the phases from provision are pending,
// so that run_deploy makes it anew. The state is saved. Errors: no such node, a target that cannot replace
// one (the message starts with "target "), a refused approval (ctx.approval_needs_yes), the target's own.
Status remove_node_for_replace(Context& ctx, TargetDriver& driver, const std::string& node);

// Tears everything down with up to `attempts` tries; the state folder goes only on success.
int run_destroy(Context& ctx, TargetDriver& driver, int attempts = 3);

} // namespace ddl
