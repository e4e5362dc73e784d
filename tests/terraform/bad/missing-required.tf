# A rule without its required ethertype, and a boot volume block without its required source_type.
# expect: resource openstack_networking_secgroup_rule_v2.ssh: missing required argument "ethertype"
# expect: resource openstack_compute_instance_v2.node: missing required argument "block_device.source_type"
resource "openstack_networking_secgroup_rule_v2" "ssh" {
  direction         = "ingress"
  security_group_id = "00000000-0000-0000-0000-000000000000"
}

resource "openstack_compute_instance_v2" "node" {
  name = "node"

  block_device {
    uuid             = "00000000-0000-0000-0000-000000000000"
    destination_type = "volume"
    volume_size      = 50
  }
}
