#include "targets/gpulab/GpulabJobs.hpp"

#include "targets/gpulab/GpulabTarget.hpp"

namespace ddl {

std::string gpulab_project_urn(const std::string& project, const std::string& user_urn) {
    const std::string lead = "urn:publicid:IDN+";
    std::string authority = "ilabt.imec.be";
    if (user_urn.rfind(lead, 0) == 0) {
        const auto plus = user_urn.find('+', lead.size());
        if (plus != std::string::npos && plus > lead.size())
            authority = user_urn.substr(lead.size(), plus - lead.size());
    }
    return lead + authority + "+project+" + project;
}

std::string gpulab_legacy_login(const std::string& user_urn, const std::string& cert) {
    if (user_urn.rfind("urn:publicid:IDN+wall2.ilabt.iminds.be+user+", 0) != 0) return {};
    return "you are using a login PEM from the legacy wall2 authority (" + cert +
           "), which GPULab no longer supports: use an account from https://account.ilabt.imec.be/ or "
           "https://portal.fed4fire.eu/ (contact gpulab@ilabt.imec.be to migrate your account), and point "
           "GPULAB_CERT or gpulab.cert at its login PEM";
}

const std::string& gpulab_sshd_program() {
    static const std::string cmd =
        "set -eu; "
        "if [ ! -x /usr/sbin/sshd ]; then "
        "echo 'ddl: installing openssh-server'; "
        "(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server) "
        ">/tmp/ddl-sshd-install.log 2>&1 || { echo 'ddl: cannot install openssh-server:'; "
        "tail -n 5 /tmp/ddl-sshd-install.log; exit 1; }; fi; "
        "mkdir -p /run/sshd /root/.ssh; chmod 700 /root/.ssh; "
        "printf '%s\\n' \"$DDL_AUTHORIZED_KEY\" >/root/.ssh/authorized_keys; "
        "chmod 600 /root/.ssh/authorized_keys; ssh-keygen -A >/dev/null; "
        "echo \"ddl: sshd for node $DDL_NODE of cluster $DDL_CLUSTER on port $DDL_SSH_PORT\"; "
        // The job's command is this shell's pid, sshd after the exec: the idle clock ends it (autostop).
        "mkdir -p /etc/ddl; echo $$ >/etc/ddl/job.pid; "
        "exec /usr/sbin/sshd -D -e -p \"$DDL_SSH_PORT\" -o PermitRootLogin=prohibit-password "
        "-o PasswordAuthentication=no";
    return cmd;
}

nlohmann::json gpulab_sshd_command() {
    return nlohmann::json::array({"/bin/sh", "-c", gpulab_sshd_program()});
}

std::string gpulab_max_duration(const Spec& spec) {
    const auto& g = spec.target_section<GpulabSpec>();
    const long long life = spec.life.lifetime_s;
    const auto max = GpulabTarget::duration_seconds(g.max_duration);
    if (life <= 0 || (max && *max <= life)) return g.max_duration;
    return std::to_string((life + 59) / 60) + " minutes";
}

std::vector<GpulabJob> render_gpulab_jobs(const Spec& spec, const std::string& public_key,
                                          const GpulabOwner& who) {
    const auto& g = spec.target_section<GpulabSpec>();
    const int total = spec.total_gpus();
    const bool one_job = g.layout == "one-job";
    const int jobs = one_job ? 1 : total;
    std::vector<GpulabJob> out;
    for (int i = 0; i < jobs; ++i) {
        GpulabJob job;
        job.node = i == 0 ? "master" : "worker" + std::to_string(i);
        job.gpus = one_job ? total : 1;
        nlohmann::json resources{{"gpus", job.gpus},
                                 {"cpus", job.gpus * g.cpus_per_gpu},
                                 {"cpuMemoryGb", job.gpus * g.memory_gb_per_gpu}};
        // Optional constraints are left out rather than sent empty: GPULab reads an absent key as "any".
        if (!g.cluster_id.empty()) resources["clusterId"] = std::stoi(g.cluster_id);
        if (!g.gpu_model.empty()) resources["gpuModel"] = nlohmann::json::array({g.gpu_model});
        if (!g.min_cuda_version.empty()) resources["minCudaVersion"] = std::stoi(g.min_cuda_version);
        nlohmann::json docker{
            {"image", g.docker_image},
            {"command", gpulab_sshd_command()},
            {"environment",
             {{"DDL_CLUSTER", spec.name},
              {"DDL_NODE", job.node},
              {"DDL_SSH_PORT", std::to_string(g.ssh_port)},
              {"DDL_AUTHORIZED_KEY", public_key}}},
            {"storage", g.project_share
                            ? nlohmann::json::array({{{"hostPath", "PROJECT_SHARE_AUTO"},
                                                      {"containerPath", spec.services.nfs_mount}}})
                            : nlohmann::json::array()},
            // No hostPort: GPULab picks a free one; ddl reads it from the running job's state.
            {"portMappings", nlohmann::json::array({{{"containerPort", g.ssh_port}}})}};
        // Not interactive (that fails at once when GPUs are busy); ddl waits up to wait_minutes itself.
        nlohmann::json scheduling{{"interactive", false},
                                  {"restartable", false},
                                  {"minDuration", gpulab_max_duration(spec)},
                                  {"maxDuration", gpulab_max_duration(spec)}};
        nlohmann::json owner{{"projectUrn", gpulab_project_urn(g.project, who.user_urn)}};
        if (!who.user_urn.empty()) owner["userUrn"] = who.user_urn;
        if (!who.email.empty()) owner["userEmail"] = who.email;
        nlohmann::json extra = nlohmann::json::object();
        // GPULab's own SSH access (its proxy, `gpulab-cli ssh`) admits these keys too.
        if (public_key.rfind("ssh-", 0) == 0) extra["sshPubKeys"] = nlohmann::json::array({public_key});
        job.request = {
            {"name", "ddl-" + spec.name + "-" + job.node},
            {"description", "ddl cluster " + spec.name + ", node " + job.node + " (" + std::to_string(i + 1) +
                                " of " + std::to_string(jobs) + ")"},
            {"owner", owner},
            // "ignored but still required in old GPULab" (the CLI sends it always).
            {"deploymentEnvironment", "production"},
            {"request", {{"resources", resources}, {"docker", docker}, {"scheduling", scheduling}}}};
        if (!extra.empty()) job.request["request"]["extra"] = extra;
        out.push_back(std::move(job));
    }
    return out;
}

} // namespace ddl
