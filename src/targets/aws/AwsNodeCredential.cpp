// The AWS side of the opt-in node credential (autostop.node_credential; docs/security.md "Nodes hold no
// cloud credential"). The credential itself never passes through ddl: the module gives the master an
// instance profile (terraform/iam.tf) whose role may only stop, terminate and tag ddl-autostop the
// instances tagged ddl-cluster=<name>, and the master reads its temporary keys from its own instance
// metadata (src/runtime/tools/ddl_idle_aws.py). What ddl hands the master is where to send the calls and
// which instances to act on; what it reads back, once they are stopped or terminated, is the line the
// master's idle clock recorded in the master's tag ddl-autostop.
#include "targets/aws/AwsTarget.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

namespace ddl {
namespace {

constexpr const char* k_autostop_tag = "ddl-autostop";

// The module's output node_ids (workers first, master last), from the outputs as TerraformRunner::outputs
// gives them ({name: value}).
std::vector<std::string> node_ids(const nlohmann::json& outputs) {
    std::vector<std::string> ids;
    if (!outputs.is_object() || !outputs.contains("node_ids") || !outputs["node_ids"].is_array()) return ids;
    for (const auto& id : outputs["node_ids"])
        if (id.is_string() && !id.get<std::string>().empty()) ids.push_back(id.get<std::string>());
    return ids;
}

} // namespace

Result<std::optional<nlohmann::json>> AwsTarget::node_credential(Context& ctx,
                                                                 const nlohmann::json& outputs) {
    if (!ctx.spec.life.autostop.node_credential) return std::optional<nlohmann::json>{};
    const auto ids = node_ids(outputs);
    if (ids.empty())
        return Error{"the AWS module gave no output node_ids: the master cannot know which instances to end "
                     "(is the cluster's terraform/ folder from an older ddl? `ddl deploy` renders it again)"};
    const auto& a = ctx.spec.target_section<AwsSpec>();
    auto creds = AwsCredentials::resolve(a.profile, a.region, m_deps.sources);
    if (!creds) return creds.error();
    std::string ca_pem;
    if (!creds->ca_bundle.empty()) {
        auto text = read_file(creds->ca_bundle);
        if (!text) return Error{"AWS_CA_BUNDLE " + creds->ca_bundle + ": " + text.error().message};
        ca_pem = *text;
    }
    // The region and the endpoint the controller used (the default one where none was given); no key: the
    // master's come from its instance profile.
    nlohmann::json env = {{"DDL_CLOUD", "aws"},
                          {"AWS_REGION", creds->region},
                          {"AWS_ENDPOINT_URL_EC2", creds->ec2_endpoint},
                          {"DDL_CLOUD_SERVERS", join(ids, ",")}};
    return std::optional<nlohmann::json>{nlohmann::json{{"env", env}, {"ca_pem", ca_pem}}};
}

Result<std::optional<std::string>> AwsTarget::autostop_end(Context& ctx) {
    // Stopped by ddl itself (`ddl stop`, gc's stop): not the clock's end, whatever an older tag says.
    if (!ctx.spec.life.autostop.node_credential || ctx.state.stopped()) return std::optional<std::string>{};
    const auto& a = ctx.spec.target_section<AwsSpec>();
    auto creds = AwsCredentials::resolve(a.profile, a.region, m_deps.sources);
    if (!creds) return creds.error();
    auto transport = make_transport();
    Ec2Client ec2(*transport, *creds);
    const auto ids = node_ids(ctx.state.target_data.value("outputs", nlohmann::json::object()));
    std::vector<Ec2Filter> filters{{"tag:ddl-managed", {"true"}}, {"tag:ddl-cluster", {ctx.state.cluster}}};
    if (!ids.empty()) filters.push_back({"instance-id", ids});
    auto instances = ec2.describe_instances(filters);
    if (!instances) return instances.error();
    // EC2 lists a terminated instance for about an hour: after that, a cluster the clock terminated
    // (action: destroy) has no instance left to read the line from, and is as gone as the clock left it.
    if (instances->empty() && !ids.empty() && ctx.spec.life.autostop.action == "destroy")
        return std::optional<std::string>{
            "ddl-idle: autostop ends the allocation: no instance of the cluster is left (autostop.action "
            "destroy with the node credential; EC2 no longer lists the terminated instances)"};
    const Ec2Instance* master = nullptr;
    for (const auto& i : *instances) {
        if (i.state != "stopped" && i.state != "terminated") return std::optional<std::string>{};
        auto role = i.tags.find("ddl-role");
        if (role != i.tags.end() && role->second == "master" &&
            (!master || (!ids.empty() && i.id == ids.back())))
            master = &i;
    }
    if (!master) return std::optional<std::string>{};
    auto line = master->tags.find(k_autostop_tag);
    if (line == master->tags.end() || line->second.empty()) return std::optional<std::string>{};
    // "… ends the allocation at <time>: …": a line from before the master's last start (launchTime, which
    // EC2 moves at every start) is an earlier end's, not this stop's. Both are ISO 8601 UTC: text order is
    // time order.
    const auto at = line->second.find(" at ");
    if (at != std::string::npos && master->launch_time.size() >= 19 &&
        line->second.substr(at + 4, 19) < master->launch_time.substr(0, 19))
        return std::optional<std::string>{};
    return std::optional<std::string>{line->second};
}

} // namespace ddl
