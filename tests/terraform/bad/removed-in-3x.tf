# Types that provider 3.0 removed, as blocks and as a reference.
# expect: resource openstack_compute_floatingip_associate_v2.master: openstack_compute_floatingip_associate_v2 was removed in provider 3.0
# expect: resource openstack_compute_secgroup_v2.nodes: openstack_compute_secgroup_v2 was removed in provider 3.0
# expect: output group: references openstack_compute_secgroup_v2, removed in provider 3.0
resource "openstack_compute_floatingip_associate_v2" "master" {
  floating_ip = "203.0.113.10"
  instance_id = "00000000-0000-0000-0000-000000000000"
}

resource "openstack_compute_secgroup_v2" "nodes" {
  name        = "nodes"
  description = "nodes"
}

output "group" {
  value = openstack_compute_secgroup_v2.nodes.id
}
