#include "terraform/ScratchPlan.hpp"

#include "util/Files.hpp"

namespace ddl {

Result<std::vector<TerraformPlannedChange>> plan_in_scratch(ProcessRunner& proc,
                                                            const ScratchPlanRequest& req) {
    if (auto s = make_dirs(req.scratch, 0700); !s) return s.error();
    for (const auto& [name, text] : req.module)
        if (auto s = write_file_atomic(req.scratch + "/" + name, text, 0600); !s) return s.error();
    // The state holds the cluster's addresses and ids: its copy is as private as the original. A stopped
    // cluster's power variables (TerraformTarget::k_power_file) come along, so the plan keeps it stopped.
    for (const char* name : {"terraform.tfstate", ".terraform.lock.hcl", "power.auto.tfvars.json"}) {
        const std::string from = req.work_dir + "/" + name;
        if (!path_exists(from)) continue;
        auto text = read_file(from);
        if (!text) return text.error();
        if (auto s = write_file_atomic(req.scratch + "/" + name, *text, 0600); !s) return s.error();
    }
    TerraformRunnerOptions opts;
    opts.work_dir = req.scratch;
    opts.env = req.env;
    const bool initialised = path_exists(req.work_dir + "/.terraform");
    if (initialised) opts.env["TF_DATA_DIR"] = req.work_dir + "/.terraform";
    TerraformRunner runner(proc, req.tool, opts);
    if (!initialised) {
        if (auto s = runner.init(); !s) return s.error();
    }
    auto summary = runner.plan(TerraformRunner::PlanFile::none);
    if (!summary) return summary.error();
    return runner.planned_changes();
}

Status add_terraform_plan(const PlanRequest& req, TargetDriver& driver, const TerraformRunner& runner,
                          const std::string& module_dir, DeployPlan& out) {
    if (auto s = driver.TargetDriver::plan(req, out); !s) return s;
    ScratchPlanRequest sp{.tool = runner.tool(),
                          .env = runner.options().env,
                          .module = {},
                          .work_dir = runner.options().work_dir,
                          .scratch = req.scratch + "/terraform"};
    const std::string prefix = module_dir + "/";
    for (const auto& [rel, text] : req.files)
        if (rel.starts_with(prefix)) sp.module[rel.substr(prefix.size())] = text;
    auto changes = plan_in_scratch(req.ctx.proc, sp);
    if (!changes) return changes.error();
    for (const auto& c : *changes)
        out.changes.push_back({c.action, "resource", c.address, ""});
    return {};
}

} // namespace ddl
