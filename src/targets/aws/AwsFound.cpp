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

Result<std::vector<FoundCluster>> AwsTarget::find_clusters_with(const Spec& spec, ProcessRunner& proc) const {
    (void)proc;
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

Status AwsTarget::destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) {
    (void)proc;
    const std::string region = found.record.value("region", std::string());
    if (region.empty() || !found.record.contains("instances") || !found.record["instances"].is_array())
        return Error{"the record of " + found.cluster + " names no region or instances"};
    auto creds =
        AwsCredentials::resolve(found.record.value("profile", std::string()), region, m_deps.sources);
    if (!creds) return creds.error();
    auto transport = make_transport();
    Ec2Client ec2(*transport, *creds);
    std::vector<std::string> failed;
    // One change; true when done or already gone.
    auto apply = [&](const std::string& what, const std::string& action,
                     const std::vector<std::pair<std::string, std::string>>& params) {
        auto r = ec2.change(action, params);
        if (!r) {
            failed.push_back(what + ": " + r.error().message);
            return false;
        }
        if (r->gone) return true;
        if (!r->done) {
            failed.push_back(what + ": EC2 " + action + " answered " + r->code +
                             (r->message.empty() ? "" : " (" + r->message + ")"));
            return false;
        }
        progress.note("removed " + what + " of cluster " + found.cluster);
        return true;
    };
    const std::vector<Ec2Filter> tagged = {{"tag:ddl-managed", {"true"}},
                                           {"tag:ddl-cluster", {found.cluster}}};
    auto list = [&](Ec2Kind kind) {
        auto items = ec2.describe(kind, tagged);
        if (!items) {
            failed.push_back(items.error().message);
            return std::vector<Ec2Object>{};
        }
        return *items;
    };

    std::vector<std::string> recorded;
    for (const auto& i : found.record["instances"])
        if (i.is_string()) recorded.push_back(i.get<std::string>());
    // Only those not yet terminated: TerminateInstances refuses the whole call (InvalidInstanceID.NotFound)
    // when one of its ids no longer exists, and a filter never does.
    auto live = ec2.describe_instances({{"instance-id", recorded}, {"instance-state-name", k_live_states}});
    if (!live) return live.error();
    std::vector<std::string> ids;
    for (const auto& i : *live)
        ids.push_back(i.id);
    std::vector<std::pair<std::string, std::string>> terminate;
    for (std::size_t n = 0; n < ids.size(); ++n)
        terminate.emplace_back("InstanceId." + std::to_string(n + 1), ids[n]);
    if (!ids.empty() && !apply(std::to_string(ids.size()) + " instance(s) " + join(ids, ", "),
                               "TerminateInstances", terminate))
        return Error{join(failed, "; ")};
    if (auto st = wait_terminated(ec2, ids); !st) return st;

    const auto groups = list(Ec2Kind::security_group);
    std::set<std::string> group_ids;
    for (const auto& g : groups)
        group_ids.insert(g.id);
    // A group another group's rule names cannot be deleted (DependencyViolation): such rules go first. A
    // rule naming its own group goes with it.
    for (const auto& g : groups)
        for (const auto& rule : g.group_rules) {
            if (rule.group_id == g.id || !group_ids.count(rule.group_id)) continue;
            apply("the rule of " + label("security group", g) + " naming " + rule.group_id,
                  "RevokeSecurityGroupIngress", revoke_params(g.id, rule));
        }
    for (const auto& g : groups)
        apply(label("security group", g), "DeleteSecurityGroup", {{"GroupId", g.id}});
    for (const auto& s : list(Ec2Kind::subnet))
        apply(label("subnet", s), "DeleteSubnet", {{"SubnetId", s.id}});
    for (const auto& gw : list(Ec2Kind::internet_gateway)) {
        bool detached = true;
        for (const auto& vpc : gw.attached_vpcs)
            detached = apply(label("internet gateway", gw) + " from " + vpc, "DetachInternetGateway",
                             {{"InternetGatewayId", gw.id}, {"VpcId", vpc}}) &&
                       detached;
        if (detached)
            apply(label("internet gateway", gw), "DeleteInternetGateway", {{"InternetGatewayId", gw.id}});
    }
    for (const auto& rt : list(Ec2Kind::route_table))
        if (!rt.main) apply(label("route table", rt), "DeleteRouteTable", {{"RouteTableId", rt.id}});
    for (const auto& vpc : list(Ec2Kind::vpc))
        apply(label("VPC", vpc), "DeleteVpc", {{"VpcId", vpc.id}});
    for (const auto& key : list(Ec2Kind::key_pair))
        apply(label("key pair", key), "DeleteKeyPair", {{"KeyPairId", key.id}});
    for (const auto& pg : list(Ec2Kind::placement_group))
        apply(label("placement group", pg), "DeletePlacementGroup", {{"GroupName", pg.id}});
    if (!failed.empty()) return Error{join(failed, "; ") + "; run ddl gc again to retry what is left"};
    return {};
}

} // namespace ddl
