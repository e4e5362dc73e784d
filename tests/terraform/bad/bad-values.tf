# Literal values outside what the provider accepts, and a port range without its protocol.
# expect: resource openstack_networking_secgroup_rule_v2.web: direction = "inbound" is not one of "ingress", "egress"
# expect: resource openstack_networking_secgroup_rule_v2.web: ethertype = "ipv4" is not one of "IPv4", "IPv6"
# expect: resource openstack_networking_secgroup_rule_v2.web: port_range_max = 70000 is above the maximum 65535
# expect: resource openstack_networking_secgroup_rule_v2.web: "port_range_min" requires "protocol"
# expect: resource openstack_networking_secgroup_rule_v2.web: "port_range_max" requires "protocol"
# expect: resource openstack_compute_servergroup_v2.spread: policies = "anti_affinity" is not one of the documented values
resource "openstack_networking_secgroup_rule_v2" "web" {
  direction         = "inbound"
  ethertype         = "ipv4"
  port_range_min    = 80
  port_range_max    = 70000
  security_group_id = "00000000-0000-0000-0000-000000000000"
}

resource "openstack_compute_servergroup_v2" "spread" {
  name     = "spread"
  policies = ["anti_affinity"]
}
