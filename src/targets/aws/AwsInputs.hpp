#pragma once
// What ddl renders for the AWS module (src/targets/aws/terraform/, compiled in as aws_module_files()):
// terraform.tfvars.json, a pure function of the spec and the cluster's public key. No credentials (Terraform
// reads them from its environment), no timestamps, no absolute paths; the state stays local.
#include "targets/aws/AwsSection.hpp"

#include <map>
#include <nlohmann/json.hpp>

namespace ddl {

const std::map<std::string, std::string>& aws_module_files();

// Where the module and its inputs go inside the rendered files.
inline constexpr const char* k_aws_terraform_dir = "aws/terraform";

struct AwsInputs {
    // Every variable the module declares that the spec decides; public_key when one is known (without it
    // Terraform asks for var.public_key, as for any required variable); state_dir when known and at most 256
    // characters (the instances' ddl-state tag, for `ddl gc --spec`). user_data keeps the module's default.
    static nlohmann::json tfvars(const Spec& spec, const std::string& public_key,
                                 const std::string& state_dir = "");
};

} // namespace ddl
