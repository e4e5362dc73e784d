#include "spec/Spec.hpp"

#include "util/Strings.hpp"

namespace ddl {

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

double CostSpec::node_price(const std::string& flavor) const {
    auto it = per_flavor.find(flavor);
    return it != per_flavor.end() ? it->second : per_node_hour;
}

double CostSpec::gpu_price(const std::string& gpu_name) const {
    const std::string name = to_lower(gpu_name);
    std::size_t best = 0;
    double price = per_gpu_hour;
    for (const auto& [model, p] : per_gpu_model) {
        if (model.size() > best && name.find(to_lower(model)) != std::string::npos) {
            best = model.size();
            price = p;
        }
    }
    return price;
}

int Spec::node_count() const {
    if (const auto* t = section.get())
        if (auto n = t->node_count(*this)) return *n;
    return master.count + workers.count;
}

std::vector<std::string> Spec::container_engine_argv() const {
    std::vector<std::string> argv{runtime.container_engine};
    if (const auto* t = section.get())
        for (auto& o : t->engine_options(runtime.container_engine))
            argv.push_back(std::move(o));
    return argv;
}

nlohmann::json Spec::to_json() const {
    using nlohmann::json;
    auto group = [](const NodeGroup& g) {
        return json{{"count", g.count}, {"flavor", g.flavor}, {"gpus", g.gpus}, {"disk_gb", g.disk_gb}};
    };
    json j;
    j["apiVersion"] = api_version;
    j["name"] = name;
    j["target"] = target;
    j["nodes"] = {{"master", group(master)}, {"workers", group(workers)}};
    if (spares > 0) j["nodes"]["spares"] = spares; // absent when none: older specs keep their digest
    j["access"] = {{"user", access.user},
                   {"allowed_cidrs", access.allowed_cidrs},
                   {"allow_any_source", access.allow_any_source},
                   {"private_key", access.private_key}};
    if (const auto* t = section.get()) j[target] = t->to_json();
    j["gpu"] = {{"driver", gpu.driver},
                {"driver_branch", gpu.driver_branch},
                {"kernel_modules", gpu.kernel_modules},
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
        {"mounts", runtime.mounts},
        {"lease_warn_minutes", runtime.lease_warn_minutes}};
    j["hostfile"] = {{"format", to_string(hostfile_format)}};
    // Only what differs from the defaults: specs without a smoke section render the same bytes as before
    // the key existed.
    if (smoke.training != SmokeTraining{})
        j["smoke"]["training"] = {{"enabled", smoke.training.enabled},
                                  {"steps", smoke.training.steps},
                                  {"min_loss_drop", smoke.training.min_loss_drop}};
    if (!smoke.checks.empty()) {
        j["smoke"]["checks"] = json::array();
        for (const auto& c : smoke.checks)
            j["smoke"]["checks"].push_back({{"name", c.name},
                                            {"run", c.run},
                                            {"on", c.on},
                                            {"timeout", c.timeout_s},
                                            {"expect_exit", c.expect_exit}});
    }
    return j;
}

} // namespace ddl
