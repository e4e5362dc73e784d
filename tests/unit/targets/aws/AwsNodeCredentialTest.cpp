// autostop.node_credential on AWS (src/targets/aws/AwsNodeCredential.cpp): what the master is handed (the
// region, the EC2 endpoint, the instance ids of the module's output node_ids, AWS_CA_BUNDLE's CA; never a
// key), and when the controller reads the line the master's idle clock left in its tag ddl-autostop
// (DescribeInstances as the EC2 API Reference shows it: every instance stopped or terminated).
#include "support/Rig.hpp"
#include "support/ScriptedAws.hpp"
#include "targets/aws/AwsTarget.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <memory>

using namespace ddl;

namespace {

const char* k_spec =
    "apiVersion: ddl/v1\nname: c1\ntarget: aws\nnodes:\n  master: {flavor: m5.large}\n"
    "  workers: {count: 2, flavor: g5.xlarge}\naccess:\n  allowed_cidrs: [203.0.113.0/24]\n"
    "aws:\n  region: eu-west-1\nautostop: {idle_minutes: 30, action: stop, node_credential: true}\n";

std::string instance(const std::string& id, const std::string& role, const std::string& state,
                     const std::string& autostop = "",
                     const std::string& launched = "2026-11-27T08:00:00.000Z") {
    std::string tags = "<item><key>ddl-cluster</key><value>c1</value></item><item><key>ddl-managed</key>"
                       "<value>true</value></item><item><key>ddl-role</key><value>" +
                       role + "</value></item>";
    if (!autostop.empty()) tags += "<item><key>ddl-autostop</key><value>" + autostop + "</value></item>";
    return "<item><reservationId>r-" + id + "</reservationId><instancesSet><item><instanceId>" + id +
           "</instanceId><instanceState><name>" + state + "</name></instanceState><launchTime>" + launched +
           "</launchTime><tagSet>" + tags + "</tagSet></item></instancesSet></item>";
}

struct Rig : test::ClusterRig, AwsTransport {
    std::vector<std::string> bodies;
    std::string instances; // the reservationSet DescribeInstances answers
    std::string ca_file;

    Rig() : test::ClusterRig(k_spec) {}

    Result<HttpResponse> post(const AwsRequest& req, const AwsCredentials&) override {
        bodies.push_back(req.body);
        return HttpResponse{200,
                            "<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
                            "<reservationSet>" +
                                instances + "</reservationSet></DescribeInstancesResponse>",
                            {}};
    }

    AwsTarget target() {
        return test::scripted_aws_target(*this, [this](const std::string& k) -> std::string {
            if (k == "AWS_ACCESS_KEY_ID") return "AKIDTEST";
            if (k == "AWS_SECRET_ACCESS_KEY") return "planted-secret";
            if (k == "AWS_ENDPOINT_URL") return "https://192.0.2.2:8443/";
            if (k == "AWS_CA_BUNDLE") return ca_file;
            return "";
        });
    }
};

} // namespace

TEST_CASE(
    "aws node credential: the master gets the region, the endpoint, the instance ids and the CA, no key") {
    Rig rig;
    rig.ca_file = rig.dir.path() + "/ca.pem";
    REQUIRE(
        write_file_atomic(rig.ca_file, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", 0644)
            .ok());
    auto target = rig.target();
    auto ctx = rig.ctx();
    const nlohmann::json outputs = {{"master_public_ip", "203.0.113.9"},
                                    {"node_ids", {"i-w1", "i-w2", "i-m"}}};
    auto cred = target.node_credential(ctx, outputs);
    REQUIRE(cred.ok());
    REQUIRE(cred->has_value());
    const auto& env = (**cred)["env"];
    CHECK(env == nlohmann::json{{"DDL_CLOUD", "aws"},
                                {"AWS_REGION", "eu-west-1"},
                                {"AWS_ENDPOINT_URL_EC2", "https://192.0.2.2:8443"},
                                {"DDL_CLOUD_SERVERS", "i-w1,i-w2,i-m"}});
    CHECK(starts_with((**cred)["ca_pem"].get<std::string>(), "-----BEGIN CERTIFICATE-----"));
    CHECK((**cred).dump().find("planted-secret") == std::string::npos);
    CHECK((**cred).dump().find("AKIDTEST") == std::string::npos);

    // Without node_ids the master could not know what to end: refused, naming the fix.
    auto none = target.node_credential(ctx, nlohmann::json{{"master_public_ip", "203.0.113.9"}});
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.find("node_ids") != std::string::npos);
}

TEST_CASE("aws autostop_end reads the master's ddl-autostop only once every instance is stopped or gone") {
    Rig rig;
    rig.state.target_data["outputs"] = {{"node_ids", {"i-w1", "i-m"}}};
    auto target = rig.target();
    auto ctx = rig.ctx();
    const std::string line = "ddl-idle: autostop ends the allocation at 2026-11-27T19:00:00Z: idle since x";

    rig.instances = instance("i-w1", "worker", "stopped") + instance("i-m", "master", "stopping", line);
    auto r = target.autostop_end(ctx);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value()); // the master still stopping
    CHECK(rig.bodies.back().find("Filter.3.Name=instance-id&Filter.3.Value.1=i-w1&Filter.3.Value.2=i-m") !=
          std::string::npos);

    rig.instances = instance("i-w1", "worker", "terminated") + instance("i-m", "master", "stopped", line);
    r = target.autostop_end(ctx);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    CHECK(**r == line);

    // A line from before the master's last start (an earlier end, then `ddl start`): not this stop's.
    rig.instances = instance("i-w1", "worker", "stopped") +
                    instance("i-m", "master", "stopped", line, "2026-11-27T19:30:00.000Z");
    r = target.autostop_end(ctx);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());

    // Stopped without the tag (someone else stopped them): no line.
    rig.instances = instance("i-w1", "worker", "stopped") + instance("i-m", "master", "stopped");
    r = target.autostop_end(ctx);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());

    // Stopped by ddl itself (`ddl stop`): not the clock's end, and EC2 is not asked.
    rig.instances = instance("i-w1", "worker", "stopped") + instance("i-m", "master", "stopped", line);
    rig.state.stopped_at = "2026-11-27T19:05:00Z";
    const auto asked = rig.bodies.size();
    r = target.autostop_end(ctx);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());
    CHECK(rig.bodies.size() == asked);

    // No instance listed any more: with action stop that is no end of the clock's; with action destroy the
    // clock terminated them over an hour ago (EC2 lists terminated instances for about an hour).
    rig.state.stopped_at.clear();
    rig.instances.clear();
    r = target.autostop_end(ctx);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());
    ctx.spec.life.autostop.action = "destroy";
    r = target.autostop_end(ctx);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    CHECK((*r)->find("no instance of the cluster is left") != std::string::npos);
}
