// `ddl gc --spec` on AWS against a scripted region that answers as the EC2 API Reference shows
// (DescribeInstances with reservationSet/instancesSet and nextToken paging, the Describe* sets of the
// network resources, <Response><Errors> refusals): which clusters are found, and the order in which a found
// cluster is removed. The HTTPS stand-in (tests/fakes/aws_api.py) answers the same calls in the e2e suite
// test_aws.
#include "spec/SpecLoader.hpp"
#include "support/Fakes.hpp"
#include "support/RequestLog.hpp"
#include "support/ScriptedAws.hpp"
#include "targets/Registry.hpp"
#include "targets/aws/AwsTarget.hpp"
#include "util/Process.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <set>

using namespace ddl;

namespace {

// The form body's %XX back to bytes (aws_form_body encodes all but RFC 3986's unreserved).
std::string decode(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

HttpResponse ok(const std::string& action, const std::string& inner) {
    return {200,
            "<?xml version=\"1.0\"?><" + action +
                "Response xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>r</requestId>" +
                inner + "</" + action + "Response>",
            {}};
}

HttpResponse refused(const std::string& code, const std::string& message) {
    return {400,
            "<Response><Errors><Error><Code>" + code + "</Code><Message>" + message +
                "</Message></Error></Errors><RequestID>r</RequestID></Response>",
            {}};
}

std::string tags(const std::map<std::string, std::string>& t) {
    std::string out = "<tagSet>";
    for (const auto& [k, v] : t)
        out += "<item><key>" + k + "</key><value>" + v + "</value></item>";
    return out + "</tagSet>";
}

std::string instance(const std::string& id, const std::string& cluster, const std::string& launched,
                     const std::string& state = "/ci/.ddl/c1", const std::string& expires = "",
                     const std::string& profile = "") {
    std::map<std::string, std::string> t{{"Name", cluster + "-" + id}};
    if (!cluster.empty()) t.insert({{"ddl-cluster", cluster}, {"ddl-managed", "true"}, {"ddl-state", state}});
    if (!expires.empty()) t["ddl-expires"] = expires;
    return "<item><reservationId>r-" + id + "</reservationId><instancesSet><item><instanceId>" + id +
           "</instanceId><instanceState><code>16</code><name>running</name></instanceState><launchTime>" +
           launched + "</launchTime>" +
           (profile.empty() ? "" : "<iamInstanceProfile><arn>" + profile + "</arn></iamInstanceProfile>") +
           tags(t) + "</item></instancesSet></item>";
}

// A region with cluster c1 (instances i-1, i-2 across two pages; its VPC, subnet, internet gateway,
// route tables, two security groups of which one names the other, key pair and placement group) and c2.
struct Region : AwsTransport {
    std::vector<std::string> log;             // "Action k=v&k=v" of every request (Version left out)
    std::map<std::string, HttpResponse> fail; // Action -> answer instead
    std::set<std::string> terminated;
    std::string terminate_after_find; // an instance EC2 terminates between gc's find and its removal
    // IAM (node_credential): role and profile c1-master, tagged with this cluster (or another).
    bool iam_role = false;
    std::string iam_cluster = "c1";

    HttpResponse iam_answer(const std::string& action) {
        const std::string ns = "<" + action + "Response xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\">";
        const std::string end =
            "<ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></" + action + "Response>";
        const std::string tagged =
            "<Tags><member><Key>ddl-cluster</Key><Value>" + iam_cluster +
            "</Value></member><member><Key>ddl-managed</Key><Value>true</Value></member>"
            "</Tags>";
        if (!iam_role)
            return {404,
                    "<ErrorResponse><Error><Type>Sender</Type><Code>NoSuchEntity</Code><Message>The role "
                    "with name c1-master cannot be found.</Message></Error><RequestId>r</RequestId>"
                    "</ErrorResponse>",
                    {}};
        if (action == "GetRole")
            return {200,
                    ns + "<GetRoleResult><Role><RoleName>c1-master</RoleName>" + tagged +
                        "</Role></GetRoleResult>" + end,
                    {}};
        if (action == "GetInstanceProfile")
            return {200,
                    ns +
                        "<GetInstanceProfileResult><InstanceProfile><InstanceProfileName>c1-master"
                        "</InstanceProfileName><Roles><member><RoleName>c1-master</RoleName></member>"
                        "</Roles>" +
                        tagged + "</InstanceProfile></GetInstanceProfileResult>" + end,
                    {}};
        if (action == "ListRolePolicies")
            return {200,
                    ns +
                        "<ListRolePoliciesResult><PolicyNames><member>c1-autostop</member></PolicyNames>"
                        "<IsTruncated>false</IsTruncated></ListRolePoliciesResult>" +
                        end,
                    {}};
        return {200, ns + end, {}};
    }

    Result<HttpResponse> post(const AwsRequest& req, const AwsCredentials&) override {
        std::map<std::string, std::string> p;
        std::vector<std::string> shown;
        for (const auto& kv : split(req.body, '&')) {
            auto eq = kv.find('=');
            std::string k = kv.substr(0, eq), v = decode(kv.substr(eq + 1));
            p[k] = v;
            if (k != "Action" && k != "Version") shown.push_back(k + "=" + v);
        }
        const std::string action = p["Action"];
        if (req.service == "iam") {
            CHECK(req.region == "us-east-1");
            CHECK(p["Version"] == "2010-05-08");
            log.push_back("IAM " + action + " " + join(shown, "&"));
            return iam_answer(action);
        }
        log.push_back(action + " " + join(shown, "&"));
        if (auto f = fail.find(action); f != fail.end()) return f->second;
        if (action == "DescribeInstances" && p.count("Filter.1.Name") &&
            p["Filter.1.Name"] == "instance-id") {
            std::string items;
            for (const auto& [k, v] : p)
                if (starts_with(k, "Filter.1.Value.") && !terminated.count(v))
                    items += instance(v, "c1", "2026-11-20T10:00:00.000Z");
            return ok(action, "<reservationSet>" + items + "</reservationSet>");
        }
        if (action == "DescribeInstances" && !p.count("NextToken"))
            return ok(action,
                      "<reservationSet>" +
                          instance("i-1", "c1", "2026-11-20T10:00:00.000Z", "/ci/.ddl/c1", "",
                                   iam_role ? "arn:aws:iam::123456789012:instance-profile/c1-master" : "") +
                          "</reservationSet><nextToken>page2</nextToken>");
        if (action == "DescribeInstances")
            return ok(action, "<reservationSet>" + instance("i-2", "c1", "2026-11-21T10:00:00.000Z") +
                                  instance("i-9", "c2", "2026-11-25T10:00:00.000Z", "/home/u/.ddl/c2",
                                           "2026-11-26T12:00:00Z") +
                                  instance("i-8", "c2", "2026-11-25T10:00:00.000Z", "/home/u/.ddl/c2",
                                           "2026-11-26T10:00:00Z") +
                                  "</reservationSet>");
        if (action == "TerminateInstances") {
            for (const auto& [k, v] : p)
                if (starts_with(k, "InstanceId.")) terminated.insert(v);
            return ok(action, "<instancesSet/>");
        }
        if (action == "DescribeSecurityGroups")
            return ok(action,
                      "<securityGroupInfo><item><groupId>sg-n</groupId><groupName>c1-nodes</groupName>"
                      "<ipPermissions><item><ipProtocol>-1</ipProtocol><groups><item><groupId>sg-n</groupId>"
                      "</item></groups></item></ipPermissions></item>"
                      "<item><groupId>sg-s</groupId><groupName>c1-ssh</groupName><ipPermissions><item>"
                      "<ipProtocol>tcp</ipProtocol><fromPort>22</fromPort><toPort>22</toPort><groups><item>"
                      "<groupId>sg-n</groupId></item></groups></item></ipPermissions></item>"
                      "</securityGroupInfo>");
        if (action == "DescribeSubnets")
            return ok(action, "<subnetSet><item><subnetId>subnet-1</subnetId>" +
                                  tags({{"Name", "c1-subnet"}}) + "</item></subnetSet>");
        if (action == "DescribeInternetGateways")
            return ok(action, "<internetGatewaySet><item><internetGatewayId>igw-1</internetGatewayId>"
                              "<attachmentSet><item><vpcId>vpc-1</vpcId><state>available</state></item>"
                              "</attachmentSet></item></internetGatewaySet>");
        if (action == "DescribeRouteTables")
            return ok(action,
                      "<routeTableSet><item><routeTableId>rtb-main</routeTableId><associationSet><item>"
                      "<main>true</main></item></associationSet></item><item><routeTableId>rtb-1"
                      "</routeTableId><associationSet><item><main>false</main><subnetId>subnet-1"
                      "</subnetId></item></associationSet></item></routeTableSet>");
        if (action == "DescribeVpcs") return ok(action, "<vpcSet><item><vpcId>vpc-1</vpcId></item></vpcSet>");
        if (action == "DescribeKeyPairs")
            return ok(action,
                      "<keySet><item><keyPairId>key-1</keyPairId><keyName>c1-key</keyName></item></keySet>");
        if (action == "DescribePlacementGroups")
            return ok(action,
                      "<placementGroupSet><item><groupName>c1-nodes</groupName></item></placementGroupSet>");
        return ok(action, "<return>true</return>");
    }

    AwsTarget target() {
        return test::scripted_aws_target(*this, [](const std::string& k) -> std::string {
            if (k == "AWS_ACCESS_KEY_ID") return "AKIDTEST";
            if (k == "AWS_SECRET_ACCESS_KEY") return "secret";
            if (k == "AWS_ENDPOINT_URL_EC2") return "https://ec2.test";
            return "";
        });
    }

    static Spec spec() {
        auto r = load_spec_string(
            "apiVersion: ddl/v1\nname: t\ntarget: aws\nnodes:\n  master: {flavor: m5.large}\n"
            "  workers: {count: 1, flavor: g5.xlarge}\naccess:\n  allowed_cidrs: "
            "[203.0.113.0/24]\naws:\n  region: us-east-1\n",
            "cluster.yaml", SpecOrigin::stored);
        INFO(r.diagnostics.format_text());
        REQUIRE(r.spec.has_value());
        return *r.spec;
    }

    std::size_t at(const std::string& line) const { return test::log_index(log, line); }

    // Cluster c1 as gc --spec finds it, then removed (the log then starts with the removal's requests).
    Status remove_c1(AwsTarget& target) {
        SystemProcessRunner proc;
        auto found = target.find_clusters(std::make_unique<Spec>(spec()).get(), proc);
        REQUIRE(found.ok());
        REQUIRE_FALSE(found->empty());
        log.clear();
        if (!terminate_after_find.empty()) terminated.insert(terminate_after_find);
        test::FakeProgress progress;
        return target.destroy_found((*found)[0], proc, progress);
    }
};

} // namespace

TEST_CASE(
    "aws clusters are found from the instances' ddl tags, across pages, with their state folder and age") {
    Region region;
    auto target = region.target();
    SystemProcessRunner proc;
    auto found = target.find_clusters(std::make_unique<Spec>(Region::spec()).get(), proc);
    REQUIRE(found.ok());
    REQUIRE(found->size() == 2);
    CHECK(region.log[0] ==
          "DescribeInstances Filter.1.Name=tag:ddl-managed&Filter.1.Value.1=true&"
          "Filter.2.Name=instance-state-name&Filter.2.Value.1=pending&Filter.2.Value.2=running&"
          "Filter.2.Value.3=shutting-down&Filter.2.Value.4=stopping&Filter.2.Value.5=stopped");
    CHECK(ends_with(region.log[1], "&NextToken=page2"));
    const FoundCluster& c1 = (*found)[0];
    CHECK(c1.cluster == "c1");
    CHECK(c1.state_dir == "/ci/.ddl/c1");
    CHECK(c1.record["region"] == "us-east-1");
    CHECK(c1.record["instances"] == nlohmann::json{"i-1", "i-2"});
    CHECK(c1.detail == "2 instance(s) in region us-east-1");
    const long long since_i2 = static_cast<long long>(std::time(nullptr)) - 1795255200; // 2026-11-21T10:00Z
    CHECK(c1.age_s == since_i2);
    CHECK(c1.expires.empty());
    CHECK((*found)[1].cluster == "c2");
    CHECK((*found)[1].state_dir == "/home/u/.ddl/c2");
    // ddl-expires: the latest of its instances' (gc --expired destroys it once every one has passed).
    CHECK((*found)[1].expires == "2026-11-26T12:00:00Z");
}

TEST_CASE("a found aws cluster is removed in the order EC2 accepts, after its instances are terminated") {
    Region region;
    auto target = region.target();
    REQUIRE(region.remove_c1(target).ok());
    const auto listed = region.at("DescribeInstances Filter.1.Name=instance-id&Filter.1.Value.1=i-1");
    const auto terminate = region.at("TerminateInstances InstanceId.1=i-1&InstanceId.2=i-2");
    REQUIRE(region.log.size() > terminate + 1);
    const auto waited = terminate + 1;
    CHECK(
        starts_with(region.log[waited], "DescribeInstances Filter.1.Name=instance-id&Filter.1.Value.1=i-1"));
    CHECK(listed < terminate);
    const auto revoke = region.at("RevokeSecurityGroupIngress GroupId=sg-s&IpPermissions.1.IpProtocol=tcp&"
                                  "IpPermissions.1.FromPort=22&IpPermissions.1.ToPort=22&"
                                  "IpPermissions.1.Groups.1.GroupId=sg-n");
    const auto sg_n = region.at("DeleteSecurityGroup GroupId=sg-n");
    const auto sg_s = region.at("DeleteSecurityGroup GroupId=sg-s");
    const auto subnet = region.at("DeleteSubnet SubnetId=subnet-1");
    const auto detach = region.at("DetachInternetGateway InternetGatewayId=igw-1&VpcId=vpc-1");
    const auto igw = region.at("DeleteInternetGateway InternetGatewayId=igw-1");
    const auto rtb = region.at("DeleteRouteTable RouteTableId=rtb-1");
    const auto vpc = region.at("DeleteVpc VpcId=vpc-1");
    const auto key = region.at("DeleteKeyPair KeyPairId=key-1");
    const auto pg = region.at("DeletePlacementGroup GroupName=c1-nodes");
    CHECK(terminate < waited);
    CHECK(waited < revoke);
    CHECK(revoke < sg_n);
    CHECK(sg_n < sg_s);
    CHECK(sg_s < subnet);
    CHECK(subnet < detach);
    CHECK(detach < igw);
    CHECK(igw < rtb);
    CHECK(rtb < vpc);
    CHECK(vpc < key);
    CHECK(key < pg);
    for (const auto& line : region.log) {
        CHECK(line.find("i-9") == std::string::npos);      // c2's instance stays
        CHECK(line.find("rtb-main") == std::string::npos); // the main route table goes with its VPC
        CHECK(line.find("RevokeSecurityGroupIngress GroupId=sg-n") == std::string::npos); // its own rule
    }
    for (const auto& f : std::vector<std::string>{"tag:ddl-managed", "tag:ddl-cluster"})
        CHECK(region.log[region.at("DescribeVpcs")].find(f) != std::string::npos);
}

TEST_CASE("what EC2 refuses is named, what is gone counts as removed, and an aws gc can run again") {
    Region region;
    region.fail["DeleteVpc"] =
        refused("DependencyViolation", "The vpc 'vpc-1' has dependencies and cannot be deleted.");
    region.fail["DeleteSubnet"] =
        refused("InvalidSubnetID.NotFound", "The subnet ID 'subnet-1' does not exist");
    auto target = region.target();
    auto st = region.remove_c1(target);
    REQUIRE_FALSE(st.ok());
    const std::string& m = st.error().message;
    CHECK(m.find("VPC vpc-1: EC2 DeleteVpc answered DependencyViolation (The vpc 'vpc-1' has dependencies") !=
          std::string::npos);
    CHECK(m.find("subnet") == std::string::npos);
    CHECK(m.find("run ddl gc again") != std::string::npos);
    region.at("DeleteKeyPair KeyPairId=key-1");
    region.at("DeletePlacementGroup GroupName=c1-nodes");
}

TEST_CASE("an aws instance terminated since it was found is not sent to TerminateInstances again") {
    Region region;
    auto target = region.target();
    region.terminate_after_find = "i-2";
    REQUIRE(region.remove_c1(target).ok());
    const auto terminate = region.at("TerminateInstances ");
    CHECK(region.log[terminate] == "TerminateInstances InstanceId.1=i-1");
}

TEST_CASE(
    "a found aws cluster's node-credential role and instance profile go last, in the order IAM accepts") {
    Region region;
    region.iam_role = true;
    auto target = region.target();
    REQUIRE(region.remove_c1(target).ok());
    const auto pg = region.at("DeletePlacementGroup GroupName=c1-nodes");
    const auto out_of =
        region.at("IAM RemoveRoleFromInstanceProfile InstanceProfileName=c1-master&RoleName=c1-master");
    const auto profile = region.at("IAM DeleteInstanceProfile InstanceProfileName=c1-master");
    const auto policy = region.at("IAM DeleteRolePolicy RoleName=c1-master&PolicyName=c1-autostop");
    const auto role = region.at("IAM DeleteRole RoleName=c1-master");
    CHECK(pg < out_of);
    CHECK(out_of < profile);
    CHECK(profile < policy);
    CHECK(policy < role);
}

TEST_CASE("an IAM role of the same name that another cluster's tags name is left alone; no profile, no IAM") {
    Region region;
    region.iam_role = true;
    region.iam_cluster = "c9";
    auto target = region.target();
    REQUIRE(region.remove_c1(target).ok());
    for (const auto& line : region.log) {
        CHECK(line.find("IAM Delete") == std::string::npos);
        CHECK(line.find("IAM Remove") == std::string::npos);
    }
    // Without the profile on an instance: no IAM call at all (a user's key may have no IAM permission).
    Region none;
    auto t2 = none.target();
    REQUIRE(none.remove_c1(t2).ok());
    for (const auto& line : none.log)
        CHECK_FALSE(starts_with(line, "IAM "));
}
