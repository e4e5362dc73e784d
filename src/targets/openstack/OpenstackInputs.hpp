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
    // Written when no public key is known yet (`ddl render` before the cluster's key exists);
    // `ddl deploy` always renders the real key. It fails the module's validation on purpose.
    static constexpr const char* k_public_key_placeholder =
        "REPLACE-WITH-AN-OPENSSH-PUBLIC-KEY (ddl deploy writes the cluster's key here)";

    // terraform.tfvars.json: every variable of variables.tf that the spec decides. Variables left out
    // (user_data) keep the module's default.
    static nlohmann::json tfvars(const Spec& spec, const std::string& public_key);
    // backend.tf.json: local state in the working directory unless openstack.state_backend says
    // http or s3. Their credentials come from the environment (TF_HTTP_PASSWORD, AWS_*), never here.
    static nlohmann::json backend(const Spec& spec);
    // The module's *.tf files by name, as compiled into ddl.
    static const std::map<std::string, std::string>& module_files();
};

} // namespace ddl
