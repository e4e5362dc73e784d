#pragma once
// Target "slurm": an HPC facility. Provisioning submits the rendered batch script with
// `sbatch --parsable` (it holds the allocation), records the job id before waiting, follows the job to
// RUNNING within slurm.start_timeout_minutes and turns the allocated nodes into the cluster's nodes
// (addresses from `scontrol show node`). Destroy runs `scancel` and waits until the job is gone.
// The nodes are reached through Slurm, not SSH: wait-ssh and configure are skipped (no root on a
// facility's nodes; the runtime is staged on the shared file system instead), probe runs through
// `srun --overlap` inside the allocation, and the hostfile stays on this machine.
#include "provision/TargetDriver.hpp"
#include "targets/slurm/SlurmSection.hpp"

#include <chrono>
#include <map>
#include <optional>

namespace ddl {

// `scontrol show ... -o` prints one record as "Key=Value Key=Value ..."; values may hold spaces
// (paths, commands), which belong to the previous key until the next "Key=".
std::map<std::string, std::string> parse_scontrol_record(const std::string& line);

class SlurmTarget : public TargetDriver,
                    public JobSteps,
                    public LeakedClusters,
                    public NodeReplacement,
                    public SelfEnding {
public:
    TargetCapabilities capabilities() override {
        return {.job_steps = this, .leaked_clusters = this, .node_replacement = this, .self_ending = this};
    }

    // Slurm names the nodes when it allocates them: the plan has one line, the allocation.
    std::vector<PlannedNode> planned_nodes(const Spec& spec) const override;
    Status plan(const PlanRequest& req, DeployPlan& out) override;
    struct Timing {
        std::chrono::milliseconds poll{std::chrono::milliseconds(500)};
        // Overrides slurm.start_timeout_minutes (tests).
        std::optional<std::chrono::milliseconds> start_deadline;
        std::chrono::milliseconds cancel_deadline{std::chrono::seconds(120)};
    };

    SlurmTarget() = default;
    explicit SlurmTarget(Timing timing) : m_timing(timing) {}

    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    std::optional<Status> replace_phase(PhaseId phase, Context& ctx) override;
    std::string why_no_ssh(const std::string& what) const override;
    Result<Command> job_step_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                     const std::map<std::string, std::string>& env) const override {
        return run_command(ctx, np, argv, env);
    }

    // The comment ddl puts on the job it submits, so an interrupted deploy finds its own job again.
    static std::string job_comment(const std::string& cluster);

    // gc from the queue's side (SlurmFound.cpp): the user's jobs whose comment is job_comment(cluster);
    // the job's working directory is the cluster's state folder, its submit time its age.
    bool needs_spec() const override { return false; }
    Result<std::vector<FoundCluster>> find_clusters(const Spec* spec, ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;

    // `ddl deploy --replace NODE` (SlurmReplace.cpp): after approval the job is cancelled and NODE joins the
    // nodes every later submission excludes (`sbatch --exclude`); provision submits the new allocation.
    Status remove_for_replace(Context& ctx, const std::string& node) override;
    // The nodes this cluster's submissions exclude (target_data "exclude").
    static std::vector<std::string> excluded_nodes(const Context& ctx);

    // With autostop the batch script runs the idle clock, which scancels the job once idle
    // (SlurmScript.cpp); afterwards: the clock's line in the job's output file, once the job has ended.
    Result<std::optional<std::string>> autostop_end(Context& ctx) override;

    // `ddl run` on a slurm cluster: an srun step inside the deployed job, np ranks (0: every slot),
    // each taking its rank from Slurm's variables; env_set carries the runtime's PATH and the master.
    static Result<Command> run_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& extra_env);

private:
    Status stage_runtime(Context& ctx, std::string& runtime_dir);
    Result<std::string> submit(Context& ctx);
    Result<std::string> find_submitted(Context& ctx);
    Status wait_running(Context& ctx, const std::string& job_id);
    Status record_nodes(Context& ctx, const std::string& job_id,
                        const std::map<std::string, std::string>& job);
    Status probe(Context& ctx);
    Status write_hostfile(Context& ctx);

    Timing m_timing;
};

} // namespace ddl
