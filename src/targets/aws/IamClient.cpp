#include "targets/aws/IamClient.hpp"

#include <pugixml.hpp>

namespace ddl {
namespace {

constexpr const char* k_iam_version = "2010-05-08";
// IAM is global: its endpoint takes requests signed for us-east-1 (the aws partition).
constexpr const char* k_iam_region = "us-east-1";

} // namespace

Result<IamClient::Reply> IamClient::call(const std::string& action,
                                         const std::vector<std::pair<std::string, std::string>>& params) {
    return aws_query(m_transport, m_creds, AwsRequest{m_creds.iam_endpoint, "iam", {}, {}, k_iam_region},
                     "IAM", action, k_iam_version, params, "ErrorResponse/Error");
}

Result<std::optional<IamEntity>> IamClient::entity(const std::string& action, const std::string& param,
                                                   const std::string& name, const char* path) {
    auto r = call(action, {{param, name}});
    if (!r) return r.error();
    if (r->code == "NoSuchEntity") return std::optional<IamEntity>{};
    if (r->status != 200)
        return Error{"IAM " + action + " " + name + " failed: " + r->code +
                     (r->message.empty() ? "" : ": " + r->message) + " (HTTP " + std::to_string(r->status) +
                     ")"};
    pugi::xml_document doc;
    if (!doc.load_buffer(r->body.data(), r->body.size()))
        return Error{"IAM " + action + ": the answer is not XML (is AWS_ENDPOINT_URL_IAM an IAM endpoint?)"};
    auto node = doc.document_element().first_element_by_path(path);
    IamEntity e;
    for (auto t : node.child("Tags").children("member"))
        e.tags[t.child("Key").text().as_string()] = t.child("Value").text().as_string();
    for (auto role : node.child("Roles").children("member"))
        e.roles.emplace_back(role.child("RoleName").text().as_string());
    return std::optional<IamEntity>{e};
}

Result<std::optional<IamEntity>> IamClient::role(const std::string& name) {
    return entity("GetRole", "RoleName", name, "GetRoleResult/Role");
}

Result<std::optional<IamEntity>> IamClient::instance_profile(const std::string& name) {
    return entity("GetInstanceProfile", "InstanceProfileName", name,
                  "GetInstanceProfileResult/InstanceProfile");
}

Result<std::vector<std::string>> IamClient::role_policies(const std::string& role) {
    auto r = call("ListRolePolicies", {{"RoleName", role}});
    if (!r) return r.error();
    if (r->code == "NoSuchEntity") return std::vector<std::string>{};
    if (r->status != 200)
        return Error{"IAM ListRolePolicies " + role + " failed: " + r->code + " (HTTP " +
                     std::to_string(r->status) + ")"};
    pugi::xml_document doc;
    if (!doc.load_buffer(r->body.data(), r->body.size()))
        return Error{"IAM ListRolePolicies: the answer is not XML"};
    std::vector<std::string> out;
    for (auto m : doc.document_element()
                      .first_element_by_path("ListRolePoliciesResult/PolicyNames")
                      .children("member"))
        out.emplace_back(m.text().as_string());
    return out;
}

Result<Ec2Change> IamClient::change(const std::string& action,
                                    const std::vector<std::pair<std::string, std::string>>& params) {
    auto r = call(action, params);
    if (!r) return r.error();
    return change_of(*r, [](const std::string& code) { return code == "NoSuchEntity"; });
}

} // namespace ddl
