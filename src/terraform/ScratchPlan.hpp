#pragma once
// A Terraform plan of a module as ddl would render it, against a cluster's state, that changes nothing of
// the cluster: the module and copies of the state and the dependency lock file go into a scratch folder;
// the providers are read from the cluster's working directory through TF_DATA_DIR (Terraform's documented
// variable for where `init` keeps them), or installed into the scratch folder by `init` for a new cluster.
// `plan` runs without -out, so no plan file is left to apply.
#include "provision/TargetDriver.hpp"
#include "terraform/TerraformRunner.hpp"

#include <map>
#include <string>
#include <vector>

namespace ddl {

struct ScratchPlanRequest {
    TerraformTool tool;
    std::map<std::string, std::string> env;    // the provider's credentials, as for a deploy
    std::map<std::string, std::string> module; // file name -> content, as rendered
    std::string work_dir;                      // the cluster's working directory (may not exist yet)
    std::string scratch;                       // an empty private folder
};

Result<std::vector<TerraformPlannedChange>> plan_in_scratch(ProcessRunner& proc,
                                                            const ScratchPlanRequest& req);

// A Terraform target's `ddl plan`: the node diff, then one line per resource the plan changes. `runner` is
// set up as for a deploy (tool, credentials, the cluster's working directory); `module_dir` is where the
// module sits in the rendered files.
Status add_terraform_plan(const PlanRequest& req, TargetDriver& driver, const TerraformRunner& runner,
                          const std::string& module_dir, DeployPlan& out);

} // namespace ddl
