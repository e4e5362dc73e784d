// `ddl gc --spec FILE` on AWS from the region's side. The module tags everything it creates
// ddl-managed=true and ddl-cluster=<name>, and the instances also ddl-state=<the state folder that deployed
// them>. So a cluster whose state folder, and with it its Terraform state, is gone is found from the
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
// a refusal (DependencyViolation) is named and the rest still tried.
#include "provision/Sweep.hpp"
#include "targets/aws/AwsTarget.hpp"
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

// launchTime ("2026-11-20T10:00:00.000Z", UTC) -> seconds since the epoch.
std::optional<std::time_t> utc_seconds(const std::string& text) {
    std::tm tm{};
    if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
    return timegm(&tm);
}

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
    std::map<std::string, FoundCluster> by_cluster;
    const std::time_t now = std::time(nullptr);
    for (const auto& i : *instances) {
        auto c = i.tags.find("ddl-cluster");
        if (c == i.tags.end() || c->second.empty() || i.id.empty()) continue;
        auto& found = by_cluster[c->second];
        const auto launched = utc_seconds(i.launch_time);
        const long long age = launched ? static_cast<long long>(now - *launched) : 0;
        found.age_s = found.record.contains("instances") ? std::min(found.age_s, age) : age;
        found.cluster = c->second;
        auto s = i.tags.find("ddl-state");
        if (found.state_dir.empty() && s != i.tags.end()) found.state_dir = s->second;
        found.record["region"] = creds->region;
        found.record["profile"] = a.profile;
        found.record["instances"].push_back(i.id);
        found.detail =
            std::to_string(found.record["instances"].size()) + " instance(s) in region " + creds->region;
    }
    std::vector<FoundCluster> out;
    out.reserve(by_cluster.size());
    for (auto& [name, f] : by_cluster)
        out.push_back(std::move(f));
    return out;
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

SweepItem item(Ec2Client& ec2, std::string what, std::string action,
               std::vector<std::pair<std::string, std::string>> params) {
    return SweepItem{what, [&ec2, what, action, params] { return sweep_answer(ec2, what, action, params); }};
}

// The live instances of the record, terminated in one call: TerminateInstances refuses the whole call
// (InvalidInstanceID.NotFound) when one of its ids no longer exists, and a filter never does.
SweepStep instances_step(Ec2Client& ec2, const FoundCluster& found, std::vector<std::string>& ids) {
    std::vector<std::string> recorded;
    for (const auto& i : found.record["instances"])
        if (i.is_string()) recorded.push_back(i.get<std::string>());
    SweepStep step{.name = "instances", .gone = ec2_means_gone, .stop_on_failure = true};
    step.list = [&ec2, &ids, recorded]() -> Result<std::vector<SweepItem>> {
        auto live =
            ec2.describe_instances({{"instance-id", recorded}, {"instance-state-name", k_live_states}});
        if (!live) return live.error();
        for (const auto& i : *live)
            ids.push_back(i.id);
        if (ids.empty()) return std::vector<SweepItem>{};
        std::vector<std::pair<std::string, std::string>> terminate;
        for (std::size_t n = 0; n < ids.size(); ++n)
            terminate.emplace_back("InstanceId." + std::to_string(n + 1), ids[n]);
        return std::vector<SweepItem>{item(ec2,
                                           std::to_string(ids.size()) + " instance(s) " + join(ids, ", "),
                                           "TerminateInstances", terminate)};
    };
    step.settle = [&ec2, &ids] { return wait_terminated(ec2, ids); };
    return step;
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
    const std::vector<Ec2Filter> tagged = {{"tag:ddl-managed", {"true"}},
                                           {"tag:ddl-cluster", {found.cluster}}};
    // Each kind's items, one per Describe* call.
    auto each = [&ec2, tagged](Ec2Kind kind,
                               const std::function<void(const Ec2Object&, std::vector<SweepItem>&)>& add) {
        return [&ec2, tagged, kind, add]() -> Result<std::vector<SweepItem>> {
            auto objects = ec2.describe(kind, tagged);
            if (!objects) return objects.error();
            std::vector<SweepItem> items;
            for (const auto& o : *objects)
                add(o, items);
            return items;
        };
    };
    std::vector<std::string> ids;
    std::vector<Ec2Object> groups, gateways;
    const auto gone = ec2_means_gone;
    std::vector<SweepStep> steps;
    steps.push_back(instances_step(ec2, found, ids));
    // A group another group's rule names cannot be deleted (DependencyViolation): such rules go first. A
    // rule naming its own group goes with it.
    steps.push_back(
        {.name = "security group rules",
         .list = [&]() -> Result<std::vector<SweepItem>> {
             auto g = ec2.describe(Ec2Kind::security_group, tagged);
             if (!g) return g.error();
             groups = *g;
             std::set<std::string> group_ids;
             for (const auto& x : groups)
                 group_ids.insert(x.id);
             std::vector<SweepItem> items;
             for (const auto& x : groups)
                 for (const auto& rule : x.group_rules)
                     if (rule.group_id != x.id && group_ids.count(rule.group_id))
                         items.push_back(item(
                             ec2, "the rule of " + label("security group", x) + " naming " + rule.group_id,
                             "RevokeSecurityGroupIngress", revoke_params(x.id, rule)));
             return items;
         },
         .gone = gone});
    steps.push_back({.name = "security groups",
                     .list = [&]() -> Result<std::vector<SweepItem>> {
                         std::vector<SweepItem> items;
                         for (const auto& g : groups)
                             items.push_back(item(ec2, label("security group", g), "DeleteSecurityGroup",
                                                  {{"GroupId", g.id}}));
                         return items;
                     },
                     .gone = gone});
    steps.push_back(
        {.name = "subnets",
         .list =
             each(Ec2Kind::subnet,
                  [&](const Ec2Object& o, auto& items) {
                      items.push_back(item(ec2, label("subnet", o), "DeleteSubnet", {{"SubnetId", o.id}}));
                  }),
         .gone = gone});
    steps.push_back({.name = "internet gateway attachments",
                     .list = [&]() -> Result<std::vector<SweepItem>> {
                         auto g = ec2.describe(Ec2Kind::internet_gateway, tagged);
                         if (!g) return g.error();
                         gateways = *g;
                         std::vector<SweepItem> items;
                         for (const auto& gw : gateways)
                             for (const auto& vpc : gw.attached_vpcs)
                                 items.push_back(item(ec2, label("internet gateway", gw) + " from " + vpc,
                                                      "DetachInternetGateway",
                                                      {{"InternetGatewayId", gw.id}, {"VpcId", vpc}}));
                         return items;
                     },
                     .gone = gone});
    steps.push_back({.name = "internet gateways",
                     .after = {"internet gateway attachments"},
                     .list = [&]() -> Result<std::vector<SweepItem>> {
                         std::vector<SweepItem> items;
                         for (const auto& gw : gateways)
                             items.push_back(item(ec2, label("internet gateway", gw), "DeleteInternetGateway",
                                                  {{"InternetGatewayId", gw.id}}));
                         return items;
                     },
                     .gone = gone});
    steps.push_back({.name = "route tables",
                     .list = each(Ec2Kind::route_table,
                                  [&](const Ec2Object& o, auto& items) {
                                      if (!o.main)
                                          items.push_back(item(ec2, label("route table", o),
                                                               "DeleteRouteTable", {{"RouteTableId", o.id}}));
                                  }),
                     .gone = gone});
    steps.push_back(
        {.name = "VPCs",
         .list = each(Ec2Kind::vpc,
                      [&](const Ec2Object& o, auto& items) {
                          items.push_back(item(ec2, label("VPC", o), "DeleteVpc", {{"VpcId", o.id}}));
                      }),
         .gone = gone});
    steps.push_back(
        {.name = "key pairs",
         .list = each(
             Ec2Kind::key_pair,
             [&](const Ec2Object& o, auto& items) {
                 items.push_back(item(ec2, label("key pair", o), "DeleteKeyPair", {{"KeyPairId", o.id}}));
             }),
         .gone = gone});
    steps.push_back({.name = "placement groups",
                     .list = each(Ec2Kind::placement_group,
                                  [&](const Ec2Object& o, auto& items) {
                                      items.push_back(item(ec2, label("placement group", o),
                                                           "DeletePlacementGroup", {{"GroupName", o.id}}));
                                  }),
                     .gone = gone});
    return run_sweep(found.cluster, steps, progress);
}

} // namespace ddl
