#include "terraform/TerraformInputs.hpp"

#include "util/Strings.hpp"

namespace ddl {

nlohmann::json shared_tfvars(const Spec& s, const std::string& public_key, const std::string& state_dir,
                             std::size_t state_dir_max) {
    nlohmann::json vars = {{"cluster_name", s.name},
                           {"ssh_user", s.access.user},
                           {"worker_count", s.workers.count},
                           {"allowed_cidrs", s.access.allowed_cidrs},
                           {"allow_any_source", s.access.allow_any_source}};
    std::string key = trim(public_key);
    if (!key.empty()) vars["public_key"] = key;
    if (!state_dir.empty() && state_dir.size() <= state_dir_max) vars["state_dir"] = state_dir;
    return vars;
}

nlohmann::json with_expiry(nlohmann::json vars, const std::string& expires) {
    if (!expires.empty()) vars["expires"] = expires;
    return vars;
}

std::string worker_flavor_or_master(const Spec& s) {
    return s.workers.flavor.empty() ? s.master.flavor : s.workers.flavor;
}

} // namespace ddl
