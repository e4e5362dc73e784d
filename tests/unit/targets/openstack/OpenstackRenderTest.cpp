// The OpenStack renderer: terraform.tfvars.json sets exactly the module's variables, the backend
// configuration follows openstack.state_backend, and the golden cases in tests/golden/ give the same
// bytes every time (UPDATE_GOLDEN=1 rewrites them; review the diff).
#include "support/TerraformModule.hpp"
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

using test::load_spec;

std::map<std::string, test::HclVariable> module_variables() {
    return test::module_variables(k_module);
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
        auto tfvars = OpenstackInputs::tfvars(load_spec(fs::path(DDL_SOURCE_DIR) / example),
                                              "ssh-ed25519 AAAAtest k", "/srv/ci/.ddl/x");
        for (const auto& [name, v] : vars)
            if (!v.has_default) CHECK(tfvars.contains(name));
        for (auto it = tfvars.begin(); it != tfvars.end(); ++it)
            CHECK(vars.count(it.key()) == 1);
        // Every input the spec decides is passed; user_data keeps the module's default, expires is added
        // at deploy (with_expiry, from the state's created_at and the lifetime), stopped by `ddl stop` (in
        // power.auto.tfvars.json), node_credential only where the spec opts in.
        for (const auto& [name, v] : vars)
            if (name != "user_data" && name != "expires" && name != "stopped" && name != "node_credential")
                CHECK(tfvars.contains(name));
    }
}

TEST_CASE("terraform.tfvars.json takes its values from the spec") {
    auto tfvars = OpenstackInputs::tfvars(
        load_spec(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml"),
        "ssh-ed25519 AAAAkey c\n");
    CHECK(tfvars["cluster_name"] == "horovod-ref");
    CHECK(tfvars["cloud"] == "hunren");
    CHECK(tfvars["worker_count"] == 7);
    CHECK(tfvars["worker_flavor"] == "g1.xlarge.1xv100");
    CHECK(tfvars["master_flavor"] == "m2.xlarge");
    CHECK(tfvars["allowed_cidrs"] == nlohmann::json::array({"193.224.0.0/16"}));
    CHECK(tfvars["public_key"] == "ssh-ed25519 AAAAkey c");
    CHECK(tfvars["network_name"] == "");
    CHECK_FALSE(tfvars.contains("node_credential"));
    auto opted = load_spec(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml");
    opted.life.autostop.idle_minutes = 30;
    opted.life.autostop.node_credential = true;
    CHECK(OpenstackInputs::tfvars(opted, "ssh-ed25519 AAAAkey c\n")["node_credential"] == true);
}

TEST_CASE("without a public key the tfvars leave public_key to the user (Terraform asks, or -var)") {
    auto tfvars = OpenstackInputs::tfvars(
        load_spec(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml"), "");
    CHECK_FALSE(tfvars.contains("public_key"));
    CHECK(tfvars.contains("ssh_user"));
}

TEST_CASE("the backend is local state by default, http and s3 from openstack.state_backend") {
    auto spec = load_spec(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml");
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
    auto spec = load_spec(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml");
    auto files = render_spec(spec, {"ssh-ed25519 AAAA x"});
    REQUIRE(files.ok());
    CHECK(test::check_module_rendered(k_module, *files, k_openstack_terraform_dir) ==
          openstack_module_files().size());
}

TEST_CASE("the state folder is recorded when deploy knows it, and left to the module's default otherwise") {
    const Spec s = load_spec(fs::path(DDL_SOURCE_DIR) / "configs/openstack-horovod-reference.yaml");
    CHECK(OpenstackInputs::tfvars(s, "ssh-ed25519 AAAAkey c", "/srv/ci/.ddl/horovod-ref")["state_dir"] ==
          "/srv/ci/.ddl/horovod-ref");
    CHECK_FALSE(OpenstackInputs::tfvars(s, "ssh-ed25519 AAAAkey c").contains("state_dir"));
    CHECK_FALSE(OpenstackInputs::tfvars(s, "ssh-ed25519 AAAAkey c", "/" + std::string(255, 'd'))
                    .contains("state_dir")); // longer than a Nova metadata value: not recorded
}
