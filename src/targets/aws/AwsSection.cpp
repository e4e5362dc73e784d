#include "targets/aws/AwsSection.hpp"

#include "targets/TerraformSection.hpp"
#include "util/Net.hpp"

#include <regex>

namespace ddl {

nlohmann::json AwsSpec::to_json() const {
    // Grouped as the keys are documented (docs/spec.md, "aws"); the object's keys come out sorted.
    nlohmann::json j = {{"region", region}, {"profile", profile}, {"availability_zone", availability_zone}};
    j.update({{"ami", ami}, {"ami_owners", ami_owners}, {"ami_name", ami_name}});
    j.update({{"vpc", vpc}, {"vpc_cidr", vpc_cidr}});
    j.update({{"spot", spot}, {"spot_max_price", spot_max_price}, {"placement_group", placement_group}});
    j.update({{"root_volume_gb", root_volume_gb}, {"root_volume_type", root_volume_type}});
    j["terraform"] = terraform;
    return j;
}

namespace {

// The patterns of the module's validation blocks (src/targets/aws/terraform/variables.tf), so that
// what Terraform would refuse at plan time is refused here, at the key.
const std::regex k_region{"^[a-z]{2}(-[a-z]+)+-[0-9]+$"};
const std::regex k_zone{"^[a-z]{2}(-[a-z]+)+-[0-9]+[a-z]$"};
const std::regex k_profile{"^[A-Za-z0-9_.@+-]*$"};
const std::regex k_ami{"^ami-([0-9a-f]{8}|[0-9a-f]{17})$"};
const std::regex k_owner{"^([0-9]{12}|amazon|aws-marketplace|self)$"};
const std::regex k_price{"^[0-9]+(\\.[0-9]+)?$"};
const std::regex k_instance_type{"^[a-z][a-z0-9-]*\\.[a-z0-9-]+$"};

bool matches(const std::string& s, const std::regex& re) {
    return std::regex_match(s, re);
}

// "aws.KEY must be WHAT (got "VALUE")" at the key's value.
void bad(SectionReader& r, const YAML::Node& n, const std::string& key, const std::string& what,
         const std::string& value, const std::string& hint) {
    std::string msg = "aws." + key;
    msg += " must be ";
    msg += what;
    msg += " (got \"";
    msg += SectionReader::printable(value);
    msg += "\")";
    r.diags().error(r.pos(n[key]), msg, hint);
}

void parse_image(SectionReader& r, const YAML::Node& n, AwsSpec& a) {
    if (auto v = r.string(n, "ami", "aws")) {
        if (!v->empty() && !matches(*v, k_ami))
            bad(r, n, "ami", "an AMI id, ami- and 8 or 17 hex digits", *v,
                "e.g. ami-0123456789abcdef0; leave it out to use the newest Deep Learning Base AMI");
        else
            a.ami = *v;
    }
    if (auto v = r.string_list(n, "ami_owners", "aws")) {
        bool ok = !v->empty();
        for (std::size_t i = 0; i < v->size(); ++i)
            if (!matches((*v)[i], k_owner)) {
                r.diags().error(
                    r.pos(n["ami_owners"][i]),
                    "aws.ami_owners[" + std::to_string(i) +
                        "] must be a 12-digit account id, amazon, aws-marketplace or self (got \"" +
                        SectionReader::printable((*v)[i]) + "\")");
                ok = false;
            }
        if (v->empty())
            r.diags().error(r.pos(n["ami_owners"]), "aws.ami_owners must list at least one owner",
                            "leave it out for [amazon]");
        if (ok) a.ami_owners = *v;
    }
    if (auto v = r.string(n, "ami_name", "aws")) {
        if (v->empty())
            r.diags().error(r.pos(n["ami_name"]), "aws.ami_name must not be empty",
                            "leave it out for the Deep Learning Base AMI's name pattern");
        else
            a.ami_name = *v;
    }
}

void parse_network(SectionReader& r, const YAML::Node& n, AwsSpec& a) {
    if (auto v = r.choice(n, "vpc", "aws", {"new", "default"})) a.vpc = *v;
    if (auto v = r.string(n, "vpc_cidr", "aws")) {
        auto c = parse_cidr(*v);
        if (!c || c->v6 || c->prefix < 16 || c->prefix > 28 || !c->host_bits_zero())
            bad(r, n, "vpc_cidr", "an IPv4 network /16-/28 without host bits", *v, "e.g. 10.42.0.0/16");
        else
            a.vpc_cidr = *v;
    }
    if (auto v = r.string(n, "availability_zone", "aws")) {
        if (!v->empty() && !matches(*v, k_zone))
            bad(r, n, "availability_zone", "a zone name", *v, "e.g. eu-west-1a, or leave it out");
        else
            a.availability_zone = *v;
    }
}

void parse_market(SectionReader& r, const YAML::Node& n, AwsSpec& a) {
    if (auto v = r.boolean(n, "spot", "aws")) a.spot = *v;
    if (auto v = r.string(n, "spot_max_price", "aws")) {
        if (!v->empty() && !matches(*v, k_price))
            bad(r, n, "spot_max_price", "a price in USD per hour", *v,
                "e.g. \"0.50\", or leave it out for the On-Demand price");
        else
            a.spot_max_price = *v;
    }
    if (auto v = r.boolean(n, "placement_group", "aws")) a.placement_group = *v;
    if (a.spot && a.placement_group)
        r.diags().error(r.pos(n["placement_group"]),
                        "aws.placement_group cannot be true together with aws.spot",
                        "Spot capacity for a whole cluster in one placement group is rarely there; set one "
                        "of them to false");
    if (!a.spot && !a.spot_max_price.empty())
        r.diags().error(r.pos(n["spot_max_price"]), "aws.spot_max_price is set but aws.spot is false",
                        "set \"spot: true\" or leave spot_max_price out");
}

// The node groups' flavor is the EC2 instance type.
class AwsKind : public TerraformKind {
public:
    AwsKind() : TerraformKind("aws") {}
    std::unique_ptr<TargetSection> defaults() const override { return std::make_unique<AwsSpec>(); }
    std::string starter_body() const override { return aws_starter_body(); }

    void check_cloud(SectionReader& r, const YAML::Node& doc, const Spec& spec) const override {
        // The security groups are named <name>-nodes and <name>-ssh; EC2 refuses group names starting "sg-".
        if (spec.name.rfind("sg-", 0) == 0)
            r.diags().error(r.pos(doc["name"]),
                            "name must not start with \"sg-\" on target aws (got \"" + spec.name + "\")",
                            "EC2 refuses security group names that start with \"sg-\"; pick another name");
        // EC2 cannot stop one-time Spot Instances (ddl stop and the module refuse it too).
        if (spec.life.autostop.action == "stop" && spec.target_section<AwsSpec>().spot &&
            doc["autostop"].IsMap() && doc["autostop"]["action"].IsDefined())
            r.diags().error(
                r.pos(doc["autostop"]["action"]),
                "autostop.action: stop is not available with aws.spot: EC2 cannot stop one-time Spot "
                "Instances",
                "use action: destroy, or spot: false");
        auto nodes = doc["nodes"];
        if (!nodes.IsDefined() || !nodes.IsMap()) return;
        for (const char* group : {"master", "workers"}) {
            const NodeGroup& g = std::string(group) == "master" ? spec.master : spec.workers;
            auto gn = nodes[group];
            if (g.flavor.empty() || !gn.IsDefined() || !gn.IsMap() || !gn["flavor"].IsDefined()) continue;
            if (!matches(g.flavor, k_instance_type))
                r.diags().error(r.pos(gn["flavor"]),
                                "nodes." + std::string(group) +
                                    ".flavor must be an EC2 instance type on target aws (got \"" +
                                    SectionReader::printable(g.flavor) + "\")",
                                "e.g. g5.xlarge or p4d.24xlarge");
        }
    }

    void parse_cloud(SectionReader& r, const YAML::Node& n, Spec& spec) const override {
        const std::string p = "aws";
        r.check_keys(n, p,
                     {"region", "profile", "ami", "ami_owners", "ami_name", "vpc", "vpc_cidr",
                      "availability_zone", "spot", "spot_max_price", "placement_group", "root_volume_gb",
                      "root_volume_type", "terraform"});
        auto& a = spec.target_section<AwsSpec>();
        if (auto v = r.string(n, "region", p, true, "the AWS region, e.g. \"region: eu-west-1\"")) {
            if (!matches(*v, k_region))
                bad(r, n, "region", "an AWS region name", *v, "e.g. eu-west-1 or us-east-1");
            else
                a.region = *v;
        }
        if (auto v = r.string(n, "profile", p)) {
            if (!matches(*v, k_profile))
                bad(r, n, "profile", "a profile name (letters, digits, _ . @ + -)", *v,
                    "the name of a [profile NAME] section of ~/.aws/config, or leave it out");
            else
                a.profile = *v;
        }
        parse_image(r, n, a);
        parse_network(r, n, a);
        parse_market(r, n, a);
        if (auto v = r.integer(n, "root_volume_gb", p, 8, 16384)) a.root_volume_gb = static_cast<int>(*v);
        if (auto v = r.choice(n, "root_volume_type", p, {"gp3", "gp2"})) a.root_volume_type = *v;
    }
};

} // namespace

const TargetKind& aws_kind() {
    static const AwsKind kind;
    return kind;
}

} // namespace ddl
