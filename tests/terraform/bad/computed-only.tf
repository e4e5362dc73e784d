# Arguments that can only be read: access_ip_v4 was settable in 2.x; network.mac never was.
# expect: resource openstack_compute_instance_v2.node: "access_ip_v4" is computed-only and cannot be set (settable in 2.x, computed-only in 3.x)
# expect: resource openstack_compute_instance_v2.node: "network.mac" is computed-only and cannot be set
resource "openstack_compute_instance_v2" "node" {
  name         = "node"
  access_ip_v4 = "192.168.42.10"

  network {
    name = "cluster"
    mac  = "fa:16:3e:00:00:01"
  }
}
