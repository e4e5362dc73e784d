#pragma once
// The inputs of the OpenStack Terraform module (src/targets/openstack/terraform/) for one cluster: the
// module's own files, terraform.tfvars.json with exactly the variables the module declares, and the backend
// configuration. Pure functions of the spec and the cluster's public key: no credentials ever (they come
// from clouds.yaml at run time), no timestamps, no absolute paths.
#include "targets/openstack/OpenstackSection.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace ddl {

// Where the module and its inputs go inside the rendered files.
inline constexpr const char* k_openstack_terraform_dir = "openstack/terraform";

class OpenstackInputs {
public:
    // terraform.tfvars.json: every variable of variables.tf that the spec decides, and public_key when
    // one is known (without it Terraform asks for var.public_key, as for any required variable), and
    // state_dir when known (the servers' ddl_state metadata). Variables left out (user_data) keep the
    // module's default.
    static nlohmann::json tfvars(const Spec& spec, const std::string& public_key,
                                 const std::string& state_dir = "");
    // backend.tf.json: local state in the working directory unless openstack.state_backend says
    // http or s3. Their credentials come from the environment (TF_HTTP_PASSWORD, AWS_*), never here.
    static nlohmann::json backend(const Spec& spec);
    // The module's *.tf files by name, as compiled into ddl.
    static const std::map<std::string, std::string>& module_files();
};

} // namespace ddl
