// The OpenStack renderer: terraform.tfvars.json sets exactly the module's variables, the backend
// configuration follows openstack.state_backend, and the golden cases in tests/golden/ give the same
// bytes every time (UPDATE_GOLDEN=1 rewrites them; review the diff).
#include "render/Renderer.hpp"
#include "spec/SpecLoader.hpp"
#include "targets/Registry.hpp"
#include "targets/openstack/OpenstackInputs.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

using namespace ddl;
namespace fs = std::filesystem;

namespace {

const fs::path k_module = fs::path(DDL_SOURCE_DIR) / "src" / "targets" / "openstack" / "terraform";

struct Variable {
    bool has_default = false;
};

// The variable blocks of variables.tf: name -> whether it has a default. Reads the HCL structurally
// (top-level `variable "x" {` blocks, `default =` at the block's own depth), enough for this module.
std::map<std::string, Variable> module_variables() {
    auto text = read_file((k_module / "variables.tf").string());
    REQUIRE(text.ok());
    std::map<std::string, Variable> out;
    std::regex head(R"re(^variable\s+"([^"]+)"\s*\{)re");
    std::istringstream in(*text);
    std::string line, current;
    int depth = 0;
    while (std::getline(in, line)) {
        std::smatch m;
        std::string code = line.substr(0, line.find('#'));
        if (depth == 0 && std::regex_search(code, m, head)) current = m[1];
        if (depth == 1 && !current.empty() && std::regex_search(code, std::regex(R"(^\s*default\s*=)")))
            out[current].has_default = true;
        for (char c : code) {
            if (c == '{') ++depth;
            if (c == '}') --depth;
        }
        if (!current.empty()) out.emplace(current, Variable{});
        if (depth == 0) current.clear();
    }
    return out;
}

Spec load(const fs::path& file) {
    auto r = load_spec_file(file.string());
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}

} // namespace

TEST_CASE("the variable reader finds every variable of the module and which have defaults") {
    auto vars = module_variables();
    CHECK(vars.size() >= 15);
    CHECK_FALSE(vars.at("cluster_name").has_default);
    CHECK(vars.at("network_name").has_default);
    CHECK(vars.at("user_data").has_default);
}

TEST_CASE(
    "terraform.tfvars.json sets every required variable of the module and nothing it does not declare") {
    auto vars = module_variables();
    for (const char* example :
         {"configs/openstack-horovod-reference.yaml", "tests/golden/openstack-s3-backend/cluster.yaml",
          "tests/golden/openstack-http-backend/cluster.yaml"}) {
        INFO(example);
        auto tfvars = OpenstackInputs::tfvars(load(fs::path(DDL_SOURCE_DIR) / example),
                                              "ssh-ed25519 AAAAtest k", "/srv/ci/.ddl/x");
        for (const auto& [name, v] : vars)
            if (!v.has_default) CHECK(tfvars.contains(name));
        for (auto it = tfvars.begin(); it != tfvars.end(); ++it)
            CHECK(vars.count(it.key()) == 1);
        // Every input the spec decides is passed; only user_data keeps the module's default.
        for (const auto& [name, v] : vars)
            if (name != "user_data") CHECK(tfvars.contains(name));
    }
}

TEST_CASE("terraform.tfvars.json takes its values from the spec") {
    auto tfvars =
        OpenstackInputs::tfvars(load(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml"),
                                "ssh-ed25519 AAAAkey c\n");
    CHECK(tfvars["cluster_name"] == "horovod-ref");
    CHECK(tfvars["cloud"] == "hunren");
    CHECK(tfvars["worker_count"] == 7);
    CHECK(tfvars["worker_flavor"] == "g1.xlarge.1xv100");
    CHECK(tfvars["master_flavor"] == "m2.xlarge");
    CHECK(tfvars["allowed_cidrs"] == nlohmann::json::array({"193.224.0.0/16"}));
    CHECK(tfvars["public_key"] == "ssh-ed25519 AAAAkey c");
    CHECK(tfvars["network_name"] == "");
}

TEST_CASE("without a public key the tfvars leave public_key to the user (Terraform asks, or -var)") {
    auto tfvars = OpenstackInputs::tfvars(
        load(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml"), "");
    CHECK_FALSE(tfvars.contains("public_key"));
    CHECK(tfvars.contains("ssh_user"));
}

TEST_CASE("the backend is local state by default, http and s3 from openstack.state_backend") {
    auto spec = load(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml");
    // The reference config keeps its state in GitLab: http with the addresses from the environment
    // (TF_HTTP_ADDRESS, TF_HTTP_LOCK_ADDRESS, TF_HTTP_UNLOCK_ADDRESS, as docs/ci/gitlab-ci.yml sets them).
    auto ref = OpenstackInputs::backend(spec)["terraform"]["backend"]["http"];
    CHECK_FALSE(ref.contains("address"));
    CHECK_FALSE(ref.contains("lock_address"));
    CHECK(ref["lock_method"] == "POST");
    CHECK(ref["unlock_method"] == "DELETE");
    spec.target_section<OpenstackSpec>().state_backend = {};
    CHECK(OpenstackInputs::backend(spec)["terraform"]["backend"]["local"]["path"] == "terraform.tfstate");
    spec.target_section<OpenstackSpec>().state_backend = {.type = "http",
                                                          .address = "https://gl.example.org/state/x"};
    auto http = OpenstackInputs::backend(spec)["terraform"]["backend"]["http"];
    CHECK(http["address"] == "https://gl.example.org/state/x");
    CHECK(http["lock_address"] == "https://gl.example.org/state/x/lock");
    CHECK_FALSE(http.contains("password"));
    spec.target_section<OpenstackSpec>().state_backend = {
        .type = "s3", .bucket = "b", .key = "k", .region = "eu-1"};
    auto s3 = OpenstackInputs::backend(spec)["terraform"]["backend"]["s3"];
    CHECK(s3["bucket"] == "b");
    CHECK(s3["region"] == "eu-1");
    CHECK_FALSE(s3.contains("endpoints"));
}

TEST_CASE("the rendered module is the source tree's src/targets/openstack/terraform, file for file") {
    auto spec = load(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml");
    auto files = render_spec(spec, {"ssh-ed25519 AAAA x"});
    REQUIRE(files.ok());
    std::set<std::string> source;
    for (const auto& e : fs::directory_iterator(k_module)) {
        if (e.path().extension() != ".tf") continue;
        source.insert(e.path().filename().string());
        auto text = read_file(e.path().string());
        REQUIRE(text.ok());
        std::string rel = std::string(k_openstack_terraform_dir) + "/" + e.path().filename().string();
        REQUIRE(files->count(rel) == 1);
        CHECK(files->at(rel) == *text);
    }
    CHECK(source.size() == OpenstackInputs::module_files().size());
}

TEST_CASE("the state folder is recorded when deploy knows it, and left to the module's default otherwise") {
    const Spec s = load(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml");
    CHECK(OpenstackInputs::tfvars(s, "ssh-ed25519 AAAAkey c", "/srv/ci/.ddl/horovod-ref")["state_dir"] ==
          "/srv/ci/.ddl/horovod-ref");
    CHECK_FALSE(OpenstackInputs::tfvars(s, "ssh-ed25519 AAAAkey c").contains("state_dir"));
    CHECK_FALSE(OpenstackInputs::tfvars(s, "ssh-ed25519 AAAAkey c", "/" + std::string(255, 'd'))
                    .contains("state_dir")); // longer than a Nova metadata value: not recorded
}
