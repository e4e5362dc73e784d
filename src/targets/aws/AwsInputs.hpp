#pragma once
// The inputs of the AWS Terraform module (src/targets/aws/terraform/) for one cluster: the module's own
// files and terraform.tfvars.json with exactly the variables the module declares that ddl decides. Pure
// functions of the spec and the cluster's public key: no credentials ever (Terraform reads them from
// its environment), no timestamps, no absolute paths.
#include "targets/aws/AwsSection.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace ddl {

// Where the module and its inputs go inside the rendered files.
inline constexpr const char* k_aws_terraform_dir = "aws/terraform";

class AwsInputs {
public:
    // Written when no public key is known yet (`ddl render` before the cluster's key exists);
    // `ddl deploy` always renders the real key. It fails the module's validation on purpose.
    static constexpr const char* k_public_key_placeholder =
        "REPLACE-WITH-AN-OPENSSH-PUBLIC-KEY (ddl deploy writes the cluster's key here)";

    // terraform.tfvars.json: every variable of variables.tf that the spec decides. Left out (the module's
    // default): user_data.
    static nlohmann::json tfvars(const Spec& spec, const std::string& public_key);
    // The module's *.tf files by name, as compiled into ddl.
    static const std::map<std::string, std::string>& module_files();
};

} // namespace ddl
