# Blocks written as "key = value": HCL-to-JSON cannot tell the list form from a block, the scanner can.
# expect: resource openstack_compute_instance_v2.node: "network" is a block; write "network { ... }"
# expect: resource openstack_compute_instance_v2.node: "block_device" is a block; write "block_device { ... }"
# expect: resource openstack_compute_instance_v2.node: "metadata" is an argument (map), not a block
resource "openstack_compute_instance_v2" "node" {
  name    = "node"
  network = [{ port = "00000000-0000-0000-0000-000000000000" }]

  block_device = {
    uuid        = "00000000-0000-0000-0000-000000000000"
    source_type = "image"
  }

  metadata {
    role = "worker"
  }
}
