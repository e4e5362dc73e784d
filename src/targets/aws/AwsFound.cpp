// `ddl gc --spec FILE` on AWS from the region's side. The module tags everything it creates
// ddl-managed=true and ddl-cluster=<name> (and ddl-expires=<when its lifetime ends>, read by `ddl gc
// --expired --spec`, where the spec sets one), and the instances also ddl-state=<the state folder that
// deployed them>. So a cluster whose state folder, and with it its Terraform state, is gone is found from the
// instance list and removed through the EC2 Query API, as the Amazon EC2 API Reference documents it
// (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/): DescribeInstances (Filter.N tag:<key> and
// instance-state-name, NextToken paging; launchTime), TerminateInstances, DescribeSecurityGroups,
// RevokeSecurityGroupIngress, DeleteSecurityGroup, DescribeSubnets, DeleteSubnet,
// DescribeInternetGateways, DetachInternetGateway, DeleteInternetGateway, DescribeRouteTables,
// DeleteRouteTable, DescribeVpcs, DeleteVpc, DescribeKeyPairs, DeleteKeyPair, DescribePlacementGroups,
// DeletePlacementGroup; error codes from "Error codes for the Amazon EC2 API".
// The order is the one EC2 accepts: the instances (waited for until terminated: their network interfaces
// hold the security groups and the subnet, their public addresses the internet gateway), the rules by
// which one security group names another, the security groups, the subnet (and with it its route table
// association), the internet gateway (detached first), the route table, the VPC, then the key pair and
// placement group. What is already gone (*.NotFound) counts as removed, so a gc cut short can run again;
// a refusal (DependencyViolation) is named and the rest still tried. Last, where an instance carried it
// (iamInstanceProfile), the node credential's role and instance profile (terraform/iam.tf: both named
// <cluster>-master, removed only when tagged ddl-managed=true and ddl-cluster=<cluster>) through IAM, in the
// order the IAM API Reference's DeleteConflict asks: the role out of the profile
// (RemoveRoleFromInstanceProfile), the profile (DeleteInstanceProfile), the role's inline policies
// (DeleteRolePolicy), the role (DeleteRole); NoSuchEntity counts as removed.
#include "provision/FoundClusters.hpp"
#include "provision/Sweep.hpp"
#include "targets/aws/AwsTarget.hpp"
#include "targets/aws/IamClient.hpp"
#include "util/Strings.hpp"

#include <chrono>
#include <ctime>
#include <map>
#include <set>
#include <thread>

namespace ddl {
namespace {

constexpr auto k_terminate_deadline = std::chrono::minutes(10);
constexpr auto k_terminate_poll = std::chrono::seconds(3);

// Every state but terminated: an instance shutting down still holds the cluster's network.
const std::vector<std::string> k_live_states = {"pending", "running", "shutting-down", "stopping", "stopped"};

std::string label(const char* kind, const Ec2Object& o) {
    return std::string(kind) + " " + (o.name.empty() || o.name == o.id ? o.id : o.name + " (" + o.id + ")");
}

// RevokeSecurityGroupIngress of one rule of group `group` that names another group.
std::vector<std::pair<std::string, std::string>> revoke_params(const std::string& group,
                                                               const Ec2GroupRule& rule) {
    std::vector<std::pair<std::string, std::string>> p{{"GroupId", group},
                                                       {"IpPermissions.1.IpProtocol", rule.protocol}};
    if (!rule.from_port.empty()) p.emplace_back("IpPermissions.1.FromPort", rule.from_port);
    if (!rule.to_port.empty()) p.emplace_back("IpPermissions.1.ToPort", rule.to_port);
    p.emplace_back("IpPermissions.1.Groups.1.GroupId", rule.group_id);
    return p;
}

// EC2 terminates in the background; the network is free once every instance of `ids` is terminated (one
// no longer listed is gone too).
Status wait_terminated(Ec2Client& ec2, const std::vector<std::string>& ids) {
    const auto deadline = std::chrono::steady_clock::now() + k_terminate_deadline;
    for (;;) {
        auto left = ec2.describe_instances({{"instance-id", ids}, {"instance-state-name", k_live_states}});
        if (!left)
            return Error{left.error().message + "; run ddl gc again once the instances are terminated"};
        if (left->empty()) return {};
        if (std::chrono::steady_clock::now() > deadline) {
            std::vector<std::string> names;
            for (const auto& i : *left)
                names.push_back(i.id + " (" + i.state + ")");
            return Error{"instance(s) " + join(names, ", ") + " still not terminated after " +
                         std::to_string(
                             std::chrono::duration_cast<std::chrono::minutes>(k_terminate_deadline).count()) +
                         " min; run ddl gc again once EC2 has terminated them"};
        }
        std::this_thread::sleep_for(k_terminate_poll);
    }
}

} // namespace

Result<std::vector<FoundCluster>> AwsTarget::find_clusters(const Spec* given, ProcessRunner& /*proc*/) const {
    const Spec& spec = *given;
    const auto& a = spec.target_section<AwsSpec>();
    auto creds = AwsCredentials::resolve(a.profile, a.region, m_deps.sources);
    if (!creds) return creds.error();
    auto transport = make_transport();
    Ec2Client ec2(*transport, *creds);
    auto instances =
        ec2.describe_instances({{"tag:ddl-managed", {"true"}}, {"instance-state-name", k_live_states}});
    if (!instances) return instances.error();
    FoundClusters clusters("instances", std::time(nullptr));
    for (const auto& i : *instances) {
        auto c = i.tags.find("ddl-cluster");
        if (c == i.tags.end() || c->second.empty() || i.id.empty()) continue;
        auto& found = clusters.add(c->second, i.id, i.launch_time);
        auto s = i.tags.find("ddl-state");
        if (found.state_dir.empty() && s != i.tags.end()) found.state_dir = s->second;
        // The latest of its machines' ends (one form, so the text orders as the time does).
        auto e = i.tags.find("ddl-expires");
        if (e != i.tags.end() && e->second > found.expires) found.expires = e->second;
        // The node credential's instance profile (terraform/iam.tf), removed with the cluster.
        if (!i.instance_profile_arn.empty()) found.record["instance_profile"] = i.instance_profile_arn;
        found.record["region"] = creds->region;
        found.record["profile"] = a.profile;
        found.detail = std::to_string(clusters.machines(found)) + " instance(s) in region " + creds->region;
    }
    return clusters.take();
}

namespace {

// A change as the sweep sees it: the answer's code, and the refusal named with `what` and the action.
Result<SweepAnswer> sweep_answer(Ec2Client& ec2, const std::string& what, const std::string& action,
                                 const std::vector<std::pair<std::string, std::string>>& params) {
    auto r = ec2.change(action, params);
    if (!r) return r.error();
    return SweepAnswer{r->done, r->code,
                       what + ": EC2 " + action + " answered " + r->code +
                           (r->message.empty() ? "" : " (" + r->message + ")")};
}

SweepItem item(Ec2Client& ec2, const std::string& what, const std::string& action,
               const std::vector<std::pair<std::string, std::string>>& params) {
    return SweepItem{what, [&ec2, what, action, params] { return sweep_answer(ec2, what, action, params); }};
}

// What the steps of one cluster's sweep share: the client, the cluster's tag filter, and what one step
// lists for a later one (the live instances, the security groups, the internet gateways).
struct AwsSweep {
    Ec2Client& ec2;
    std::vector<Ec2Filter> tagged;
    std::vector<std::string> ids;
    std::vector<Ec2Object> groups, gateways;
};

// The live instances of the record, terminated in one call: TerminateInstances refuses the whole call
// (InvalidInstanceID.NotFound) when one of its ids no longer exists, and a filter never does.
SweepStep instances_step(AwsSweep& sw, const FoundCluster& found) {
    std::vector<std::string> recorded;
    for (const auto& i : found.record["instances"])
        if (i.is_string()) recorded.push_back(i.get<std::string>());
    SweepStep step{.name = "instances", .gone = ec2_means_gone, .stop_on_failure = true};
    step.list = [&sw, recorded]() -> Result<std::vector<SweepItem>> {
        auto live =
            sw.ec2.describe_instances({{"instance-id", recorded}, {"instance-state-name", k_live_states}});
        if (!live) return live.error();
        for (const auto& i : *live)
            sw.ids.push_back(i.id);
        if (sw.ids.empty()) return std::vector<SweepItem>{};
        std::vector<std::pair<std::string, std::string>> terminate;
        terminate.reserve(sw.ids.size());
        for (std::size_t n = 0; n < sw.ids.size(); ++n)
            terminate.emplace_back("InstanceId." + std::to_string(n + 1), sw.ids[n]);
        return std::vector<SweepItem>{
            item(sw.ec2, std::to_string(sw.ids.size()) + " instance(s) " + join(sw.ids, ", "),
                 "TerminateInstances", terminate)};
    };
    step.settle = [&sw] { return wait_terminated(sw.ec2, sw.ids); };
    return step;
}

// A group another group's rule names cannot be deleted (DependencyViolation): such rules go first. A rule
// naming its own group goes with it.
std::vector<SweepStep> group_steps(AwsSweep& sw) {
    SweepStep rules{.name = "security group rules", .gone = ec2_means_gone};
    rules.list = [&sw]() -> Result<std::vector<SweepItem>> {
        auto g = sw.ec2.describe(Ec2Kind::security_group, sw.tagged);
        if (!g) return g.error();
        sw.groups = *g;
        std::set<std::string> group_ids;
        for (const auto& x : sw.groups)
            group_ids.insert(x.id);
        std::vector<SweepItem> items;
        for (const auto& x : sw.groups)
            for (const auto& rule : x.group_rules)
                if (rule.group_id != x.id && group_ids.count(rule.group_id))
                    items.push_back(
                        item(sw.ec2, "the rule of " + label("security group", x) + " naming " + rule.group_id,
                             "RevokeSecurityGroupIngress", revoke_params(x.id, rule)));
        return items;
    };
    SweepStep groups{.name = "security groups", .gone = ec2_means_gone};
    groups.list = [&sw]() -> Result<std::vector<SweepItem>> {
        std::vector<SweepItem> items;
        items.reserve(sw.groups.size());
        for (const auto& g : sw.groups)
            items.push_back(
                item(sw.ec2, label("security group", g), "DeleteSecurityGroup", {{"GroupId", g.id}}));
        return items;
    };
    return {rules, groups};
}

// The internet gateway is detached from its VPC first; it is deleted only once every detach succeeded.
std::vector<SweepStep> gateway_steps(AwsSweep& sw) {
    SweepStep detach{.name = "internet gateway attachments", .gone = ec2_means_gone};
    detach.list = [&sw]() -> Result<std::vector<SweepItem>> {
        auto g = sw.ec2.describe(Ec2Kind::internet_gateway, sw.tagged);
        if (!g) return g.error();
        sw.gateways = *g;
        std::vector<SweepItem> items;
        for (const auto& gw : sw.gateways)
            for (const auto& vpc : gw.attached_vpcs)
                items.push_back(item(sw.ec2, label("internet gateway", gw) + " from " + vpc,
                                     "DetachInternetGateway",
                                     {{"InternetGatewayId", gw.id}, {"VpcId", vpc}}));
        return items;
    };
    SweepStep remove{
        .name = "internet gateways", .after = {"internet gateway attachments"}, .gone = ec2_means_gone};
    remove.list = [&sw]() -> Result<std::vector<SweepItem>> {
        std::vector<SweepItem> items;
        items.reserve(sw.gateways.size());
        for (const auto& gw : sw.gateways)
            items.push_back(item(sw.ec2, label("internet gateway", gw), "DeleteInternetGateway",
                                 {{"InternetGatewayId", gw.id}}));
        return items;
    };
    return {detach, remove};
}

// Every tagged resource of `kind` (a VPC's main route table left out: it goes with the VPC), deleted by
// `action` with its id as `param`.
SweepStep kind_step(AwsSweep& sw, const std::string& name, Ec2Kind kind, const std::string& what,
                    const std::string& action, const std::string& param) {
    SweepStep step{.name = name, .gone = ec2_means_gone};
    step.list = [&sw, kind, what, action, param]() -> Result<std::vector<SweepItem>> {
        auto objects = sw.ec2.describe(kind, sw.tagged);
        if (!objects) return objects.error();
        std::vector<SweepItem> items;
        for (const auto& o : *objects)
            if (!o.main) items.push_back(item(sw.ec2, label(what.c_str(), o), action, {{param, o.id}}));
        return items;
    };
    return step;
}

bool iam_gone(const std::string& code) {
    return code == "NoSuchEntity";
}

SweepItem iam_item(IamClient& iam, const std::string& what, const std::string& action,
                   const std::vector<std::pair<std::string, std::string>>& params) {
    return SweepItem{what, [&iam, what, action, params]() -> Result<SweepAnswer> {
                         auto r = iam.change(action, params);
                         if (!r) return r.error();
                         return SweepAnswer{r->done, r->code,
                                            what + ": IAM " + action + " answered " + r->code +
                                                (r->message.empty() ? "" : " (" + r->message + ")")};
                     }};
}

// Whether an IAM role or profile of the name the module gives is this cluster's (ddl's tags on it).
bool ours(const IamEntity& e, const std::string& cluster) {
    auto c = e.tags.find("ddl-cluster");
    auto m = e.tags.find("ddl-managed");
    return c != e.tags.end() && c->second == cluster && m != e.tags.end() && m->second == "true";
}

// The node credential's instance profile and role (terraform/iam.tf), each only when ddl's tags name the
// cluster: the role out of the profile, the profile, the role's policies, the role.
std::vector<SweepStep> iam_steps(IamClient& iam, const std::string& cluster) {
    const std::string name = cluster + "-master";
    SweepStep out_of{.name = "IAM instance profile roles", .gone = iam_gone};
    out_of.list = [&iam, name, cluster]() -> Result<std::vector<SweepItem>> {
        auto p = iam.instance_profile(name);
        if (!p) return p.error();
        std::vector<SweepItem> items;
        if (*p && ours(**p, cluster))
            for (const auto& role : (*p)->roles)
                items.push_back(iam_item(iam, "role " + role + " of IAM instance profile " + name,
                                         "RemoveRoleFromInstanceProfile",
                                         {{"InstanceProfileName", name}, {"RoleName", role}}));
        return items;
    };
    SweepStep profile{
        .name = "IAM instance profiles", .after = {"IAM instance profile roles"}, .gone = iam_gone};
    profile.list = [&iam, name, cluster]() -> Result<std::vector<SweepItem>> {
        auto p = iam.instance_profile(name);
        if (!p) return p.error();
        if (!*p || !ours(**p, cluster)) return std::vector<SweepItem>{};
        return std::vector<SweepItem>{iam_item(iam, "IAM instance profile " + name, "DeleteInstanceProfile",
                                               {{"InstanceProfileName", name}})};
    };
    SweepStep policies{.name = "IAM role policies", .gone = iam_gone};
    policies.list = [&iam, name, cluster]() -> Result<std::vector<SweepItem>> {
        auto r = iam.role(name);
        if (!r) return r.error();
        if (!*r || !ours(**r, cluster)) return std::vector<SweepItem>{};
        auto names = iam.role_policies(name);
        if (!names) return names.error();
        std::vector<SweepItem> items;
        for (const auto& p : *names)
            items.push_back(iam_item(iam, "policy " + p + " of IAM role " + name, "DeleteRolePolicy",
                                     {{"RoleName", name}, {"PolicyName", p}}));
        return items;
    };
    SweepStep role{
        .name = "IAM roles", .after = {"IAM instance profile roles", "IAM role policies"}, .gone = iam_gone};
    role.list = [&iam, name, cluster]() -> Result<std::vector<SweepItem>> {
        auto r = iam.role(name);
        if (!r) return r.error();
        if (!*r || !ours(**r, cluster)) return std::vector<SweepItem>{};
        return std::vector<SweepItem>{iam_item(iam, "IAM role " + name, "DeleteRole", {{"RoleName", name}})};
    };
    return {out_of, profile, policies, role};
}

} // namespace

// The order is the one EC2 accepts (see the top of this file); already gone: ec2_means_gone.
Status AwsTarget::destroy_found(const FoundCluster& found, ProcessRunner& /*proc*/, Progress& progress) {
    const std::string region = found.record.value("region", std::string());
    if (region.empty() || !found.record.contains("instances") || !found.record["instances"].is_array())
        return Error{"the record of " + found.cluster + " names no region or instances"};
    auto creds =
        AwsCredentials::resolve(found.record.value("profile", std::string()), region, m_deps.sources);
    if (!creds) return creds.error();
    auto transport = make_transport();
    Ec2Client ec2(*transport, *creds);
    AwsSweep sw{.ec2 = ec2, .tagged = {{"tag:ddl-managed", {"true"}}, {"tag:ddl-cluster", {found.cluster}}}};
    std::vector<SweepStep> steps{instances_step(sw, found)};
    for (auto& s : group_steps(sw))
        steps.push_back(std::move(s));
    steps.push_back(kind_step(sw, "subnets", Ec2Kind::subnet, "subnet", "DeleteSubnet", "SubnetId"));
    for (auto& s : gateway_steps(sw))
        steps.push_back(std::move(s));
    steps.push_back(kind_step(sw, "route tables", Ec2Kind::route_table, "route table", "DeleteRouteTable",
                              "RouteTableId"));
    steps.push_back(kind_step(sw, "VPCs", Ec2Kind::vpc, "VPC", "DeleteVpc", "VpcId"));
    steps.push_back(kind_step(sw, "key pairs", Ec2Kind::key_pair, "key pair", "DeleteKeyPair", "KeyPairId"));
    steps.push_back(kind_step(sw, "placement groups", Ec2Kind::placement_group, "placement group",
                              "DeletePlacementGroup", "GroupName"));
    // Only where an instance carried the node credential's profile: no IAM call (nor IAM permission) else.
    IamClient iam(*transport, *creds);
    if (found.record.contains("instance_profile"))
        for (auto& s : iam_steps(iam, found.cluster))
            steps.push_back(std::move(s));
    return run_sweep(found.cluster, steps, progress);
}

} // namespace ddl
