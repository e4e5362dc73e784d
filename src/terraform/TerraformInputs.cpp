#include "terraform/TerraformInputs.hpp"

#include "util/Strings.hpp"

namespace ddl {

nlohmann::json shared_tfvars(const Spec& s, const std::string& public_key, const std::string& state_dir,
                             const ModuleConventions& module) {
    nlohmann::json vars = {{"cluster_name", s.name},
                           {"ssh_user", s.access.user},
                           {"worker_count", s.workers.count},
                           {"network_cidr", module.network_cidr},
                           {"allowed_cidrs", s.access.allowed_cidrs},
                           {"allow_any_source", s.access.allow_any_source}};
    if (s.life.autostop.node_credential) vars["node_credential"] = true;
    vars[module.master_flavor_var] = s.master.flavor;
    vars[module.worker_flavor_var] = s.workers.flavor.empty() ? s.master.flavor : s.workers.flavor;
    std::string key = trim(public_key);
    if (!key.empty()) vars["public_key"] = key;
    if (!state_dir.empty() && state_dir.size() <= module.state_dir_max) vars["state_dir"] = state_dir;
    return vars;
}

nlohmann::json with_expiry(nlohmann::json vars, const std::string& expires) {
    if (!expires.empty()) vars["expires"] = expires;
    return vars;
}

} // namespace ddl
