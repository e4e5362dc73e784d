#include "targets/aws/AwsPreflight.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <cmath>

namespace ddl {

VcpuQuota vcpu_quota_for(const std::string& instance_type) {
    // The letters before the generation digit name the family (g5 -> g, inf2 -> inf, p4d -> p).
    std::string prefix;
    for (char c : instance_type) {
        if (c < 'a' || c > 'z') break;
        prefix += c;
    }
    // Codes from docs/research/aws-research.md §4 (Service Quotas, service code ec2).
    if (prefix == "g" || prefix == "gr" || prefix == "vt") return {"G and VT", "L-DB2E81BA", "L-3819A6DF"};
    if (prefix == "p") return {"P", "L-417A185B", "L-7212CCBC"};
    if (prefix == "inf") return {"Inf", "L-1945791B", "L-B5D1601B"};
    if (prefix == "trn") return {"Trn", "L-2C3B7624", "L-5480EFD2"};
    if (prefix == "dl") return {"DL", "L-6E869C2A", "L-85EED4F7"};
    if (prefix == "f") return {"F", "L-74FC7D96", "L-88CF9481"};
    if (prefix == "x") return {"X", "L-7295265B", "L-E3A00192"};
    return {"Standard (A, C, D, H, I, M, R, T, Z)", "L-1216C47A", "L-34B43A08"};
}

namespace {

struct Group {
    std::string key; // nodes.master.flavor
    std::string type;
    int count = 0;
};

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

void check_types(const std::vector<Group>& groups, const std::vector<std::string>& offered,
                 const std::map<std::string, InstanceTypeInfo>& info, const AwsSpec& a,
                 AwsPreflightResult& out) {
    for (const auto& g : groups) {
        if (!has(offered, g.type)) {
            out.problems.push_back(g.key + ": instance type " + g.type + " is not offered in " + a.region +
                                   "; `aws ec2 describe-instance-type-offerings --region " + a.region +
                                   "` lists those that are (or choose another aws.region)");
            continue;
        }
        auto it = info.find(g.type);
        if (it == info.end()) continue;
        if (a.spot && !has(it->second.usage_classes, "spot"))
            out.problems.push_back(
                g.key + ": instance type " + g.type +
                " cannot run as a Spot Instance; set aws.spot: false or choose another type");
        if (a.placement_group && !has(it->second.placement_strategies, "cluster"))
            out.problems.push_back(
                g.key + ": instance type " + g.type +
                " cannot join a cluster placement group; set aws.placement_group: false or "
                "choose another type");
        out.notes.push_back(g.type + ": offered, " + std::to_string(it->second.vcpus) + " vCPUs, " +
                            std::to_string(it->second.gpus) + " GPUs");
    }
}

Status check_image(Ec2Client& client, const AwsSpec& a, AwsPreflightResult& out) {
    if (a.ami.empty()) {
        out.notes.push_back("image: the newest \"" + a.ami_name + "\" (looked up by Terraform)");
        return {};
    }
    auto image = client.describe_image(a.ami);
    if (!image) return image.error();
    if (!*image) {
        out.problems.push_back("aws.ami: image " + a.ami + " does not exist in " + a.region +
                               " (AMI ids differ between regions); leave aws.ami out to use the newest Deep "
                               "Learning Base AMI, or copy the image into " +
                               a.region);
        return {};
    }
    const auto& im = **image;
    if (im.state != "available")
        out.problems.push_back("aws.ami: image " + a.ami + " is " + im.state + ", not available");
    if (im.root_gb > a.root_volume_gb)
        out.problems.push_back("aws.root_volume_gb: " + std::to_string(a.root_volume_gb) +
                               " GiB is smaller than the " + std::to_string(im.root_gb) +
                               " GiB root snapshot of " + a.ami +
                               "; set root_volume_gb: " + std::to_string(im.root_gb) + " or more");
    out.notes.push_back("image " + a.ami + " (" + im.name + "): " + im.state);
    return {};
}

Status check_quotas(Ec2Client& client, const std::vector<Group>& groups,
                    const std::map<std::string, InstanceTypeInfo>& info, const AwsSpec& a,
                    AwsPreflightResult& out) {
    // vCPUs needed per quota code, in the order the groups name them.
    std::vector<std::pair<VcpuQuota, long long>> need;
    for (const auto& g : groups) {
        auto it = info.find(g.type);
        if (it == info.end()) continue;
        VcpuQuota q = vcpu_quota_for(g.type);
        auto slot = std::find_if(need.begin(), need.end(),
                                 [&](const auto& n) { return n.first.on_demand_code == q.on_demand_code; });
        if (slot == need.end()) slot = need.insert(need.end(), {q, 0});
        slot->second += static_cast<long long>(g.count) * it->second.vcpus;
    }
    const std::string market = a.spot ? "Spot" : "On-Demand";
    for (const auto& [q, vcpus] : need) {
        const std::string code = a.spot ? q.spot_code : q.on_demand_code;
        auto value = client.ec2_quota(code);
        if (!value) return value.error();
        std::string what = market + " " + q.family + " vCPUs (quota " + code + ")";
        if (!*value) {
            out.notes.push_back(what + ": no value applied to this account, not checked");
            continue;
        }
        auto limit = static_cast<long long>(std::floor(**value));
        if (vcpus > limit)
            out.problems.push_back("quota: " + std::to_string(vcpus) + " " + what +
                                   " requested, the limit in " + a.region + " is " + std::to_string(limit) +
                                   " (running instances count against it too); ask for more in the Service "
                                   "Quotas console, or choose smaller instance types or fewer workers");
        else
            out.notes.push_back(what + ": " + std::to_string(vcpus) + " needed, limit " +
                                std::to_string(limit));
    }
    return {};
}

} // namespace

Result<AwsPreflightResult> AwsPreflight::run(const Spec& spec) {
    AwsPreflightResult out;
    const auto& a = spec.target_section<AwsSpec>();
    std::vector<Group> groups{{"nodes.master.flavor", spec.master.flavor, 1}};
    if (spec.workers.count > 0)
        groups.push_back({"nodes.workers.flavor",
                          spec.workers.flavor.empty() ? spec.master.flavor : spec.workers.flavor,
                          spec.workers.count});
    std::vector<std::string> types;
    for (const auto& g : groups)
        if (!has(types, g.type)) types.push_back(g.type);

    auto offered = m_client.offered_types(types);
    if (!offered) return offered.error();
    std::vector<std::string> known;
    for (const auto& t : types)
        if (has(*offered, t)) known.push_back(t);
    std::map<std::string, InstanceTypeInfo> info;
    if (!known.empty()) {
        auto described = m_client.describe_types(known);
        if (!described) return described.error();
        info = std::move(*described);
    }
    check_types(groups, *offered, info, a, out);
    if (auto s = check_image(m_client, a, out); !s) return s.error();
    if (auto s = check_quotas(m_client, groups, info, a, out); !s) return s.error();
    return out;
}

} // namespace ddl
