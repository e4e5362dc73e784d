#pragma once
// The OpenStack module (src/targets/openstack/terraform/, compiled in as openstack_module_files()) gets two
// files per cluster from ddl, both pure functions of the spec (and the cluster's public key): the variables
// and where Terraform keeps its state. Credentials are never in them: they come from clouds.yaml and the
// environment at run time.
#include "targets/openstack/OpenstackSection.hpp"

#include <map>
#include <nlohmann/json.hpp>

namespace ddl {

inline constexpr const char* k_openstack_terraform_dir = "openstack/terraform";
const std::map<std::string, std::string>& openstack_module_files();

class OpenstackInputs {
public:
    // backend.tf.json: local state in the working directory unless openstack.state_backend says http or
    // s3. Their credentials come from the environment (TF_HTTP_PASSWORD, AWS_*), never from here.
    static nlohmann::json backend(const Spec& spec);
    // terraform.tfvars.json: the module's variables the spec decides, public_key when one is known and
    // state_dir when known (the servers' ddl_state metadata); user_data keeps the module's default.
    static nlohmann::json tfvars(const Spec& spec, const std::string& public_key,
                                 const std::string& state_dir = "");
};

} // namespace ddl
