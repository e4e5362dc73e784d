#pragma once
// The IAM calls `ddl gc --spec` makes to remove a leaked cluster's node-credential role and instance
// profile (terraform/iam.tf): IAM's Query API (IAM API Reference, "Making query requests": POST / with a
// form body, Version 2010-05-08, the global endpoint signed for us-east-1, service iam), answers and
// <ErrorResponse><Error><Code> refusals read with pugixml.
#include "targets/aws/Ec2Client.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddl {

// A role or instance profile as GetRole / GetInstanceProfile show it.
struct IamEntity {
    std::map<std::string, std::string> tags;
    std::vector<std::string> roles; // an instance profile's role(s)
};

class IamClient {
public:
    IamClient(AwsTransport& transport, const AwsCredentials& creds)
        : m_transport(transport), m_creds(creds) {}

    // GetRole / GetInstanceProfile `name`; nullopt when IAM has none (NoSuchEntity).
    Result<std::optional<IamEntity>> role(const std::string& name);
    Result<std::optional<IamEntity>> instance_profile(const std::string& name);
    // ListRolePolicies: the names of the role's inline policies.
    Result<std::vector<std::string>> role_policies(const std::string& role);
    // One change (DeleteRolePolicy, RemoveRoleFromInstanceProfile, ...): done, gone (NoSuchEntity), or
    // refused with IAM's code and message (DeleteConflict, ...); an Error only when no answer came.
    Result<Ec2Change> change(const std::string& action,
                             const std::vector<std::pair<std::string, std::string>>& params);

private:
    using Reply = AwsQueryReply;
    Result<Reply> call(const std::string& action,
                       const std::vector<std::pair<std::string, std::string>>& params);
    Result<std::optional<IamEntity>> entity(const std::string& action, const std::string& param,
                                            const std::string& name, const char* path);

    AwsTransport& m_transport;
    const AwsCredentials& m_creds;
};

} // namespace ddl
