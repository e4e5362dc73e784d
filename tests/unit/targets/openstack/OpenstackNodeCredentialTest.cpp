// The node credential on OpenStack (autostop.node_credential): what the master gets from the module's
// outputs and clouds.yaml, and what the controller reads back from Nova once the idle clock has ended the
// cluster, against a scripted cloud answering as the api-ref shows ("Show Server Details": status, metadata,
// 404 once deleted). The HTTPS stand-in answers the same calls in the e2e suite test_openstack.
#include "spec/SpecLoader.hpp"
#include "state/StateStore.hpp"
#include "support/CloudsYaml.hpp"
#include "support/Fakes.hpp"
#include "support/ScriptedHttp.hpp"
#include "targets/Registry.hpp"
#include "targets/openstack/OpenstackTarget.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

const std::string k_nova = "https://cloud.test/compute/v2.1";
const std::string k_line = "ddl-idle: autostop ends the allocation at 2026-11-27T12:00:00Z: idle since "
                           "2026-11-27T10:00:00Z, past autostop.idle_minutes 60";

// node_credential is the protected hook TerraformTarget calls after an apply.
struct Target : OpenstackTarget {
    using OpenstackTarget::node_credential;
    using OpenstackTarget::OpenstackTarget;
};

struct Cloud {
    std::map<std::string, nlohmann::json> servers; // id -> {"status", "metadata"}; absent: 404
    std::vector<std::string> log;
    TempDir dir;
    bool with_cacert = true;

    Target target() {
        REQUIRE(write_file_atomic(dir.path() + "/ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n", 0644).ok());
        const auto src = test::clouds_yaml_sources(
            dir.path(), "clouds:\n  hunren:\n    region_name: R1\n    interface: internal\n" +
                            std::string(with_cacert ? "    cacert: " + dir.path() + "/ca.pem\n" : "") +
                            "    auth:\n      auth_url: https://cloud.test/identity/v3\n"
                            "      username: u\n      password: pw\n      project_name: ml\n"
                            "      user_domain_name: Default\n");
        auto answer = [this](const HttpRequest& r) -> Result<HttpResponse> {
            HttpResponse out;
            if (r.method == "POST" && ends_with(r.url, "/v3/auth/tokens")) {
                out.status = 201;
                out.headers["x-subject-token"] = "tok";
                nlohmann::json catalog = {
                    {{"type", "compute"},
                     {"endpoints", {{{"interface", "internal"}, {"region", "R1"}, {"url", k_nova}}}}},
                    {{"type", "network"},
                     {"endpoints",
                      {{{"interface", "internal"},
                        {"region", "R1"},
                        {"url", "https://cloud.test/network"}}}}}};
                out.body =
                    nlohmann::json{{"token", {{"project", {{"id", "p1"}}}, {"catalog", catalog}}}}.dump();
                return out;
            }
            log.push_back(r.method + " " + r.url);
            const std::string id = r.url.substr(r.url.rfind('/') + 1);
            auto it = servers.find(id);
            if (r.method != "GET" || it == servers.end()) {
                out.status = 404;
                out.body = R"({"itemNotFound": {"code": 404, "message": "Instance could not be found."}})";
                return out;
            }
            out.status = 200;
            nlohmann::json server = it->second;
            server["id"] = id;
            out.body = nlohmann::json{{"server", server}}.dump();
            return out;
        };
        return Target(
            OpenstackTarget::Deps{[answer] { return std::make_unique<test::ScriptedHttp>(answer); }, src});
    }

    Spec spec(bool opted, const std::string& action = "stop") {
        auto r = load_spec_file(std::string(DDL_SOURCE_DIR) + "/configs/openstack-horovod-reference.yaml");
        REQUIRE(r.spec);
        Spec s = *r.spec;
        s.life.autostop.idle_minutes = 60;
        s.life.autostop.action = action;
        s.life.autostop.node_credential = opted;
        return s;
    }
};

const nlohmann::json k_outputs = {{"node_credential", {{"id", "ac-1"}, {"secret", "planted-NodeSecret-1"}}},
                                  {"server_ids", {"w1", "w2", "m1"}}};

struct Rig {
    TempDir dir;
    StateStore store{dir.path()};
    ClusterState st;
    SystemProcessRunner proc;
    test::FakeRemote remote;
    test::FakeProgress progress;
};

} // namespace

TEST_CASE("the master's credential: the application credential, the cloud's settings and the servers, "
          "master last") {
    Cloud cloud;
    auto target = cloud.target();
    Rig rig;
    Context ctx{cloud.spec(true), rig.st, rig.store, rig.proc, rig.remote, rig.progress, {}, nullptr};
    auto cred = target.node_credential(ctx, k_outputs);
    REQUIRE(cred.ok());
    REQUIRE(cred->has_value());
    const auto& env = (**cred)["env"];
    CHECK(env["DDL_CLOUD"] == "openstack");
    CHECK(env["OS_AUTH_URL"] == "https://cloud.test/identity/v3");
    CHECK(env["OS_APPLICATION_CREDENTIAL_ID"] == "ac-1");
    CHECK(env["OS_APPLICATION_CREDENTIAL_SECRET"] == "planted-NodeSecret-1");
    CHECK(env["OS_REGION_NAME"] == "R1");
    CHECK(env["OS_INTERFACE"] == "internal");
    CHECK(env["DDL_CLOUD_SERVERS"] == "w1,w2,m1");
    CHECK_FALSE(env.contains("OS_PASSWORD"));
    CHECK(env.dump().find("pw") == std::string::npos); // the user's own password stays on the controller
    CHECK((**cred)["ca_pem"] == "-----BEGIN CERTIFICATE-----\nMIIB\n");
    CHECK(cloud.log.empty()); // nothing asked of the cloud

    SECTION("without cacert in clouds.yaml the master verifies with its system CAs") {
        Cloud plain;
        plain.with_cacert = false;
        auto t = plain.target();
        Context c{plain.spec(true), rig.st, rig.store, rig.proc, rig.remote, rig.progress, {}, nullptr};
        auto r = t.node_credential(c, k_outputs);
        REQUIRE(r.ok());
        CHECK((**r)["ca_pem"] == "");
    }
    SECTION("a module without the credential's outputs is named with the way out") {
        auto r = target.node_credential(ctx, nlohmann::json{{"server_ids", {"m1"}}});
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message.find("output node_credential") != std::string::npos);
        auto r2 = target.node_credential(
            ctx, nlohmann::json{{"node_credential", {{"id", "a"}, {"secret", "planted-Secret-2"}}}});
        REQUIRE_FALSE(r2.ok());
        CHECK(r2.error().message.find("server_ids") != std::string::npos);
        CHECK(r2.error().message.find("planted-Secret-2") == std::string::npos);
    }
    SECTION("without the opt-in there is none") {
        Context off{cloud.spec(false), rig.st, rig.store, rig.proc, rig.remote, rig.progress, {}, nullptr};
        auto r = target.node_credential(off, k_outputs);
        REQUIRE(r.ok());
        CHECK_FALSE(r->has_value());
    }
}

TEST_CASE("after the idle clock: the master's ddl_autostop once every server is SHUTOFF or gone") {
    Cloud cloud;
    auto target = cloud.target();
    Rig rig;
    rig.st.target_data["outputs"] = {{"server_ids", {"w1", "m1"}}};
    Context ctx{cloud.spec(true), rig.st, rig.store, rig.proc, rig.remote, rig.progress, {}, nullptr};
    cloud.servers["w1"] = {{"status", "SHUTOFF"}, {"metadata", nlohmann::json::object()}};
    cloud.servers["m1"] = {{"status", "ACTIVE"}, {"metadata", nlohmann::json::object()}};

    auto running = target.autostop_end(ctx);
    REQUIRE(running.ok());
    CHECK_FALSE(running->has_value()); // the master still runs

    cloud.servers["m1"] = {{"status", "SHUTOFF"}, {"metadata", {{"ddl_cluster", "c"}}}};
    auto by_hand = target.autostop_end(ctx);
    REQUIRE(by_hand.ok());
    CHECK_FALSE(by_hand->has_value()); // stopped without the clock's record: `ddl stop`, or someone else

    cloud.servers["m1"]["metadata"]["ddl_autostop"] = k_line;
    auto ended = target.autostop_end(ctx);
    REQUIRE(ended.ok());
    REQUIRE(ended->has_value());
    CHECK(**ended == k_line);
    CHECK(cloud.log ==
          std::vector<std::string>{"GET " + k_nova + "/servers/w1", "GET " + k_nova + "/servers/m1",
                                   "GET " + k_nova + "/servers/w1", "GET " + k_nova + "/servers/m1",
                                   "GET " + k_nova + "/servers/w1", "GET " + k_nova + "/servers/m1"});

    SECTION("destroy: every server gone, the master's record with it") {
        Context d{
            cloud.spec(true, "destroy"), rig.st, rig.store, rig.proc, rig.remote, rig.progress, {}, nullptr};
        cloud.servers.clear();
        auto gone = target.autostop_end(d);
        REQUIRE(gone.ok());
        REQUIRE(gone->has_value());
        CHECK(starts_with(**gone,
                          "ddl-idle: autostop ends the allocation: every server of the cluster is gone"));
    }
    SECTION("without the opt-in the cloud is not asked") {
        Context off{cloud.spec(false), rig.st, rig.store, rig.proc, rig.remote, rig.progress, {}, nullptr};
        cloud.log.clear();
        auto r = target.autostop_end(off);
        REQUIRE(r.ok());
        CHECK_FALSE(r->has_value());
        CHECK(cloud.log.empty());
    }
}
