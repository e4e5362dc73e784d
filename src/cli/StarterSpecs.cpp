#include "cli/StarterSpecs.hpp"

#include <kainjow/mustache.hpp>
#include <map>

namespace ddl::cli {
namespace {

const char* k_header = R"(# ddl cluster spec — every key is documented in docs/spec.md.
# Check it with `ddl validate {{file}}`, then `ddl deploy {{file}}`.
apiVersion: ddl/v1
name: {{name}}            # DNS-safe: lowercase letters, digits, '-'
target: {{target}}
)";

const char* k_common = R"(
# Services installed by the configure phase.
services:
  nfs: {enabled: true, export: /srv/ddl, mount: /shared}
  jupyter: {enabled: false, port: 8888}   # reached through `ddl ssh` port forwarding only
  monitoring: {enabled: false}

runtime:
  backend: auto          # nccl on GPU nodes, tcp otherwise
  interface: auto        # or e.g. ens3; never lo or docker*
  slots_per_node: auto   # GPUs per node, 1 on CPU-only nodes

hostfile:
  format: openmpi        # openmpi | horovod | mpich
)";

const std::map<std::string, std::string> k_bodies{
    {"local", R"(
# N nodes on this machine (network namespaces, one sshd each). Needs root.
local:
  nodes: 4               # 1-16; the first is the master
  bandwidth: 1gbit       # link shaping per node: e.g. 1gbit, 10gbit, unlimited
  # subnet: 10.231.0.0/24  # default: derived from the name
)"},
    {"openstack", R"(
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
  driver_branch: "535"
  container_toolkit: true
)"},
    {"virtualwall", R"(
nodes:
  master: {flavor: gpunode, gpus: 1}
  workers: {count: 3, flavor: gpunode, gpus: 1}

virtualwall:
  testbed: wall2
  project: myproject
  hardware_type: gpunode
  disk_image: urn:publicid:IDN+wall2.ilabt.iminds.be+image+emulab-ops:UBUNTU22-64-STD
  link_capacity: 10gbit
)"},
    {"gpulab", R"(
nodes:
  master: {gpus: 1}
  workers: {count: 3, gpus: 1}

gpulab:
  project: myproject
  cluster_id: "1"
  docker_image: nvcr.io/nvidia/pytorch:24.05-py3
  layout: jobs-per-gpu   # or one-job
)"},
    {"ssh", R"(
access:
  user: ubuntu

ssh:
  hosts:
    - {name: master, address: 192.0.2.10}
    - {name: worker1, address: 192.0.2.11}
)"},
    {"slurm", R"(
slurm:
  partition: gpu
  nodes: 2
  gpus_per_node: 4
  time: "02:00:00"
)"},
};

} // namespace

Result<std::string> starter_spec(const std::string& target, const std::string& name) {
    auto it = k_bodies.find(target);
    if (it == k_bodies.end()) return Error{"unknown target \"" + target + "\""};
    kainjow::mustache::mustache tmpl(std::string(k_header) + it->second + k_common);
    kainjow::mustache::data data;
    data.set("name", name);
    data.set("target", target);
    data.set("file", "cluster.yaml");
    return tmpl.render(data);
}

} // namespace ddl::cli
