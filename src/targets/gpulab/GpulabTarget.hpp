#pragma once
// Target "gpulab": imec GPULab jobs as cluster nodes. Provision submits the rendered job requests (one
// job with every GPU, or one job per GPU), waits until every job is RUNNING (up to gpulab.wait_minutes),
// and reads each job's SSH endpoint from its port mapping; the job's command runs an sshd that admits the
// cluster key. GPULab provides the GPUs and their drivers, so configure installs no driver roles.
// Destroy cancels every job of the cluster (the ones recorded in state and any other job named for it) with
// GPULab's documented cancel (PUT …/jobs/<id>/state/status, body CANCELLED), then waits until none of them
// is QUEUED, STARTING or RUNNING any more (up to cancel_deadline); past it, it fails naming those jobs and
// keeps them in the state, so that the next destroy cancels them again.
#include "provision/TargetDriver.hpp"
#include "targets/gpulab/GpulabClient.hpp"
#include "targets/gpulab/GpulabSection.hpp"

#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddl {

class GpulabTarget : public TargetDriver,
                     public Lease,
                     public LeakedClusters,
                     public NodeReplacement,
                     public SelfEnding {
public:
    TargetCapabilities capabilities() override {
        return {.lease = this, .leaked_clusters = this, .node_replacement = this, .self_ending = this};
    }

    using ApiFactory = std::function<Result<std::unique_ptr<GpulabApi>>(const Context&)>;
    // Default: the REST client with the certificate from GPULAB_CERT or gpulab.cert.
    GpulabTarget();
    // How long destroy waits for cancelled jobs to stop.
    static constexpr std::chrono::seconds k_cancel_deadline{60};
    // poll_interval: between reads of the jobs' states while provision waits (and the longest pause while
    // destroy waits: it starts shorter and doubles up to it).
    GpulabTarget(ApiFactory factory, std::chrono::milliseconds poll_interval,
                 std::chrono::milliseconds cancel_deadline = k_cancel_deadline);

    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    Status preflight(const Context& ctx) override;
    // `ddl plan`: the node diff, after the fair-use check (below).
    Status plan(const PlanRequest& req, DeployPlan& out) override;
    // SLICES AI's fair use ("Maximum simultaneous jobs": 10 per user, 20 per project): the user's queued and
    // running jobs that are not this cluster's, plus the jobs the cluster needs, within 10; the project's
    // (every member's, listed by project URN) within 20. An Error names the limit, the counts and the way
    // out: a job past either would wait in the queue, and deploy with it.
    Status fair_use(const Context& ctx);
    static constexpr int k_jobs_per_user = 10;
    static constexpr int k_jobs_per_project = 20;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    // `ddl deploy --replace NODE` (GpulabReplace.cpp): after approval the node's job is cancelled and waited
    // for, its pinned host key forgotten and its id dropped, so that provision submits a new job for it.
    Status remove_for_replace(Context& ctx, const std::string& node) override;
    // The earliest end of the cluster's jobs: each job's state.eventTimes.RUNNING plus its
    // scheduling.maxDuration (GPULab "will always stop your job after this time": imec's job2 model,
    // JobRequestScheduling.max_duration), recorded by provision as target_data.lease_end.
    std::optional<std::chrono::system_clock::time_point> lease_end(const ClusterState& state) const override;
    // GPULab does not extend a job's maxDuration once submitted.
    Status renew_lease(Context& /*ctx*/, std::chrono::hours /*hours*/) override {
        return Error{"this target's nodes have no lease to renew"};
    }
    // "1 day", "12 hours", "90 minutes", "2w" (gpulab.max_duration's forms) in seconds; nullopt otherwise.
    static std::optional<long long> duration_seconds(const std::string& text);
    // When GPULab stops `job` (one job of its list) by itself: request.scheduling.maxDuration ("will always
    // stop your job after this time") after state.eventTimes.RUNNING; nullopt while it has not run, or
    // where either is missing or unreadable. `ddl gc --expired --spec` reads a cluster's end from it.
    static std::optional<std::time_t> job_end(const nlohmann::json& job);

    // `ddl gc --spec FILE`: the user's GPULab jobs that ddl submitted and that are still queued or
    // running, one FoundCluster per cluster (the job description names it and its state folder; the age
    // comes from GPULab's own event times); destroy_found cancels them.
    bool needs_spec() const override { return true; }
    Result<std::vector<FoundCluster>> find_clusters(const Spec* spec, ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;
    // What a submitted job's description ends with, so that gc finds the state folder of its cluster.
    static std::string state_marker(const std::string& cluster_dir) {
        return "; state folder " + cluster_dir;
    }

    // With autostop the master's idle clock ends every job's command once idle (the jobs are FINISHED);
    // afterwards: the clock's line in the master job's log (GET …/jobs/<id>/log), once no job of the
    // cluster is active.
    Result<std::optional<std::string>> autostop_end(Context& ctx) override;

    // The client certificate to use: $GPULAB_CERT, else gpulab.cert (with ~ expanded); empty if neither.
    static std::string cert_path(const Spec& spec);
    // Where a RUNNING job's sshd is reached: the host port mapped to `container_port` (at its hostIp, or
    // when that is a wildcard at the job's sshHost, else its slaveHost), and with ssh_via proxy (or auto when
    // the state names one) the SSH proxy as jump host: "user@host:port" from state.resources.sshProxyHost,
    // sshProxyPort and sshProxyUsername (GPULab's Job2 model, JobStateResources; gpulab-cli's own ssh config
    // goes through it with the login PEM's key).
    struct SshRoute {
        std::string host;
        int port = 22;
        std::string jump; // "" or user@host:port
    };
    static Result<SshRoute> ssh_endpoint(const nlohmann::json& job, int container_port,
                                         const std::string& ssh_via = "auto");

private:
    // Polls the cancelled jobs until none is QUEUED/STARTING/RUNNING, or fails after m_cancel_deadline.
    Status wait_until_stopped(Context& ctx, GpulabApi& api, const std::vector<std::string>& ids) const;

    ApiFactory m_factory;
    std::chrono::milliseconds m_poll;
    std::chrono::milliseconds m_cancel_deadline;
};

} // namespace ddl
