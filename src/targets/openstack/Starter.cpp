#include "targets/openstack/OpenstackSection.hpp"

namespace ddl {

std::string openstack_starter_body() {
    return R"(
nodes:
  master: {flavor: g1.large, gpus: 0, disk_gb: 100}
  workers: {count: 2, flavor: g1.xlarge.1gpu, gpus: 1, disk_gb: 100}

access:
  user: ubuntu
  allowed_cidrs: [192.0.2.0/24]   # who may SSH to the master; never 0.0.0.0/0 by accident

# Credentials come from clouds.yaml (OS_CLOUD), never from this file.
openstack:
  cloud: mycloud
  image: Ubuntu 22.04
  external_network: public
  network_cidr: 192.168.42.0/24
  boot_volume_gb: 100

gpu:
  driver: true
  driver_branch: "580"
  container_toolkit: true
)";
}

} // namespace ddl
