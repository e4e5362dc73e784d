// Pre-flight against tests/fakes/openstack_api.py: a real HTTPS server (test CA made at test time by
// tests/fakes/make_test_ca.sh) answering as Keystone, Nova, Glance, Neutron and Cinder do, including
// their error responses. libcurl verifies the server with the test CA, as clouds.yaml's cacert says.
#include "targets/openstack/OpenstackPreflight.hpp"

#include "spec/SpecLoader.hpp"
#include "support/ScriptedHttp.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ddl;
using namespace std::chrono_literals;

namespace {

const std::string k_fakes = std::string(DDL_SOURCE_DIR) + "/tests/fakes";

nlohmann::json healthy_cloud() {
    return {
        {"users", {{"alice", "planted-Pa55word"}}},
        {"app_credentials", {{"ac-1", "planted-AppSecret"}}},
        {"project", {{"id", "p-42"}, {"name", "ml"}}},
        {"flavors",
         {{{"name", "m2.xlarge"}, {"vcpus", 8}, {"ram", 16384}, {"disk", 0}},
          {{"name", "g1.xlarge.1xv100"}, {"vcpus", 8}, {"ram", 65536}, {"disk", 0}}}},
        {"images", {"Ubuntu 22.04", "Debian 12"}},
        {"networks",
         {{{"name", "public"}, {"router:external", true}}, {{"name", "lab"}, {"router:external", false}}}},
        {"compute_limits",
         {{"maxTotalInstances", 20},
          {"totalInstancesUsed", 2},
          {"maxTotalCores", 200},
          {"totalCoresUsed", 4},
          {"maxTotalRAMSize", 1048576},
          {"totalRAMUsed", 0}}},
        {"floatingip", {{"limit", 5}, {"used", 1}, {"reserved", 0}}},
        {"volume_limits",
         {{"maxTotalVolumeGigabytes", 2000},
          {"totalGigabytesUsed", 100},
          {"maxTotalVolumes", 20},
          {"totalVolumesUsed", 0}}}};
}

// The HTTPS fake as a child process, stopped when the test ends.
class FakeCloud {
public:
    FakeCloud() {
        SystemProcessRunner p;
        auto ca = p.run({.argv = {k_fakes + "/make_test_ca.sh", m_dir.path() + "/tls"}});
        REQUIRE(ca.ok());
        REQUIRE(ca->success());
        set(healthy_cloud());
        std::string port_file = m_dir.path() + "/port";
        m_pid = fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            std::string script = k_fakes + "/openstack_api.py", cert = m_dir.path() + "/tls/server.pem",
                        key = m_dir.path() + "/tls/server.key", config = this->config();
            execlp("python3", "python3", script.c_str(), "--cert", cert.c_str(), "--key", key.c_str(),
                   "--config", config.c_str(), "--port-file", port_file.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        // Up to 20 s: python3 and its TLS setup took over 5 s on the shared 2-core machine at load 15-20.
        for (int i = 0; i < 400 && !path_exists(port_file); ++i)
            std::this_thread::sleep_for(50ms);
        auto port = read_file(port_file);
        REQUIRE(port.ok());
        m_base = "https://127.0.0.1:" + trim(*port);
    }
    ~FakeCloud() {
        kill(m_pid, SIGTERM);
        waitpid(m_pid, nullptr, 0);
    }
    void set(const nlohmann::json& cfg) { REQUIRE(write_file_atomic(config(), cfg.dump(), 0600).ok()); }
    std::string config() const { return m_dir.path() + "/cloud.json"; }
    std::string ca() const { return m_dir.path() + "/tls/ca.pem"; }
    CloudAuth password_auth(const std::string& password = "planted-Pa55word") const {
        CloudAuth a;
        a.auth_url = m_base + "/identity/v3";
        a.username = "alice";
        a.password = password;
        a.project_name = "ml";
        a.user_domain_name = "Default";
        a.cacert = ca();
        return a;
    }
    CloudAuth app_credential_auth() const {
        CloudAuth a = password_auth();
        a.auth_type = "v3applicationcredential";
        a.application_credential_secret = "planted-AppSecret";
        a.password.clear();
        return a;
    }
    std::string requests() const { return read_file(config() + ".requests").value_or(""); }

private:
    TempDir m_dir;
    pid_t m_pid = -1;
    std::string m_base;
};

Spec reference_spec() {
    auto r = load_spec_file(std::string(DDL_SOURCE_DIR) + "/configs/openstack-horovod-reference.yaml");
    REQUIRE(r.spec);
    return *r.spec;
}

Result<PreflightResult> check(const CloudAuth& auth, const Spec& spec,
                              std::chrono::milliseconds timeout = 10s) {
    CurlHttpClient http;
    OpenstackClient client(http, auth, timeout);
    return OpenstackPreflight(client).run(spec);
}

} // namespace

TEST_CASE("pre-flight passes on a cloud that has everything and reports what it checked") {
    FakeCloud cloud;
    auto r = check(cloud.password_auth(), reference_spec());
    REQUIRE(r.ok());
    CHECK(r->problems.empty());
    std::string notes = join(r->notes, "\n");
    CHECK(notes.find("Keystone: authenticated, project p-42") != std::string::npos);
    CHECK(notes.find("instances: 8 needed, 18 left") != std::string::npos);
    CHECK(notes.find("cores: 64 needed, 196 left") != std::string::npos);
    CHECK(notes.find("floating IPs: 1 needed, 4 left") != std::string::npos);
    CHECK(notes.find("volume storage: 800 GB needed, 1900 GB left") != std::string::npos);
    // The password travels only in the token request's body, never in a URL.
    CHECK(cloud.requests().find("planted") == std::string::npos);
}

TEST_CASE("application-credential auth works and requests no scope") {
    FakeCloud cloud;
    CloudAuth a = cloud.app_credential_auth();
    a.application_credential_id = "ac-1";
    auto r = check(a, reference_spec());
    REQUIRE(r.ok());
    CHECK(r->problems.empty());
}

TEST_CASE("short quota is reported as requested vs left, every shortage at once") {
    FakeCloud cloud;
    auto cfg = healthy_cloud();
    cfg["compute_limits"]["maxTotalInstances"] = 10;
    cfg["compute_limits"]["totalInstancesUsed"] = 7;
    cfg["compute_limits"]["maxTotalRAMSize"] = 51200;
    cfg["floatingip"] = {{"limit", 2}, {"used", 1}, {"reserved", 1}};
    cfg["volume_limits"]["maxTotalVolumeGigabytes"] = 500;
    cloud.set(cfg);
    auto r = check(cloud.password_auth(), reference_spec());
    REQUIRE(r.ok());
    std::string all = join(r->problems, "\n");
    INFO(all);
    CHECK(all.find("quota: 8 instances requested, 3 left (limit 10, 7 in use)") != std::string::npos);
    CHECK(all.find("quota: 475136 MB RAM requested, 51200 MB left") != std::string::npos);
    CHECK(all.find("quota: 1 floating IPs requested, 0 left") != std::string::npos);
    CHECK(all.find("quota: 800 GB volume storage requested, 400 GB left") != std::string::npos);
    CHECK(r->problems.size() == 4);
}

TEST_CASE("an unknown flavor or image gets did-you-mean; a non-external network is named") {
    FakeCloud cloud;
    auto spec = reference_spec();
    spec.workers.flavor = "g1.xlarge.1xv10";
    spec.target_section<OpenstackSpec>().image = "Ubuntu 22.4";
    spec.target_section<OpenstackSpec>().external_network = "lab";
    auto r = check(cloud.password_auth(), spec);
    REQUIRE(r.ok());
    std::string all = join(r->problems, "\n");
    INFO(all);
    CHECK(all.find("nodes.workers.flavor: flavor \"g1.xlarge.1xv10\" does not exist; did you mean "
                   "\"g1.xlarge.1xv100\"?") != std::string::npos);
    CHECK(all.find("openstack.image: image \"Ubuntu 22.4\" does not exist; did you mean \"Ubuntu 22.04\"?") !=
          std::string::npos);
    CHECK(all.find("openstack.external_network: \"lab\" is not an external network") != std::string::npos);
    spec.target_section<OpenstackSpec>().external_network = "pubic";
    r = check(cloud.password_auth(), spec);
    REQUIRE(r.ok());
    CHECK(join(r->problems, "\n").find("network \"pubic\" does not exist; external networks here: public") !=
          std::string::npos);
}

TEST_CASE("wrong credentials are a clear 401 that says where to fix them") {
    FakeCloud cloud;
    auto r = check(cloud.password_auth("wrong"), reference_spec());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(
              "refused the credentials (401 Unauthorized: The request you have made requires "
              "authentication.); check the password or application credential of this cloud "
              "in clouds.yaml") != std::string::npos);
    CHECK(r.error().message.find("wrong") == std::string::npos);
}

TEST_CASE("a wrong auth_url (404), a server error (500) and a timeout each say what happened") {
    FakeCloud cloud;
    auto cfg = healthy_cloud();
    cfg["fail"] = {{"/identity/v3/auth/tokens", 404}};
    cloud.set(cfg);
    auto r = check(cloud.password_auth(), reference_spec());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("not found (404)") != std::string::npos);
    CHECK(r.error().message.find("auth_url in clouds.yaml must be the Identity v3 endpoint") !=
          std::string::npos);

    cfg["fail"] = {{"/compute/v2.1/limits", 500}};
    cloud.set(cfg);
    r = check(cloud.password_auth(), reference_spec());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("Nova: GET ") != std::string::npos);
    CHECK(r.error().message.find(
              "/compute/v2.1/limits failed with HTTP 500: injected failure (a server error on the "
              "cloud's side") != std::string::npos);

    cfg["fail"] = nlohmann::json::object();
    cfg["delay"] = {{"/image/v2/images", 3}};
    cloud.set(cfg);
    r = check(cloud.password_auth(), reference_spec(), 1s);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("Glance: GET ") != std::string::npos);
    CHECK(r.error().message.find("no answer within 1.0 s (timed out)") != std::string::npos);
}

TEST_CASE("a server whose CA is not given is refused, with a hint about cacert") {
    FakeCloud cloud;
    CloudAuth a = cloud.password_auth();
    a.cacert.clear();
    auto r = check(a, reference_spec());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("cacert") != std::string::npos);
}

TEST_CASE("without a block-storage service the volume quota is skipped, not guessed") {
    FakeCloud cloud;
    auto cfg = healthy_cloud();
    cfg["volume_limits"] = nullptr;
    cloud.set(cfg);
    auto r = check(cloud.password_auth(), reference_spec());
    REQUIRE(r.ok());
    CHECK(r->problems.empty());
    CHECK(join(r->notes, "\n").find("no block-storage service in the catalog") != std::string::npos);
}

TEST_CASE("flavors on later pages are found by following Nova's flavors_links") {
    FakeCloud cloud;
    auto cfg = healthy_cloud();
    cfg["osapi_max_limit"] = 1; // one flavor a page: m2.xlarge, then g1.xlarge.1xv100, then an empty page
    cloud.set(cfg);
    auto r = check(cloud.password_auth(), reference_spec());
    REQUIRE(r.ok());
    INFO(join(r->problems, "\n"));
    CHECK(r->problems.empty());
    CHECK(join(r->notes, "\n").find("cores: 64 needed, 196 left") != std::string::npos);
    auto log = cloud.requests();
    CHECK(log.find("/flavors/detail?marker=f0") != std::string::npos);
    CHECK(log.find("/flavors/detail?marker=f1") != std::string::npos);
}

TEST_CASE("the image suggestion follows Glance's next links") {
    FakeCloud cloud;
    auto cfg = healthy_cloud();
    cfg["images"] = {"CentOS 7", "Debian 12", "Fedora 40", "Ubuntu 22.04"};
    cfg["image_api_limit_max"] = 2; // ddl asks for 1000 a page; this Glance caps pages at 2
    cloud.set(cfg);
    auto spec = reference_spec();
    spec.target_section<OpenstackSpec>().image = "Ubuntu 22.4";
    auto r = check(cloud.password_auth(), spec);
    REQUIRE(r.ok());
    std::string all = join(r->problems, "\n");
    INFO(all);
    CHECK(all.find("image \"Ubuntu 22.4\" does not exist; did you mean \"Ubuntu 22.04\"?") !=
          std::string::npos);
    CHECK(cloud.requests().find("/image/v2/images?limit=1000&marker=i1") != std::string::npos);
}

TEST_CASE("a password request without a project gets an unscoped token, which is explained") {
    FakeCloud cloud;
    CloudAuth a = cloud.password_auth();
    a.project_name.clear();
    auto r = check(a, reference_spec());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "Keystone issued an unscoped token: set project_name or project_id for this cloud "
          "in clouds.yaml");
    // A user with a default project gets a token scoped to it instead.
    auto cfg = healthy_cloud();
    cfg["default_project"] = "p-42";
    cloud.set(cfg);
    r = check(a, reference_spec());
    REQUIRE(r.ok());
    CHECK(join(r->notes, "\n").find("Keystone: authenticated, project p-42") != std::string::npos);
}

TEST_CASE("an application credential given by name is looked up with its user") {
    FakeCloud cloud;
    auto cfg = healthy_cloud();
    cfg["app_credential_names"] = {{"alice", {{"ci", "ac-1"}}}};
    cloud.set(cfg);
    CloudAuth a = cloud.app_credential_auth();
    a.application_credential_name = "ci";
    auto r = check(a, reference_spec());
    REQUIRE(r.ok());
    CHECK(r->problems.empty());
    // The same name under another user is another credential (none here): Keystone's generic 401.
    a.username = "bob";
    cfg["users"]["bob"] = "x";
    cloud.set(cfg);
    r = check(a, reference_spec());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("refused the credentials (401 Unauthorized: The request you have made "
                                 "requires authentication.)") != std::string::npos);
}

namespace {

// A cloud whose Nova links every flavors page to itself: ddl must stop after its page cap.
Result<HttpResponse> looping_nova(const HttpRequest& req, int& flavor_pages) {
    const std::string b = "https://cloud.example.org";
    auto answer = [](long status, const nlohmann::json& body) {
        return HttpResponse{status, body.dump(), {{"x-subject-token", "tok"}}};
    };
    auto svc = [&](const std::string& type, const std::string& path) {
        return nlohmann::json{{"type", type}, {"endpoints", {{{"interface", "public"}, {"url", b + path}}}}};
    };
    if (req.method == "POST")
        return answer(
            201,
            {{"token",
              {{"project", {{"id", "p-1"}}},
               {"catalog",
                {svc("compute", "/compute/v2.1"), svc("image", "/image"), svc("network", "/network")}}}}});
    if (req.url.find("/flavors/detail") != std::string::npos) {
        ++flavor_pages;
        return answer(200, {{"flavors", {{{"name", "m1"}, {"vcpus", 1}, {"ram", 512}}}},
                            {"flavors_links",
                             {{{"rel", "next"}, {"href", b + "/compute/v2.1/flavors/detail?marker=m1"}}}}});
    }
    if (req.url.find("/images") != std::string::npos)
        return answer(200, {{"images", {{{"name", "Ubuntu 22.04"}}}}});
    if (req.url.find("/networks") != std::string::npos)
        return answer(200, {{"networks", {{{"name", "public"}, {"router:external", true}}}}});
    return answer(200, nlohmann::json::object()); // limits and quotas: none given, so unlimited
}

CloudAuth scripted_cloud_auth() {
    CloudAuth a;
    a.auth_url = "https://cloud.example.org/identity/v3";
    a.username = "alice";
    a.password = "pw";
    a.project_name = "ml";
    return a;
}

} // namespace

TEST_CASE("a server whose next links never end is read for 20 pages, then ddl goes on and says so") {
    int flavor_pages = 0;
    test::ScriptedHttp http([&](const HttpRequest& req) { return looping_nova(req, flavor_pages); });
    OpenstackClient client(http, scripted_cloud_auth(), 5s);
    auto r = OpenstackPreflight(client).run(reference_spec());
    REQUIRE(r.ok());
    CHECK(flavor_pages == OpenstackPreflight::k_max_pages);
    CHECK(join(r->notes, "\n")
              .find("Nova: read the first 20 pages of https://cloud.example.org/compute/v2.1/"
                    "flavors/detail only") != std::string::npos);
    CHECK(join(r->problems, "\n").find("flavor \"m2.xlarge\" does not exist") != std::string::npos);
}

TEST_CASE("a next link to another server (here plain http) is not followed: the token stays home") {
    std::vector<std::string> urls;
    test::ScriptedHttp http([&](const HttpRequest& req) -> Result<HttpResponse> {
        urls.push_back(req.url);
        if (req.url.find("/flavors/detail") == std::string::npos) {
            int pages = 0;
            return looping_nova(req, pages);
        }
        nlohmann::json body = {
            {"flavors", {{{"name", "m2.xlarge"}, {"vcpus", 8}, {"ram", 16384}}}},
            {"flavors_links",
             {{{"rel", "next"},
               {"href", "http://cloud.example.org/compute/v2.1/flavors/detail?marker=m2"}}}}};
        return HttpResponse{200, body.dump(), {}};
    });
    OpenstackClient client(http, scripted_cloud_auth(), 5s);
    auto r = OpenstackPreflight(client).run(reference_spec());
    REQUIRE(r.ok());
    for (const auto& u : urls)
        CHECK(u.rfind("https://", 0) == 0);
    CHECK(join(r->notes, "\n")
              .find("Nova: did not follow the next page at http://cloud.example.org/compute/v2.1/"
                    "flavors/detail?marker=m2 (another server than https://cloud.example.org)") !=
          std::string::npos);
}
