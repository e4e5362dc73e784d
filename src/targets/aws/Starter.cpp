#include "targets/aws/AwsSection.hpp"

namespace ddl {

std::string aws_starter_body() {
    return R"(
# The node groups' flavor is the EC2 instance type.
nodes:
  master: {flavor: g5.xlarge, gpus: 1, disk_gb: 100}
  workers: {count: 1, flavor: g5.xlarge, gpus: 1, disk_gb: 100}

access:
  user: ubuntu
  allowed_cidrs: [192.0.2.0/24]   # who may SSH to the master; never 0.0.0.0/0 by accident

# Credentials come from the environment or ~/.aws (AWS_PROFILE or profile:), never from this file.
aws:
  region: eu-west-1
  # ami: ami-0123456789abcdef0    # leave out: the newest AWS Deep Learning Base AMI (Ubuntu 22.04)
  vpc: new                        # new: a VPC of the cluster's own; default: the region's default VPC
  vpc_cidr: 10.42.0.0/16
  spot: false
  placement_group: false          # one cluster placement group; not together with spot
  root_volume_gb: 100

gpu:
  driver: false                   # the Deep Learning AMI ships the NVIDIA driver
  container_toolkit: true
)";
}

} // namespace ddl
