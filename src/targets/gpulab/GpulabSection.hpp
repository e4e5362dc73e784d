#pragma once
// The gpulab target's section (`gpulab:`): the imec GPULab job service, its project, image and layout.
#include "spec/TargetKind.hpp"

#include <string>

namespace ddl {

struct GpulabSpec : TargetSection {
    std::string project;
    std::string cluster_id;
    std::string docker_image;
    // one-job: one job with every GPU (one node). jobs-per-gpu is accepted only for a single GPU: GPULab
    // publishes a job's ports only as mapped host ports and documents no job-to-job network, so ranks in
    // separate jobs cannot reach each other (NCCL picks its own ports, which no mapping can name).
    std::string layout = "one-job"; // one-job | jobs-per-gpu
    std::string gpu_model;
    std::string min_cuda_version;
    int cpus_per_gpu = 4;
    int memory_gb_per_gpu = 16;
    std::string api_url = "https://gpulab.ilabt.imec.be/api/gpulab/v4.0"; // v3.0 still read where named
    std::string cert;      // PEM with client certificate + key; GPULAB_CERT overrides; never logged
    int wait_minutes = 30; // how long jobs may stay QUEUED/STARTING before deploy gives up
    int ssh_port = 22;     // port the job's sshd listens on inside the container
    std::string max_duration = "1 day"; // scheduling.maxDuration
    // How ddl reaches a job's sshd: through the SSH proxy the job's state names (sshProxyHost/Port/Username,
    // logged into with the login PEM's key), directly at its port mapping, or auto (the proxy when named).
    std::string ssh_via = "auto"; // auto | proxy | direct
    // The project's storage (/project_ghent, ... on the site the job lands on) mounted as the cluster's
    // shared folder (services.nfs_mount): storage [{hostPath: PROJECT_SHARE_AUTO, containerPath: it}].
    bool project_share = false;

    std::unique_ptr<TargetSection> clone() const override { return std::make_unique<GpulabSpec>(*this); }
    nlohmann::json to_json() const override;
    // One job is one node: a single job with every GPU, or one job per GPU.
    std::optional<int> node_count(const Spec& spec) const override {
        return layout == "one-job" ? 1 : spec.total_gpus();
    }
    // GPULab jobs run in containers on GPU hosts it manages: drivers and container runtime are its own.
    bool installs_gpu_stack() const override { return false; }
};

const TargetKind& gpulab_kind();
// The `gpulab:` part (with nodes) of `ddl init --target gpulab`.
std::string gpulab_starter_body();

} // namespace ddl
