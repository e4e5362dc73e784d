// The AWS pre-flight against a scripted transport: every problem at once, each naming its key and fix;
// API errors surface AWS's Code and Message. The real signing (libcurl's SigV4) is exercised against
// tests/fakes/aws_api.py by tests/e2e/test_aws.sh.
#include "targets/aws/AwsPreflight.hpp"

#include "support/ScriptedHttp.hpp"
#include "targets/Registry.hpp"
#include "targets/aws/AwsTarget.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

// Answers by EC2 Action (or Service Quotas code), records every body.
struct ScriptedAws : AwsTransport {
    std::map<std::string, HttpResponse> answers; // "DescribeImages", "quota:L-DB2E81BA"
    std::vector<AwsRequest> sent;
    Result<HttpResponse> post(const AwsRequest& req, const AwsCredentials&) override {
        sent.push_back(req);
        std::string key;
        if (req.service == "servicequotas") {
            auto j = nlohmann::json::parse(req.body);
            key = "quota:" + j["QuotaCode"].get<std::string>();
        } else {
            auto a = req.body.find("Action=") + 7;
            key = req.body.substr(a, req.body.find('&', a) - a);
        }
        auto it = answers.find(key);
        if (it == answers.end())
            return HttpResponse{500,
                                "<Response><Errors><Error><Code>Unscripted</Code>"
                                "<Message>" +
                                    key + "</Message></Error></Errors></Response>",
                                {}};
        return it->second;
    }
};

HttpResponse ok(const std::string& action, const std::string& inner) {
    return {200,
            "<?xml version=\"1.0\"?><" + action +
                "Response xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
                "<requestId>r</requestId>" +
                inner + "</" + action + "Response>",
            {}};
}

HttpResponse quota(double v) {
    return {200, nlohmann::json{{"Quota", {{"Value", v}}}}.dump(), {}};
}

std::string type_item(const std::string& name, int vcpus, bool spot) {
    return "<item><instanceType>" + name + "</instanceType><supportedUsageClasses><item>on-demand</item>" +
           (spot ? "<item>spot</item>" : "") + "</supportedUsageClasses><vCpuInfo><defaultVCpus>" +
           std::to_string(vcpus) +
           "</defaultVCpus></vCpuInfo><gpuInfo><gpus><item><count>1</count></item></gpus></gpuInfo>"
           "<placementGroupInfo><supportedStrategies><item>cluster</item></supportedStrategies>"
           "</placementGroupInfo></item>";
}

Spec spec(const std::string& aws_extra, int workers = 3, const std::string& worker_type = "g5.xlarge") {
    std::string yaml =
        "apiVersion: ddl/v1\nname: t\ntarget: aws\nnodes:\n  master: {flavor: m5.large, gpus: 0}\n"
        "  workers: {count: " +
        std::to_string(workers) + ", flavor: " + worker_type +
        ", gpus: 1}\naccess:\n  allowed_cidrs: [203.0.113.0/24]\naws:\n  region: us-east-1\n" + aws_extra;
    auto r = load_spec_string(yaml, "cluster.yaml", SpecOrigin::stored);
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}

AwsCredentials creds() {
    AwsCredentials c;
    c.access_key_id = "AKIDTEST";
    c.secret_access_key = "secret";
    c.region = "us-east-1";
    c.ec2_endpoint = "https://ec2.test";
    c.quotas_endpoint = "https://sq.test";
    return c;
}

} // namespace

TEST_CASE("instance families map to their vCPU quota codes") {
    CHECK(vcpu_quota_for("g5.xlarge").on_demand_code == "L-DB2E81BA");
    CHECK(vcpu_quota_for("g5.xlarge").spot_code == "L-3819A6DF");
    CHECK(vcpu_quota_for("p4d.24xlarge").on_demand_code == "L-417A185B");
    CHECK(vcpu_quota_for("inf2.xlarge").family == "Inf");
    CHECK(vcpu_quota_for("m5.large").on_demand_code == "L-1216C47A");
    CHECK(vcpu_quota_for("vt1.3xlarge").family == "G and VT");
}

TEST_CASE("pre-flight passes when the types are offered and the quotas cover the vCPUs") {
    ScriptedAws aws;
    aws.answers["DescribeInstanceTypeOfferings"] =
        ok("DescribeInstanceTypeOfferings",
           "<instanceTypeOfferingSet><item><instanceType>m5.large</instanceType></item>"
           "<item><instanceType>g5.xlarge</instanceType></item></instanceTypeOfferingSet>");
    aws.answers["DescribeInstanceTypes"] =
        ok("DescribeInstanceTypes", "<instanceTypeSet>" + type_item("m5.large", 2, true) +
                                        type_item("g5.xlarge", 4, true) + "</instanceTypeSet>");
    aws.answers["quota:L-1216C47A"] = quota(32);
    aws.answers["quota:L-DB2E81BA"] = quota(12);
    Ec2Client client(aws, creds());
    auto r = AwsPreflight(client).run(spec(""));
    REQUIRE(r.ok());
    CHECK(r->problems.empty());
    CHECK(aws.sent[0].body == "Action=DescribeInstanceTypeOfferings&Version=2016-11-15&LocationType=region&"
                              "Filter.1.Name=instance-type&"
                              "Filter.1.Value.1=m5.large&Filter.1.Value.2=g5.xlarge");
    CHECK(aws.sent[0].url == "https://ec2.test");
    CHECK(aws.sent.back().headers[1] == "X-Amz-Target: ServiceQuotasV20190624.GetServiceQuota");
}

TEST_CASE("pre-flight reports a type not offered, a missing AMI and a quota too small, all at once") {
    ScriptedAws aws;
    aws.answers["DescribeInstanceTypeOfferings"] =
        ok("DescribeInstanceTypeOfferings", "<instanceTypeOfferingSet><item><instanceType>g5.xlarge</"
                                            "instanceType></item></instanceTypeOfferingSet>");
    aws.answers["DescribeInstanceTypes"] =
        ok("DescribeInstanceTypes",
           "<instanceTypeSet>" + type_item("g5.xlarge", 4, true) + "</instanceTypeSet>");
    aws.answers["DescribeImages"] = {
        400,
        "<Response><Errors><Error><Code>InvalidAMIID.NotFound</Code><Message>The image "
        "id '[ami-0fedcba9876543210]' does not exist</Message></Error></Errors></Response>",
        {}};
    aws.answers["quota:L-DB2E81BA"] = quota(8);
    Ec2Client client(aws, creds());
    auto r = AwsPreflight(client).run(spec("  ami: ami-0fedcba9876543210\n"));
    REQUIRE(r.ok());
    REQUIRE(r->problems.size() == 3);
    CHECK(r->problems[0] ==
          "nodes.master.flavor: instance type m5.large is not offered in us-east-1; `aws ec2 "
          "describe-instance-type-offerings --region us-east-1` lists those that are (or choose "
          "another aws.region)");
    CHECK(r->problems[1].find("aws.ami: image ami-0fedcba9876543210 does not exist in us-east-1") == 0);
    CHECK(r->problems[2].find("quota: 12 On-Demand G and VT vCPUs (quota L-DB2E81BA) requested, the limit in "
                              "us-east-1 is 8") == 0);
}

TEST_CASE("Spot uses the Spot quota, and a quota never applied is noted, not failed") {
    ScriptedAws aws;
    aws.answers["DescribeInstanceTypeOfferings"] =
        ok("DescribeInstanceTypeOfferings",
           "<instanceTypeOfferingSet><item><instanceType>m5.large</instanceType></item>"
           "<item><instanceType>g5.xlarge</instanceType></item></instanceTypeOfferingSet>");
    aws.answers["DescribeInstanceTypes"] =
        ok("DescribeInstanceTypes", "<instanceTypeSet>" + type_item("m5.large", 2, false) +
                                        type_item("g5.xlarge", 4, true) + "</instanceTypeSet>");
    aws.answers["quota:L-34B43A08"] = {400, R"({"__type":"NoSuchResourceException","message":""})", {}};
    aws.answers["quota:L-3819A6DF"] = quota(64);
    Ec2Client client(aws, creds());
    auto r = AwsPreflight(client).run(spec("  spot: true\n"));
    REQUIRE(r.ok());
    REQUIRE(r->problems.size() == 1);
    CHECK(r->problems[0] == "nodes.master.flavor: instance type m5.large cannot run as a Spot Instance; set "
                            "aws.spot: false or choose another type");
    bool noted = false;
    for (const auto& n : r->notes)
        noted = noted || n.find("L-34B43A08): no value applied") != std::string::npos;
    CHECK(noted);
}

TEST_CASE("an API refusal stops the pre-flight with AWS's code and message and the fix") {
    ScriptedAws aws;
    aws.answers["DescribeInstanceTypeOfferings"] = {
        401,
        "<Response><Errors><Error><Code>AuthFailure</Code><Message>AWS was not able to validate the provided "
        "access credentials</Message></Error></Errors><RequestID>x</RequestID></Response>",
        {}};
    Ec2Client client(aws, creds());
    auto r = AwsPreflight(client).run(spec(""));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "EC2 DescribeInstanceTypeOfferings failed: AuthFailure: AWS was not able to validate the provided "
          "access "
          "credentials (HTTP 401); check the access key and secret (AWS_ACCESS_KEY_ID, aws.profile, "
          "~/.aws/credentials)");
}

TEST_CASE(
    "an EC2 call goes through the HttpClient as one POST that libcurl signs for the region and service") {
    std::vector<HttpRequest> sent;
    HttpAwsTransport transport(std::make_unique<test::ScriptedHttp>([&](const HttpRequest& r) {
                                   sent.push_back(r);
                                   return Result<HttpResponse>(HttpResponse{200, "<x/>", {}});
                               }),
                               std::chrono::seconds(7));
    auto c = creds();
    c.session_token = "TOKEN";
    c.ca_bundle = "/etc/ca.pem";
    Ec2Client client(transport, c);
    REQUIRE(client.change("DeleteVpc", {{"VpcId", "vpc-1"}}).ok());
    REQUIRE(sent.size() == 1);
    const HttpRequest& r = sent[0];
    CHECK(r.method == "POST");
    CHECK(r.url == "https://ec2.test/");
    CHECK(r.body == "Action=DeleteVpc&Version=2016-11-15&VpcId=vpc-1");
    CHECK(r.headers == std::vector<std::string>{"X-Amz-Security-Token: TOKEN"});
    CHECK(r.default_content_type.empty());
    CHECK(r.aws_sigv4 == "aws:amz:us-east-1:ec2");
    CHECK(r.aws_access_key_id == "AKIDTEST");
    CHECK(r.aws_secret_access_key == "secret");
    CHECK(r.ca_file == "/etc/ca.pem");
    CHECK(r.timeout == std::chrono::seconds(7));
    // Without a session token no token header goes out.
    c.session_token.clear();
    auto plain = HttpAwsTransport::signed_request(
        {"https://sq.test", "servicequotas", {"Content-Type: x"}, "{}"}, c, std::chrono::seconds(1));
    CHECK(plain.headers == std::vector<std::string>{"Content-Type: x"});
    CHECK(plain.aws_sigv4 == "aws:amz:us-east-1:servicequotas");
}
