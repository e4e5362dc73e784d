// The AWS renderer: terraform.tfvars.json sets exactly the module's variables (src/targets/aws/terraform/
// variables.tf) with the values the spec gives, and the module is rendered file for file.
#include "support/TerraformModule.hpp"
#include "targets/Registry.hpp"
#include "targets/aws/AwsInputs.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

using namespace ddl;
namespace fs = std::filesystem;

namespace {

const fs::path k_module = fs::path(DDL_SOURCE_DIR) / "src" / "targets" / "aws" / "terraform";

using test::load_spec;

std::map<std::string, test::HclVariable> module_variables() {
    return test::module_variables(k_module);
}

} // namespace

TEST_CASE("terraform.tfvars.json sets every variable of the aws module except user_data, state_dir and "
          "expires (known at deploy) and stopped (ddl stop), and nothing else") {
    auto vars = module_variables();
    CHECK(vars.size() >= 20);
    CHECK(vars.at("ami_id").has_default);
    CHECK_FALSE(vars.at("region").has_default);
    for (const char* example : {"configs/aws-g5.yaml", "tests/golden/aws-g5/cluster.yaml",
                                "tests/golden/aws-spot-default-vpc/cluster.yaml"}) {
        INFO(example);
        auto tfvars =
            AwsInputs::tfvars(load_spec(fs::path(DDL_SOURCE_DIR) / example), "ssh-ed25519 AAAAtest k");
        for (auto it = tfvars.begin(); it != tfvars.end(); ++it)
            CHECK(vars.count(it.key()) == 1);
        for (const auto& [name, v] : vars)
            if (name != "user_data" && name != "state_dir" && name != "expires" && name != "stopped" &&
                name != "node_credential")
                CHECK(tfvars.contains(name));
    }
}

TEST_CASE("aws terraform.tfvars.json takes its values from the spec") {
    auto tfvars = AwsInputs::tfvars(
        load_spec(fs::path(DDL_SOURCE_DIR) / "tests/golden/aws-spot-default-vpc/cluster.yaml"),
        "ssh-ed25519 AAAAkey c\n");
    CHECK(tfvars["cluster_name"] == "spot-lab");
    CHECK(tfvars["region"] == "us-east-1");
    CHECK(tfvars["profile"] == "research");
    CHECK(tfvars["ami_id"] == "ami-0123456789abcdef0");
    CHECK(tfvars["master_instance_type"] == "m5.large");
    CHECK(tfvars["worker_instance_type"] == "g4dn.xlarge");
    CHECK(tfvars["worker_count"] == 2);
    CHECK(tfvars["use_default_vpc"] == true);
    CHECK(tfvars["spot"] == true);
    CHECK(tfvars["spot_max_price"] == "0.40");
    CHECK(tfvars["root_volume_type"] == "gp2");
    CHECK(tfvars["public_key"] == "ssh-ed25519 AAAAkey c");
    auto none = AwsInputs::tfvars(load_spec(fs::path(DDL_SOURCE_DIR) / "configs/aws-g5.yaml"), "");
    CHECK_FALSE(none.contains("public_key")); // left to the user, as any required Terraform variable
}

TEST_CASE(
    "the aws state folder is recorded when deploy knows it, and left to the module's default otherwise") {
    const Spec s = load_spec(fs::path(DDL_SOURCE_DIR) / "configs/aws-g5.yaml");
    CHECK(AwsInputs::tfvars(s, "ssh-ed25519 AAAAkey c", "/srv/ci/.ddl/g5")["state_dir"] == "/srv/ci/.ddl/g5");
    CHECK_FALSE(AwsInputs::tfvars(s, "ssh-ed25519 AAAAkey c").contains("state_dir"));
    CHECK_FALSE(AwsInputs::tfvars(s, "ssh-ed25519 AAAAkey c", "/" + std::string(256, 'd'))
                    .contains("state_dir")); // longer than an EC2 tag value: not recorded
}

TEST_CASE("the rendered module is the source tree's src/targets/aws/terraform, file for file") {
    auto spec = load_spec(fs::path(DDL_SOURCE_DIR) / "configs/aws-g5.yaml");
    auto files = render_spec(spec, {"ssh-ed25519 AAAA x"});
    REQUIRE(files.ok());
    CHECK(test::check_module_rendered(k_module, *files, k_aws_terraform_dir) == aws_module_files().size());
}
