// clouds.yaml discovery in openstacksdk's order, and what each auth type needs.
#include "targets/openstack/CloudConfig.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

// A clouds.yaml search as openstacksdk does it, over files and variables of the test's own.
struct CloudFiles {
    TempDir dir;
    std::map<std::string, std::string> env;
    CloudConfig::Sources sources() {
        CloudConfig::Sources s;
        s.getenv = [this](const std::string& k) { return env.count(k) ? env[k] : std::string(); };
        s.cwd = dir.path() + "/cwd";
        s.home = dir.path() + "/home";
        return s;
    }
    void write(const std::string& rel, const std::string& text) {
        REQUIRE(make_dirs(dir.path() + "/" + rel.substr(0, rel.rfind('/')), 0700).ok());
        REQUIRE(write_file_atomic(dir.path() + "/" + rel, text, 0600).ok());
    }
};

const char* k_password_cloud = R"(clouds:
  lab:
    region_name: RegionOne
    auth:
      auth_url: https://keystone.example.org:5000/v3
      username: alice
      password: s3cret-planted
      project_name: ml
      user_domain_name: Default
)";

} // namespace

TEST_CASE("clouds.yaml is searched as openstacksdk does: OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack, "
          "/etc/openstack") {
    CloudFiles rig;
    rig.env["OS_CLIENT_CONFIG_FILE"] = "/x/my.yaml";
    auto paths = CloudConfig::search_paths(rig.sources());
    REQUIRE(paths.size() >= 5);
    CHECK(paths[0] == "/x/my.yaml");
    CHECK(paths[1] == rig.dir.path() + "/cwd/clouds.yaml");
    CHECK(paths[3] == rig.dir.path() + "/home/.config/openstack/clouds.yaml");
    CHECK(paths[5] == "/etc/openstack/clouds.yaml");
}

TEST_CASE("the first clouds.yaml found wins and its entry gives password auth") {
    CloudFiles rig;
    rig.write("home/.config/openstack/clouds.yaml", k_password_cloud);
    rig.write("cwd/clouds.yaml",
              std::string(k_password_cloud).replace(std::string(k_password_cloud).find("alice"), 5, "bob"));
    auto c = CloudConfig::load("lab", rig.sources());
    REQUIRE(c.ok());
    CHECK(c->file == rig.dir.path() + "/cwd/clouds.yaml");
    CHECK(c->auth.username == "bob");
    CHECK(c->auth.auth_type == "password");
    CHECK(c->auth.region_name == "RegionOne");
    auto env = c->terraform_env();
    CHECK(env.at("OS_CLOUD") == "lab");
    CHECK(env.at("OS_CLIENT_CONFIG_FILE") == c->file);
    for (const auto& [k, v] : env)
        CHECK(v.find("s3cret") == std::string::npos);
}

TEST_CASE("secure.yaml is merged over clouds.yaml, as openstacksdk keeps passwords apart") {
    CloudFiles rig;
    std::string text = k_password_cloud;
    text.replace(text.find("      password: s3cret-planted\n"), 30, "");
    rig.write("cwd/clouds.yaml", text);
    rig.write("cwd/secure.yaml", "clouds:\n  lab:\n    auth:\n      password: from-secure\n");
    auto c = CloudConfig::load("lab", rig.sources());
    REQUIRE(c.ok());
    CHECK(c->auth.password == "from-secure");
    CHECK(c->auth.username == "alice");
}

TEST_CASE("application credentials are read with their id and secret") {
    CloudFiles rig;
    rig.write("home/.config/openstack/clouds.yaml", R"(clouds:
  lab:
    auth_type: v3applicationcredential
    auth:
      auth_url: https://keystone.example.org:5000
      application_credential_id: 0123abc
      application_credential_secret: planted-secret
)");
    auto c = CloudConfig::load("lab", rig.sources());
    REQUIRE(c.ok());
    CHECK(c->auth.auth_type == "v3applicationcredential");
    CHECK(c->auth.application_credential_id == "0123abc");
    auto body = OpenstackClient::auth_body(c->auth);
    CHECK(body["auth"]["identity"]["methods"] == nlohmann::json::array({"application_credential"}));
    CHECK(body["auth"]["identity"]["application_credential"]["id"] == "0123abc");
    CHECK_FALSE(body["auth"].contains("scope"));
}

TEST_CASE("a missing cloud names the file, the clouds it has and a close match") {
    CloudFiles rig;
    rig.write("cwd/clouds.yaml", k_password_cloud);
    auto c = CloudConfig::load("lba", rig.sources());
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().message == rig.dir.path() +
                                   "/cwd/clouds.yaml: no cloud \"lba\" (openstack.cloud in the spec); it "
                                   "has: lab; did you mean \"lab\"?");
}

TEST_CASE("no clouds.yaml anywhere says where it looked and how to get one") {
    CloudFiles rig;
    rig.env["OS_CLIENT_CONFIG_FILE"] = rig.dir.path() + "/nope.yaml";
    auto c = CloudConfig::load("lab", rig.sources());
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().message.find("no clouds.yaml found (looked in " + rig.dir.path() + "/nope.yaml, ") == 0);
    CHECK(c.error().message.find("OS_CLIENT_CONFIG_FILE") != std::string::npos);
}

TEST_CASE("an entry without what its auth type needs lists every missing key") {
    CloudFiles rig;
    rig.write("cwd/clouds.yaml", "clouds:\n  lab:\n    auth:\n      username: a\n");
    auto c = CloudConfig::load("lab", rig.sources());
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().message == rig.dir.path() +
                                   "/cwd/clouds.yaml: clouds.lab lacks auth.auth_url, auth.password (or "
                                   "put it in secure.yaml), auth.project_name or auth.project_id");
}

TEST_CASE("OS_CACERT is used when the entry names no cacert, and must be readable") {
    CloudFiles rig;
    rig.write("cwd/clouds.yaml", k_password_cloud);
    rig.env["OS_CACERT"] = rig.dir.path() + "/missing-ca.pem";
    auto c = CloudConfig::load("lab", rig.sources());
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().message.find("cacert: cannot read " + rig.dir.path() + "/missing-ca.pem") !=
          std::string::npos);
}

TEST_CASE("password auth scopes to the project in the user's domain unless the project's is given") {
    CloudAuth a;
    a.username = "alice";
    a.password = "pw";
    a.project_name = "ml";
    a.user_domain_name = "Users";
    auto body = OpenstackClient::auth_body(a);
    CHECK(body["auth"]["identity"]["password"]["user"]["domain"]["name"] == "Users");
    CHECK(body["auth"]["scope"]["project"]["name"] == "ml");
    CHECK(body["auth"]["scope"]["project"]["domain"]["name"] == "Users");
    a.project_domain_id = "d-7";
    body = OpenstackClient::auth_body(a);
    CHECK(body["auth"]["scope"]["project"]["domain"] == nlohmann::json{{"id", "d-7"}});
    a.project_id = "p-1";
    body = OpenstackClient::auth_body(a);
    CHECK(body["auth"]["scope"]["project"] == nlohmann::json{{"id", "p-1"}});
}
