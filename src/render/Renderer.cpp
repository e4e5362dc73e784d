#include "render/Renderer.hpp"

#include "spec/ImageRef.hpp"
#include "util/Files.hpp"

#include <filesystem>

namespace ddl {
namespace {

// Variables every configure run receives (Ansible extra-vars), from the spec alone.
nlohmann::json ansible_vars(const Spec& s) {
    // GPULab jobs run in containers on GPU hosts it manages: drivers and container runtime are its own.
    const TargetSection* section = s.section.get();
    const bool driver_roles = !section || section->installs_gpu_stack();
    // Namespace nodes share this machine's file system (site.yml applies only the base roles there);
    // container nodes have their own but cannot reach Grafana's repository or PyPI, and their kernel
    // may lack nfsd (the nfs_server role then serves the folder over sshfs).
    const std::string nodes_as = section ? section->nodes_are() : "machines";
    const bool container = nodes_as == "containers";
    nlohmann::json vars{
        {"ddl_cluster", s.name},
        {"ddl_target", s.target},
        // Local namespace nodes share this machine's file system: roles must not install packages there.
        {"ddl_nodes_as", nodes_as},
        {"ddl_gpu_driver", driver_roles && s.gpu.driver},
        {"ddl_gpu_driver_branch", s.gpu.driver_branch},
        {"ddl_gpu_kernel_modules", s.gpu.kernel_modules},
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
        // The training container: the play that keeps it runs only when an image is set.
        {"ddl_training_container_enabled", !s.runtime.image.empty()},
        {"ddl_training_image", s.runtime.image},
        {"ddl_training_registry", s.runtime.image.empty() ? "" : parse_image_ref(s.runtime.image)->registry},
        {"ddl_training_container_prefix", "ddl-train-" + s.name + "-"},
        {"ddl_container_engine", s.runtime.container_engine},
        {"ddl_container_engine_cmd", s.container_engine_argv()},
        {"ddl_training_shm_size", s.runtime.shm_size},
        {"ddl_training_mounts", s.runtime.mounts}};
    // The idle clock ends a GPULab cluster's jobs, or with a node credential the cloud's servers, itself once
    // idle this long (idle_clock role).
    if (s.life.autostop.set()) {
        vars["ddl_autostop_idle_minutes"] = s.life.autostop.idle_minutes;
        vars["ddl_autostop_action"] = s.life.autostop.action;
    }
    if (section) vars.update(section->ansible_vars());
    return vars;
}

} // namespace

std::string json_file(const nlohmann::json& j) {
    return j.dump(2) + "\n";
}

RenderedFiles render_common(const Spec& spec) {
    RenderedFiles files;
    files["spec.json"] = json_file(spec.to_json());
    files["ansible/vars.json"] = json_file(ansible_vars(spec));
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
