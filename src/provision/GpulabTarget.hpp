#pragma once
// Target "gpulab": imec GPULab jobs as cluster nodes. Provision submits the rendered job requests (one
// job with every GPU, or one job per GPU), waits until every job is RUNNING (up to gpulab.wait_minutes),
// and reads each job's SSH endpoint from its port mapping; the job's command runs an sshd that admits the
// cluster key. GPULab provides the GPUs and their drivers, so configure installs no driver roles.
// Destroy cancels every job of the cluster: the ones recorded in state and any other job named for it.
#include "net/GpulabClient.hpp"
#include "provision/Targets.hpp"

#include <functional>
#include <memory>

namespace ddl {

class GpulabTarget : public TargetDriver {
public:
    using ApiFactory = std::function<Result<std::unique_ptr<GpulabApi>>(const Context&)>;
    // Default: the REST client with the certificate from GPULAB_CERT or gpulab.cert.
    GpulabTarget();
    GpulabTarget(ApiFactory factory, std::chrono::milliseconds poll_interval);

    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;

    // The client certificate to use: $GPULAB_CERT, else gpulab.cert (with ~ expanded); empty if neither.
    static std::string cert_path(const Spec& spec);
    // host:port where a RUNNING job's sshd is reachable, from its state's port mappings.
    static Result<std::pair<std::string, int>> ssh_endpoint(const nlohmann::json& job, int container_port);

private:
    ApiFactory m_factory;
    std::chrono::milliseconds m_poll;
};

} // namespace ddl
