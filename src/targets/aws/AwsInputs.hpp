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
    // terraform.tfvars.json: every variable of variables.tf that the spec decides, and public_key when
    // one is known (without it Terraform asks for var.public_key, as for any required variable), and
    // state_dir when known and at most 256 characters (the instances' ddl-state tag, for `ddl gc --spec`).
    // Left out (the module's default): user_data.
    static nlohmann::json tfvars(const Spec& spec, const std::string& public_key,
                                 const std::string& state_dir = "");
    // The module's *.tf files by name, as compiled into ddl.
    static const std::map<std::string, std::string>& module_files();
};

} // namespace ddl
