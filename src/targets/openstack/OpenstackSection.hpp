#pragma once
// The openstack target's section (`openstack:`): the cloud, image, networks and where Terraform keeps state.
#include "targets/TerraformSection.hpp"

#include <string>
#include <vector>

namespace ddl {

struct BackendSpec {
    std::string type = "local";                // local | http | s3
    std::string address;                       // http
    std::string bucket, key, region, endpoint; // s3
};

struct OpenstackSpec : TerraformSpec {
    std::string cloud;
    std::string image = "Ubuntu 22.04";
    std::string external_network;
    std::string network; // existing network name; empty: create one
    std::string network_cidr = "192.168.42.0/24";
    int boot_volume_gb = 100;
    bool anti_affinity = false;
    std::vector<std::string> dns_nameservers;
    BackendSpec state_backend;

    std::unique_ptr<TargetSection> clone() const override { return std::make_unique<OpenstackSpec>(*this); }
    nlohmann::json to_json() const override;
};

const TargetKind& openstack_kind();
// The `openstack:` part (with nodes, access and gpu) of `ddl init --target openstack`.
std::string openstack_starter_body();

} // namespace ddl
