#pragma once
// GPULab job requests (API v4.0, as imecilabt-gpulab-cli 3.11 sends them: top-level name, description,
// owner {projectUrn, userUrn, userEmail}, deploymentEnvironment and a `request` with resources, docker,
// scheduling and extra {sshPubKeys}) for a cluster: either one job holding every GPU, or one job per GPU.
// Each job's command starts an sshd in its container that admits the cluster's key, so the rest of the
// pipeline treats the jobs as SSH nodes. Pure: same spec and key, same requests.
#include "targets/gpulab/GpulabSection.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl {

// Stands in for the cluster's public key in `ddl render` output (the key exists only once deploy made it).
inline constexpr const char* k_gpulab_key_placeholder =
    "<the cluster's SSH public key, filled in by ddl deploy>";

struct GpulabJob {
    std::string node; // ddl's node name for the job: master, worker1, ...
    int gpus = 1;
    nlohmann::json request; // the job request as submitted
};

// Who submits: the login certificate's user URN and e-mail (empty in `ddl render`, which reads no
// certificate). The project's URN takes the authority of the user's URN, as the CLI builds it.
struct GpulabOwner {
    std::string user_urn;
    std::string email;
};
std::vector<GpulabJob> render_gpulab_jobs(const Spec& spec, const std::string& public_key,
                                          const GpulabOwner& owner = {});

// The jobs' maxDuration (and minDuration): gpulab.max_duration, or the spec's lifetime in whole minutes
// ("90 minutes") where it is shorter, so that GPULab itself stops the jobs once it has passed (counted by
// GPULab from when each job starts running).
std::string gpulab_max_duration(const Spec& spec);

// "urn:publicid:IDN+<authority of user_urn, ilabt.imec.be without one>+project+NAME".
std::string gpulab_project_urn(const std::string& project, const std::string& user_urn = "");
// The message imec's CLI gives a login of the legacy wall2 authority (urn:publicid:IDN+wall2.ilabt.iminds.be
// +user+...), which GPULab no longer takes; empty for any other URN.
std::string gpulab_legacy_login(const std::string& user_urn, const std::string& cert);

// The shell program each job runs: install sshd when the image lacks it, authorize $DDL_AUTHORIZED_KEY for
// root, and run sshd in the foreground on $DDL_SSH_PORT (the job lives as long as sshd does).
const std::string& gpulab_sshd_program();
// request.docker.command: ["/bin/sh", "-c", PROGRAM]. GPULab's Job2 model (JobRequestDocker.command,
// imecilabt-gpulab) hands a command to docker-py as given; docker-py splits a string with shlex and runs
// no shell (docker/docker-py: docker/types/containers.py calls split_command, docker/utils/utils.py), so a
// shell program must go as a list. Docker appends the list to the image's ENTRYPOINT (NGC images have one
// that ends in exec "$@").
nlohmann::json gpulab_sshd_command();

} // namespace ddl
