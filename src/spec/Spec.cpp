#include "spec/Spec.hpp"

#include "util/Net.hpp"

namespace ddl {

const std::vector<std::string>& target_names() {
    static const std::vector<std::string> names{"openstack", "virtualwall", "gpulab",
                                                "ssh",       "slurm",       "local"};
    return names;
}

std::string to_string(Target t) {
    return target_names()[static_cast<std::size_t>(t)];
}

std::string to_string(HostfileFormat f) {
    switch (f) {
    case HostfileFormat::openmpi:
        return "openmpi";
    case HostfileFormat::horovod:
        return "horovod";
    case HostfileFormat::mpich:
        return "mpich";
    }
    return "openmpi";
}

std::string to_string(Backend b) {
    switch (b) {
    case Backend::auto_select:
        return "auto";
    case Backend::nccl:
        return "nccl";
    case Backend::tcp:
        return "tcp";
    }
    return "auto";
}

int Spec::node_count() const {
    switch (target) {
    case Target::local:
        return local.nodes;
    case Target::ssh:
        return static_cast<int>(ssh.hosts.size());
    case Target::slurm:
        return slurm.nodes;
    case Target::gpulab:
        // One job is one node: a single job with every GPU, or one job per GPU.
        return gpulab.layout == "one-job" ? 1 : total_gpus();
    default:
        return master.count + workers.count;
    }
}

std::vector<std::string> Spec::container_engine_argv() const {
    if (runtime.container_engine != "podman") return {runtime.container_engine};
    // crun cannot run containers on the local target's machine (no CAP_SYS_RESOURCE, hybrid cgroups).
    if (target == Target::local) return {"podman", "--runtime", "runc"};
    return {"podman"};
}

nlohmann::json Spec::to_json() const {
    using nlohmann::json;
    auto group = [](const NodeGroup& g) {
        return json{{"count", g.count}, {"flavor", g.flavor}, {"gpus", g.gpus}, {"disk_gb", g.disk_gb}};
    };
    json j;
    j["apiVersion"] = api_version;
    j["name"] = name;
    j["target"] = to_string(target);
    j["nodes"] = {{"master", group(master)}, {"workers", group(workers)}};
    j["access"] = {{"user", access.user},
                   {"allowed_cidrs", access.allowed_cidrs},
                   {"allow_any_source", access.allow_any_source},
                   {"private_key", access.private_key}};
    switch (target) {
    case Target::openstack:
        j["openstack"] = {{"cloud", openstack.cloud},
                          {"image", openstack.image},
                          {"external_network", openstack.external_network},
                          {"network", openstack.network},
                          {"network_cidr", openstack.network_cidr},
                          {"boot_volume_gb", openstack.boot_volume_gb},
                          {"anti_affinity", openstack.anti_affinity},
                          {"dns_nameservers", openstack.dns_nameservers},
                          {"state_backend",
                           {{"type", openstack.state_backend.type},
                            {"address", openstack.state_backend.address},
                            {"bucket", openstack.state_backend.bucket},
                            {"key", openstack.state_backend.key},
                            {"region", openstack.state_backend.region},
                            {"endpoint", openstack.state_backend.endpoint}}},
                          {"terraform", openstack.terraform}};
        break;
    case Target::virtualwall:
        j["virtualwall"] = {{"testbed", virtualwall.testbed},
                            {"project", virtualwall.project},
                            {"hardware_type", virtualwall.hardware_type},
                            {"disk_image", virtualwall.disk_image},
                            {"link_capacity", format_rate(virtualwall.link_capacity_bps)},
                            {"jfed_cli", virtualwall.jfed_cli},
                            {"expiry_hours", virtualwall.expiry_hours},
                            {"slice", virtualwall.slice},
                            {"connect_via", virtualwall.connect_via}};
        break;
    case Target::gpulab:
        j["gpulab"] = {{"project", gpulab.project},           {"cluster_id", gpulab.cluster_id},
                       {"docker_image", gpulab.docker_image}, {"layout", gpulab.layout},
                       {"gpu_model", gpulab.gpu_model},       {"min_cuda_version", gpulab.min_cuda_version},
                       {"cpus_per_gpu", gpulab.cpus_per_gpu}, {"memory_gb_per_gpu", gpulab.memory_gb_per_gpu},
                       {"api_url", gpulab.api_url},           {"cert", gpulab.cert},
                       {"wait_minutes", gpulab.wait_minutes}, {"ssh_port", gpulab.ssh_port},
                       {"max_duration", gpulab.max_duration}};
        break;
    case Target::ssh: {
        json hosts = json::array();
        for (const auto& h : ssh.hosts)
            hosts.push_back({{"name", h.name},
                             {"address", h.address},
                             {"port", h.port},
                             {"user", h.user},
                             {"key", h.key},
                             {"jump", h.jump},
                             {"private_address", h.private_address},
                             {"gpus", h.gpus}});
        j["ssh"] = {{"hosts", hosts}};
        break;
    }
    case Target::slurm:
        j["slurm"] = {{"partition", slurm.partition},
                      {"nodes", slurm.nodes},
                      {"gpus_per_node", slurm.gpus_per_node},
                      {"tasks_per_node", slurm.tasks_per_node},
                      {"time", slurm.time},
                      {"account", slurm.account},
                      {"runtime_dir", slurm.runtime_dir},
                      {"start_timeout_minutes", slurm.start_timeout_minutes}};
        break;
    case Target::local:
        j["local"] = {{"nodes", local.nodes},
                      {"subnet", local.subnet},
                      {"bandwidth", format_rate(local.bandwidth_bps)},
                      {"nodes_as", local.nodes_as},
                      {"bastion", local.bastion},
                      {"image", local.image},
                      {"mirror", local.mirror},
                      {"apt_proxy", local.apt_proxy}};
        break;
    }
    j["gpu"] = {{"driver", gpu.driver},
                {"driver_branch", gpu.driver_branch},
                {"container_toolkit", gpu.container_toolkit},
                {"allow_reboot", gpu.allow_reboot}};
    j["services"] = {{"nfs",
                      {{"enabled", services.nfs},
                       {"export", services.nfs_export},
                       {"mount", services.nfs_mount},
                       {"transport", services.nfs_transport}}},
                     {"jupyter",
                      {{"enabled", services.jupyter},
                       {"port", services.jupyter_port},
                       {"install", services.jupyter_install}}},
                     {"monitoring", {{"enabled", services.monitoring}, {"grafana", services.grafana}}}};
    j["runtime"] = {
        {"backend", to_string(runtime.backend)},
        {"interface", runtime.interface},
        {"slots_per_node", runtime.slots_per_node == 0 ? json("auto") : json(runtime.slots_per_node)},
        {"master_port", runtime.master_port},
        {"image", runtime.image},
        {"container_engine", runtime.container_engine},
        {"shm_size", runtime.shm_size},
        {"mounts", runtime.mounts}};
    j["hostfile"] = {{"format", to_string(hostfile_format)}};
    return j;
}

} // namespace ddl
