#pragma once
// What a re-deploy changes in the nodes' configuration: every setting outside the nodes and the target's
// own section (services, runtime, GPU stack, access, hostfile …) whose value differs between the spec the
// cluster was deployed with and the one given now. Configure applies them to every node, so `ddl plan`
// lists them and `ddl deploy` asks before it does.
#include "provision/DeployPlan.hpp"
#include "spec/Spec.hpp"

#include <vector>

namespace ddl {

// One "update config KEY (OLD -> NEW)" change per differing setting, in the spec's key order.
std::vector<PlannedChange> config_changes(const Spec& deployed, const Spec& next);

// The researcher's code: "update config workdir|setup|env.NAME" where the deployed spec and `next` differ
// (a deploy syncs the workdir and runs the new setup where it changed; env values are not shown).
std::vector<PlannedChange> work_changes(const WorkSpec& deployed, const WorkSpec& next);

// The lines a deploy's approval question shows for them.
std::vector<std::string> config_change_lines(const std::vector<PlannedChange>& changes);

} // namespace ddl
