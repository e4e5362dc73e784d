#pragma once
// Runs Terraform or OpenTofu in one cluster's working directory (.ddl/<cluster>/terraform/):
//   version -json, init -input=false -no-color, plan -input=false -out=tfplan [-replace=ADDRESS] -json,
//   apply -input=false -json tfplan, output -json, destroy -auto-approve -input=false -json, state list.
// Progress comes from the -json UI stream (TerraformStream). Credentials reach the tool only through
// the environment given here (OS_CLOUD, OS_CLIENT_CONFIG_FILE, and whatever the caller inherits such
// as TF_HTTP_PASSWORD), never through argv or files ddl writes.
#include "terraform/TerraformStream.hpp"
#include "util/Process.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl {

struct TerraformTool {
    std::string path;    // what runs
    std::string name;    // terraform | tofu
    std::string version; // e.g. 1.7.5
    // Whether `version` is at least major.minor.patch ("1.6.3"; a missing patch counts as 0; a pre-release
    // such as 1.6.3-beta1 counts as its release).
    bool at_least(int major, int minor, int patch) const;
};

// One resource of a plan: its address and Terraform's action (create, update, replace, delete, read).
struct TerraformPlannedChange {
    std::string action;
    std::string address;
};

struct TerraformRunnerOptions {
    std::string work_dir;
    std::map<std::string, std::string> env;
    std::chrono::milliseconds step_timeout{std::chrono::minutes(60)};
};

class TerraformRunner {
public:
    // Oldest release whose behaviour ddl relies on (the module's required_version).
    static constexpr int k_min_major = 1, k_min_minor = 5;

    // choice: "terraform", "tofu", an absolute path, or empty for terraform, else tofu, from PATH.
    // Runs `version -json` and checks the version. The Error says what to install.
    // `setting`: the spec key that chose it (e.g. openstack.terraform), named when it is not there.
    static Result<TerraformTool> find_tool(ProcessRunner& proc, const std::string& choice,
                                           const std::string& setting);

    // on_event sees every UI message of plan/apply/destroy as it arrives (progress display).
    TerraformRunner(ProcessRunner& proc, TerraformTool tool, TerraformRunnerOptions opts,
                    std::function<void(const TerraformEvent&)> on_event = {});

    Status init();
    enum class PlanFile { write, none };
    // Plans; with PlanFile::write saves it as `tfplan` for apply(). Returns the planned totals. `replace`:
    // resource instances Terraform destroys and creates again although unchanged (`-replace=ADDRESS`).
    Result<TerraformEvent> plan(PlanFile file = PlanFile::write,
                                const std::vector<std::string>& replace = {});
    // From the last plan: every resource it changes, in address order (reads of data sources left out).
    const std::vector<TerraformPlannedChange>& planned_changes() const { return m_planned; }
    // From the last plan: "ACTION ADDRESS" for every resource that exists and would change (update,
    // replace, delete), in address order: what a deploy asks approval for.
    std::vector<std::string> changes_to_existing() const;
    // Applies `tfplan`. On failure the Error lists each failed resource with the provider's message.
    Status apply();
    // `output -json`: {name: value} (the "value" of each output).
    Result<nlohmann::json> outputs();
    // One `destroy` run; an Error names the failed resources.
    Status destroy();
    // Addresses still in the state.
    Result<std::vector<std::string>> state_list();
    // Up to `attempts` destroys; then, if any resource is still in the state, an Error naming them all.
    Status destroy_all(int attempts, const std::function<void(int attempt, const Status&)>& on_attempt = {});

    const TerraformTool& tool() const { return m_tool; }
    const TerraformRunnerOptions& options() const { return m_opts; }

private:
    Command command(std::vector<std::string> args) const;
    // Runs a -json command, streaming its UI messages into `stream`.
    Result<ProcessResult> run_json(std::vector<std::string> args, TerraformStream& stream);
    Status failure(const std::string& step, const ProcessResult& r, const TerraformStream& stream) const;

    ProcessRunner& m_proc;
    TerraformTool m_tool;
    TerraformRunnerOptions m_opts;
    std::function<void(const TerraformEvent&)> m_on_event;
    std::vector<TerraformPlannedChange> m_planned;
};

} // namespace ddl
