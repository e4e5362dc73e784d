// `ddl gc --spec` on OpenStack against a scripted cloud that answers as the api-ref shows (Keystone token
// with a catalog, Nova's servers with servers_links paging, Neutron's tag filter): which clusters are found,
// and the order in which a found cluster is removed. The HTTPS stand-in (tests/fakes/openstack_api.py)
// answers the same calls in the e2e suite test_openstack.
#include "spec/SpecLoader.hpp"
#include "support/CloudsYaml.hpp"
#include "support/Fakes.hpp"
#include "support/RequestLog.hpp"
#include "support/ScriptedHttp.hpp"
#include "targets/Registry.hpp"
#include "targets/openstack/OpenstackTarget.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <set>

using namespace ddl;

namespace {

const std::string k_nova = "https://cloud.test/compute/v2.1";
const std::string k_net = "https://cloud.test/network/v2.0";

nlohmann::json server(const std::string& id, const std::string& cluster, const std::string& created,
                      const std::string& state = "/ci/.ddl/c1", const std::string& expires = "") {
    nlohmann::json meta = nlohmann::json::object();
    if (!cluster.empty()) meta = {{"ddl_cluster", cluster}, {"ddl_role", "worker"}, {"ddl_state", state}};
    if (!expires.empty()) meta["ddl_expires"] = expires;
    return {{"id", id},
            {"name", cluster + "-" + id},
            {"status", "ACTIVE"},
            {"created", created},
            {"metadata", meta}};
}

// A cloud with cluster c1 (servers s1, s2; its network, subnet, router with an interface, ports, a
// floating IP, a security group, key pair and server group) and one server that is not ddl's.
struct Cloud {
    std::vector<std::string> log;      // "METHOD url" of every request after authentication
    std::set<std::string> gone;        // ids deleted
    std::map<std::string, int> refuse; // DELETE url -> status to answer instead
    TempDir dir;

    test::ScriptedHttp::Answer answer() {
        return [this](const HttpRequest& r) -> Result<HttpResponse> {
            HttpResponse out;
            if (r.method == "POST" && ends_with(r.url, "/v3/auth/tokens")) {
                out.status = 201;
                out.headers["x-subject-token"] = "tok";
                nlohmann::json catalog = {
                    {{"type", "compute"},
                     {"endpoints", {{{"interface", "public"}, {"region", "R1"}, {"url", k_nova}}}}},
                    {{"type", "network"},
                     {"endpoints",
                      {{{"interface", "public"}, {"region", "R1"}, {"url", "https://cloud.test/network"}}}}}};
                out.body =
                    nlohmann::json{{"token", {{"project", {{"id", "p1"}}}, {"catalog", catalog}}}}.dump();
                return out;
            }
            log.push_back(r.method + " " + r.url + (r.body.empty() ? "" : " " + r.body));
            out.status = 200;
            nlohmann::json body;
            const std::string tags = "?tags=ddl,ddl-cluster%3Dc1";
            if (r.method == "GET" && r.url == k_nova + "/servers/detail") {
                body = {
                    {"servers",
                     {server("s1", "c1", "2026-11-20T10:00:00Z"), server("x9", "", "2026-11-01T00:00:00Z")}},
                    {"servers_links", {{{"rel", "next"}, {"href", k_nova + "/servers/detail?marker=x9"}}}}};
            } else if (r.method == "GET" && r.url == k_nova + "/servers/detail?marker=x9") {
                body = {
                    {"servers",
                     {server("s2", "c1", "2026-11-21T10:00:00Z"),
                      server("t1", "c2", "2026-11-25T10:00:00Z", "/home/u/.ddl/c2", "2026-11-26T10:00:00Z"),
                      server("t2", "c2", "2026-11-25T10:00:00Z", "/home/u/.ddl/c2",
                             "2026-11-26T12:00:00Z")}}};
            } else if (r.method == "GET" && starts_with(r.url, k_nova + "/servers/")) {
                const std::string id = r.url.substr(r.url.rfind('/') + 1);
                out.status = gone.count(id) ? 404 : 200;
                body = {{"server", {{"id", id}}}};
            } else if (r.method == "GET" && r.url == k_net + "/floatingips" + tags) {
                body = {{"floatingips", {{{"id", "f1"}, {"floating_ip_address", "203.0.113.5"}}}}};
            } else if (r.method == "GET" && r.url == k_net + "/ports" + tags) {
                body = {{"ports",
                         {{{"id", "p1"}, {"name", "c1-master"}, {"device_owner", "compute:nova"}},
                          {{"id", "p2"}, {"name", ""}, {"device_owner", "network:router_interface"}}}}};
            } else if (r.method == "GET" && r.url == k_net + "/subnets" + tags) {
                body = {{"subnets", {{{"id", "sn1"}, {"name", "c1-subnet"}}}}};
            } else if (r.method == "GET" && r.url == k_net + "/routers" + tags) {
                body = {{"routers", {{{"id", "r1"}, {"name", "c1-router"}}}}};
            } else if (r.method == "GET" && r.url == k_net + "/networks" + tags) {
                body = {{"networks", {{{"id", "n1"}, {"name", "c1-net"}}}}};
            } else if (r.method == "GET" && r.url == k_net + "/security-groups" + tags) {
                body = {{"security_groups", {{{"id", "g1"}, {"name", "c1-nodes"}}}}};
            } else if (r.method == "GET" && r.url == k_nova + "/os-server-groups") {
                body = {{"server_groups",
                         {{{"id", "sg1"}, {"name", "c1-nodes"}}, {{"id", "sg9"}, {"name", "other"}}}}};
            } else if (r.method == "DELETE" || r.method == "PUT") {
                auto it = refuse.find(r.url);
                out.status = it != refuse.end() ? it->second : (r.method == "PUT" ? 200 : 204);
                if (it != refuse.end())
                    body = {{"NeutronError",
                             {{"type", "NetworkInUse"},
                              {"message", "Unable to complete operation on network n1."}}}};
                else if (r.method == "DELETE")
                    gone.insert(r.url.substr(r.url.rfind('/') + 1));
            } else {
                out.status = 404;
                body = {{"itemNotFound", {{"code", 404}, {"message", "not scripted: " + r.url}}}};
            }
            out.body = body.is_null() ? "" : body.dump();
            return out;
        };
    }

    OpenstackTarget target() {
        const auto src = test::clouds_yaml_sources(
            dir.path(), "clouds:\n  hunren:\n    region_name: R1\n    auth:\n      auth_url: "
                        "https://cloud.test/identity/v3\n      username: u\n      password: pw\n"
                        "      project_name: ml\n      user_domain_name: Default\n");
        return OpenstackTarget(
            OpenstackTarget::Deps{[this] { return std::make_unique<test::ScriptedHttp>(answer()); }, src});
    }

    // The reference config's cloud (hunren) is the clouds.yaml entry written above.
    Spec spec() {
        auto r = load_spec_file(std::string(DDL_SOURCE_DIR) + "/configs/openstack-horovod-reference.yaml");
        REQUIRE(r.spec);
        return *r.spec;
    }

    std::size_t at(const std::string& line) const { return test::log_index(log, line); }
};

} // namespace

TEST_CASE(
    "clusters are found from the servers' ddl metadata, across pages, with their state folder and age") {
    Cloud cloud;
    auto target = cloud.target();
    SystemProcessRunner proc;
    auto found = target.find_clusters(std::make_unique<Spec>(cloud.spec()).get(), proc);
    REQUIRE(found.ok());
    REQUIRE(found->size() == 2);
    const FoundCluster& c1 = (*found)[0];
    CHECK(c1.cluster == "c1");
    CHECK(c1.state_dir == "/ci/.ddl/c1");
    CHECK(c1.record["cloud"] == "hunren");
    CHECK(c1.record["servers"] == nlohmann::json{"s1", "s2"});
    CHECK(c1.detail == "2 server(s) on cloud hunren");
    const long long since_s2 = static_cast<long long>(std::time(nullptr)) - 1795255200; // 2026-11-21T10:00Z
    CHECK(c1.age_s == since_s2);
    CHECK(c1.expires.empty());
    CHECK((*found)[1].cluster == "c2");
    CHECK((*found)[1].state_dir == "/home/u/.ddl/c2");
    // ddl_expires: the latest of its servers' (gc --expired destroys it once every one has passed).
    CHECK((*found)[1].expires == "2026-11-26T12:00:00Z");
}

TEST_CASE(
    "a found cluster is removed in the order Neutron accepts, the router's own port left to the router") {
    Cloud cloud;
    auto target = cloud.target();
    SystemProcessRunner proc;
    auto found = target.find_clusters(std::make_unique<Spec>(cloud.spec()).get(), proc);
    REQUIRE(found.ok());
    cloud.log.clear();
    test::FakeProgress progress;
    auto st = target.destroy_found((*found)[0], proc, progress);
    REQUIRE(st.ok());
    const auto fip = cloud.at("DELETE " + k_net + "/floatingips/f1");
    const auto s1 = cloud.at("DELETE " + k_nova + "/servers/s1");
    const auto s2 = cloud.at("DELETE " + k_nova + "/servers/s2");
    const auto s2_gone = cloud.at("GET " + k_nova + "/servers/s2");
    const auto port = cloud.at("DELETE " + k_net + "/ports/p1");
    const auto iface =
        cloud.at("PUT " + k_net + "/routers/r1/remove_router_interface {\"subnet_id\":\"sn1\"}");
    const auto router = cloud.at("DELETE " + k_net + "/routers/r1");
    const auto subnet = cloud.at("DELETE " + k_net + "/subnets/sn1");
    const auto network = cloud.at("DELETE " + k_net + "/networks/n1");
    const auto group = cloud.at("DELETE " + k_net + "/security-groups/g1");
    const auto key = cloud.at("DELETE " + k_nova + "/os-keypairs/c1-key");
    const auto sgroup = cloud.at("DELETE " + k_nova + "/os-server-groups/sg1");
    CHECK(fip < s1);
    CHECK(s1 < s2);
    CHECK(s2 < s2_gone);
    CHECK(s2_gone < port);
    CHECK(port < iface);
    CHECK(iface < router);
    CHECK(router < subnet);
    CHECK(subnet < network);
    CHECK(network < group);
    CHECK(group < key);
    CHECK(key < sgroup);
    for (const auto& line : cloud.log) {
        CHECK(line.find("/ports/p2") == std::string::npos); // the router interface's port goes with it
        CHECK(line.find("sg9") == std::string::npos);       // another server group stays
        CHECK(line.find("/servers/x9") == std::string::npos);
    }
}

TEST_CASE("what the cloud refuses is named, everything else is still removed, and gc can run again") {
    Cloud cloud;
    cloud.refuse[k_net + "/networks/n1"] = 409;
    auto target = cloud.target();
    SystemProcessRunner proc;
    auto found = target.find_clusters(std::make_unique<Spec>(cloud.spec()).get(), proc);
    REQUIRE(found.ok());
    test::FakeProgress progress;
    auto st = target.destroy_found((*found)[0], proc, progress);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message.find("network c1-net (n1)") != std::string::npos);
    CHECK(st.error().message.find("409") != std::string::npos);
    CHECK(st.error().message.find("Unable to complete operation on network n1.") != std::string::npos);
    CHECK(st.error().message.find("run ddl gc again") != std::string::npos);
    cloud.at("DELETE " + k_net + "/security-groups/g1");
    cloud.at("DELETE " + k_nova + "/os-keypairs/c1-key");
}
