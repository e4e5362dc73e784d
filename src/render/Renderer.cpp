#include "render/Renderer.hpp"

#include "render/GpulabJobs.hpp"
#include "render/LocalPlan.hpp"
#include "render/OpenstackInputs.hpp"
#include "render/RequestRspec.hpp"
#include "render/SlurmScript.hpp"
#include "spec/ImageRef.hpp"
#include "util/Files.hpp"

#include <filesystem>
#include <functional>

namespace ddl {
namespace {

std::string dump(const nlohmann::json& j) {
    return j.dump(2) + "\n";
}

// Variables every configure run receives (Ansible extra-vars), from the spec alone.
nlohmann::json ansible_vars(const Spec& s) {
    // GPULab jobs run in containers on GPU hosts it manages: drivers and container runtime are its own.
    const bool driver_roles = s.target != Target::gpulab;
    // Namespace nodes share this machine's file system (site.yml applies only the base roles there);
    // container nodes have their own but cannot reach Grafana's repository or PyPI, and their kernel
    // may lack nfsd (the nfs_server role then serves the folder over sshfs).
    const bool container = s.target == Target::local && s.local.nodes_as == "containers";
    return {
        {"ddl_cluster", s.name},
        {"ddl_target", to_string(s.target)},
        // Local namespace nodes share this machine's file system: roles must not install packages there.
        {"ddl_nodes_as", s.target == Target::local ? s.local.nodes_as : "machines"},
        {"ddl_gpu_driver", driver_roles && s.gpu.driver},
        {"ddl_gpu_driver_branch", s.gpu.driver_branch},
        {"ddl_container_toolkit", driver_roles && s.gpu.container_toolkit},
        {"ddl_allow_reboot", s.gpu.allow_reboot},
        {"ddl_nfs_enabled", s.services.nfs},
        {"ddl_nfs_export", s.services.nfs_export},
        {"ddl_nfs_mount", s.services.nfs_mount},
        {"ddl_shared_fs", s.services.nfs_transport != "auto" ? s.services.nfs_transport
                          : container                        ? "auto"
                                                             : "nfs"},
        {"ddl_jupyter_enabled", s.services.jupyter},
        {"ddl_jupyter_port", s.services.jupyter_port},
        {"ddl_jupyter_install", s.services.jupyter_install != "auto" ? s.services.jupyter_install
                                : container                          ? "apt"
                                                                     : "pip"},
        {"ddl_monitoring_enabled", s.services.monitoring},
        {"ddl_grafana", s.services.grafana && !container},
        // The training container (runtime.image) runs on every node, GPU or not: Docker everywhere
        // when Docker is its engine.
        {"ddl_docker_without_gpu", !s.runtime.image.empty() && s.runtime.container_engine == "docker"},
        {"ddl_runtime_backend", to_string(s.runtime.backend)},
        {"ddl_runtime_interface", s.runtime.interface},
        {"ddl_master_port", s.runtime.master_port},
        // The training container (#11): the play that keeps it runs only when an image is set.
        {"ddl_training_container_enabled", !s.runtime.image.empty()},
        {"ddl_training_image", s.runtime.image},
        {"ddl_training_registry", s.runtime.image.empty() ? "" : parse_image_ref(s.runtime.image)->registry},
        {"ddl_training_container_prefix", "ddl-train-" + s.name + "-"},
        {"ddl_container_engine", s.runtime.container_engine},
        {"ddl_container_engine_cmd", s.container_engine_argv()},
        {"ddl_training_shm_size", s.runtime.shm_size},
        {"ddl_training_mounts", s.runtime.mounts}};
}

// The module as compiled in, its inputs and backend: a folder `terraform init/plan/apply` runs in.
Result<RenderedFiles> render_openstack(const Spec& s, const RenderInputs& in) {
    RenderedFiles f;
    const std::string dir = std::string(k_openstack_terraform_dir) + "/";
    for (const auto& [name, text] : OpenstackInputs::module_files())
        f[dir + name] = text;
    f[dir + "terraform.tfvars.json"] = dump(OpenstackInputs::tfvars(s, in.public_key));
    f[dir + "backend.tf.json"] = dump(OpenstackInputs::backend(s));
    return f;
}

Result<RenderedFiles> render_local(const Spec& s, const RenderInputs&) {
    RenderedFiles f;
    f["local/plan.json"] = dump(LocalPlan::from_spec(s).to_json());
    return f;
}

// The machines as ddl will reach them; keys are paths on this machine, never key material.
Result<RenderedFiles> render_ssh(const Spec& s, const RenderInputs&) {
    nlohmann::json hosts = nlohmann::json::array();
    for (std::size_t i = 0; i < s.ssh.hosts.size(); ++i) {
        const auto& h = s.ssh.hosts[i];
        hosts.push_back({{"name", h.name},
                         {"group", i == 0 ? "master" : "workers"},
                         {"address", h.address},
                         {"port", h.port},
                         {"user", h.user.empty() ? s.access.user : h.user},
                         {"key", h.key.empty() ? s.access.private_key : h.key},
                         {"jump", h.jump},
                         {"private_address", h.private_address},
                         {"gpus", h.gpus}});
    }
    RenderedFiles f;
    f["ssh/hosts.json"] = dump(hosts);
    return f;
}

Result<RenderedFiles> render_slurm(const Spec& s, const RenderInputs&) {
    RenderedFiles f;
    f[SlurmScript::k_path] = SlurmScript::render(s);
    return f;
}

// The request RSpec jFed reads, and what ddl tells jFed about the slice (no dates: those are set at deploy).
Result<RenderedFiles> render_virtualwall(const Spec& s, const RenderInputs&) {
    const auto& vw = s.virtualwall;
    RenderedFiles f;
    f["virtualwall/request.rspec"] = render_request_rspec(s);
    f["virtualwall/slice.json"] = dump({{"slice", vw.slice_name(s.name)},
                                        {"project", vw.project},
                                        {"testbed", vw.testbed},
                                        {"authority", virtualwall_cm_urn(vw.testbed)},
                                        {"expiry_hours", vw.expiry_hours}});
    return f;
}

// One job request per file, in submit order; the cluster's public key is filled in at deploy.
Result<RenderedFiles> render_gpulab(const Spec& s, const RenderInputs&) {
    RenderedFiles f;
    auto jobs = render_gpulab_jobs(s, k_gpulab_key_placeholder);
    for (std::size_t i = 0; i < jobs.size(); ++i)
        f["gpulab/" + jobs[i].node + ".json"] = dump(jobs[i].request);
    return f;
}

using RenderFn = std::function<Result<RenderedFiles>(const Spec&, const RenderInputs&)>;

// One entry per target, in Target order.
const std::map<Target, RenderFn>& renderers() {
    static const std::map<Target, RenderFn> table{
        {Target::openstack, render_openstack}, {Target::virtualwall, render_virtualwall},
        {Target::gpulab, render_gpulab},       {Target::ssh, render_ssh},
        {Target::slurm, render_slurm},         {Target::local, render_local},
    };
    return table;
}

} // namespace

Result<RenderedFiles> render_spec(const Spec& spec, const RenderInputs& inputs) {
    auto target_files = renderers().at(spec.target)(spec, inputs);
    if (!target_files) return target_files.error();
    RenderedFiles files = std::move(*target_files);
    files["spec.json"] = dump(spec.to_json());
    files["ansible/vars.json"] = dump(ansible_vars(spec));
    return files;
}

Status write_rendered(const RenderedFiles& files, const std::string& out_dir) {
    for (const auto& [rel, content] : files) {
        std::filesystem::path p = std::filesystem::path(out_dir) / rel;
        if (auto s = make_dirs(p.parent_path().string(), 0700); !s) return s;
        if (auto s = write_file_atomic(p.string(), content, 0600); !s) return s;
    }
    return {};
}

} // namespace ddl
