#pragma once
// What every Terraform target's terraform.tfvars.json holds alike: the variables of src/terraform/module/
// common.tf (cluster_name, ssh_user, worker_count, network_cidr, allowed_cidrs, allow_any_source, public_key,
// state_dir) and the nodes' flavors, which each module names its own way. A target adds its provider's own
// variables to these; nlohmann::json keeps keys sorted, so the file has the same bytes however the object
// was put together.
#include "spec/Spec.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace ddl {

// How a module names and limits what every module has.
struct ModuleConventions {
    std::size_t state_dir_max;     // the cloud's tag or metadata value limit for state_dir
    std::string network_cidr;      // the spec's network for the subnet the module creates
    std::string master_flavor_var; // the variable of the master's flavor, e.g. "master_instance_type"
    std::string worker_flavor_var; // the workers' (the master's flavor when there are no workers: the
                                   // variable must be valid even when no worker uses it)
};

// public_key only when known (without it the variable is left to the user, as Terraform users pass one:
// -var, TF_VAR_public_key); state_dir only when known and at most state_dir_max characters (a longer path
// is not recorded, and gc then leaves the cluster alone).
nlohmann::json shared_tfvars(const Spec& spec, const std::string& public_key, const std::string& state_dir,
                             const ModuleConventions& module);

// `vars` with `expires` (common.tf: when the lifetime ends, render/Expiry.hpp) where the spec sets a
// lifetime; without one the variable keeps its default (no expiry recorded).
nlohmann::json with_expiry(nlohmann::json vars, const std::string& expires);

} // namespace ddl
