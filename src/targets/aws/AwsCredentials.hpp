#pragma once
// AWS credentials, found the way the AWS CLI and SDKs (and so the Terraform provider) find them
// (docs/research/aws-research.md §6):
//   1. a profile named by the spec (aws.profile): its keys from the shared credentials file
//      ($AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, section [NAME]), else from the config file
//      ($AWS_CONFIG_FILE or ~/.aws/config, section [profile NAME], or [default]); environment keys are
//      then not used, as with the CLI's --profile;
//   2. else AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN, or the older
//      AWS_SECURITY_TOKEN) from the environment;
//   3. else the profile $AWS_PROFILE, $AWS_DEFAULT_PROFILE or "default" from the same files.
// Endpoints: AWS_ENDPOINT_URL_EC2 / AWS_ENDPOINT_URL_SERVICE_QUOTAS / AWS_ENDPOINT_URL_IAM over
// AWS_ENDPOINT_URL, unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true; else https://ec2.REGION.amazonaws.com/,
// https://servicequotas.REGION.amazonaws.com/ and IAM's global https://iam.amazonaws.com/. AWS_CA_BUNDLE: the
// CA file to verify them with. Secrets stay in memory and are registered with the log's redactor as soon as
// they are read.
#include "util/Result.hpp"

#include <functional>
#include <map>
#include <string>

namespace ddl {

struct AwsCredentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token; // temporary credentials only
    std::string profile;       // the profile the keys came from; empty: the environment
    std::string source;        // where they came from, for messages ("environment", a file and section)
    // A profile without static keys that gets them another way (role_arn, credential_process, sso_...):
    // Terraform's provider can follow it, ddl's pre-flight cannot. Empty when the keys are here.
    std::string delegated_by;
    std::string credentials_file, config_file; // the shared files consulted (absolute)
    std::string region;
    std::string ec2_endpoint;    // ends without '/'
    std::string quotas_endpoint; // ends without '/'
    std::string iam_endpoint;    // ends without '/'
    std::string ca_bundle;       // empty: the system's CAs

    // Where the environment and the file system come from; tests substitute them.
    struct Sources {
        std::function<std::string(const std::string&)> getenv; // "" when unset
        std::string home;
    };
    static Sources system_sources();

    // `spec_profile`: aws.profile (empty: none); `region`: aws.region. Errors name the file, the
    // section and the fix.
    static Result<AwsCredentials> resolve(const std::string& spec_profile, const std::string& region,
                                          const Sources& src);
    // The environment Terraform/OpenTofu gets, so its provider uses the very credentials pre-flight
    // checked; secrets only here, never in argv or files.
    std::map<std::string, std::string> terraform_env() const;
};

// One INI-style AWS shared file: {section: {key: value}}, keys lower-cased, comments (# ;) dropped.
std::map<std::string, std::map<std::string, std::string>> parse_aws_shared_file(const std::string& text);

} // namespace ddl
