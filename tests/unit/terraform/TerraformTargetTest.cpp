// What every Terraform target shares and needs no cloud for: nodes from the module's outputs.
#include "terraform/TerraformTarget.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("the master is reached at its floating IP and every worker through the master") {
    nlohmann::json out{{"master_public_ip", "203.0.113.7"},
                       {"master_private_ip", "192.168.42.10"},
                       {"worker_private_ips", {"192.168.42.11", "192.168.42.12"}},
                       {"ssh_user", "ubuntu"}};
    auto nodes = TerraformTarget::nodes_from_outputs(out, "", "openstack");
    REQUIRE(nodes.ok());
    REQUIRE(nodes->size() == 3);
    CHECK((*nodes)[0].name == "master");
    CHECK((*nodes)[0].group == "master");
    CHECK((*nodes)[0].address == "203.0.113.7");
    CHECK((*nodes)[0].jump.empty());
    CHECK((*nodes)[0].private_address == "192.168.42.10");
    CHECK((*nodes)[0].cluster_address() == "192.168.42.10");
    CHECK((*nodes)[2].cluster_address() == "192.168.42.12");
    CHECK((*nodes)[0].user == "ubuntu");
    CHECK((*nodes)[2].name == "worker2");
    CHECK((*nodes)[2].group == "workers");
    CHECK((*nodes)[2].address == "192.168.42.12");
    CHECK((*nodes)[2].jump == "master");
    CHECK((*nodes)[2].port == 22);
}

TEST_CASE("a missing or malformed output is named") {
    nlohmann::json out{
        {"master_public_ip", "203.0.113.7"}, {"master_private_ip", "10.0.0.1"}, {"ssh_user", "u"}};
    auto nodes = TerraformTarget::nodes_from_outputs(out, "", "openstack");
    REQUIRE_FALSE(nodes.ok());
    CHECK(nodes.error().message == "terraform output has no worker_private_ips list");
    out["worker_private_ips"] = {"10.0.0.2", 5};
    nodes = TerraformTarget::nodes_from_outputs(out, "", "openstack");
    REQUIRE_FALSE(nodes.ok());
    CHECK(nodes.error().message == "terraform output worker_private_ips[1] is not an address");
    out.erase("master_public_ip");
    CHECK(TerraformTarget::nodes_from_outputs(out, "", "openstack")
              .error()
              .message.find("no master_public_ip") != std::string::npos);
}

TEST_CASE("the aws module's outputs become the master and workers reached through it") {
    nlohmann::json out{{"master_public_ip", "198.51.100.7"},
                       {"master_private_ip", "10.42.0.10"},
                       {"worker_private_ips", {"10.42.0.11", "10.42.0.12"}},
                       {"ssh_user", "ubuntu"}};
    auto nodes = TerraformTarget::nodes_from_outputs(out, "", "aws");
    REQUIRE(nodes.ok());
    REQUIRE(nodes->size() == 3);
    CHECK((*nodes)[0].address == "198.51.100.7");
    CHECK((*nodes)[0].private_address == "10.42.0.10");
    CHECK((*nodes)[2].name == "worker2");
    CHECK((*nodes)[2].jump == "master");
    out.erase("ssh_user");
    CHECK_FALSE(TerraformTarget::nodes_from_outputs(out, "", "aws").ok());
}
