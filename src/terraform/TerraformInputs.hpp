#pragma once
// What every Terraform target's terraform.tfvars.json holds alike: the variables each module declares with
// the same meaning (cluster_name, ssh_user, worker_count, allowed_cidrs, allow_any_source, public_key,
// state_dir). A target adds its provider's own variables to these; nlohmann::json keeps keys sorted, so the
// file has the same bytes however the object was put together.
#include "spec/Spec.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace ddl {

// public_key only when known (without it the variable is left to the user, as Terraform users pass one:
// -var, TF_VAR_public_key); state_dir only when known and at most state_dir_max characters (the cloud's
// tag or metadata limit: a longer path is not recorded, and gc then leaves the cluster alone).
nlohmann::json shared_tfvars(const Spec& spec, const std::string& public_key, const std::string& state_dir,
                             std::size_t state_dir_max);

// `vars` with `expires` (the module's expiry.tf: when the lifetime ends, render/Expiry.hpp) where the spec
// sets a lifetime; without one the variable keeps its default (no expiry recorded).
nlohmann::json with_expiry(nlohmann::json vars, const std::string& expires);

// The workers' flavor (instance type), or the master's when the spec has no workers: the module's variable
// must be valid even when no worker uses it.
std::string worker_flavor_or_master(const Spec& spec);

} // namespace ddl
