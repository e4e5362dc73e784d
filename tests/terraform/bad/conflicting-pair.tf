# A rule from a group and from a prefix at once: the provider rejects the pair.
# expect: resource openstack_networking_secgroup_rule_v2.mixed: "remote_group_id" conflicts with "remote_ip_prefix"
resource "openstack_networking_secgroup_rule_v2" "mixed" {
  direction         = "ingress"
  ethertype         = "IPv4"
  remote_group_id   = "00000000-0000-0000-0000-000000000000"
  remote_ip_prefix  = "10.0.0.0/8"
  security_group_id = "00000000-0000-0000-0000-000000000000"
}
