# One security group for every node: SSH from var.allowed_cidrs, everything between members, all egress.
# The default rules are deleted so that nothing else is open; egress is re-added explicitly.

locals {
  ethertypes = toset(["IPv4", "IPv6"])
}

resource "openstack_networking_secgroup_v2" "cluster" {
  name                 = "${var.cluster_name}-nodes"
  description          = "ddl cluster ${var.cluster_name}: SSH from allowed networks, all traffic between nodes"
  delete_default_rules = true
  tags                 = local.ddl_tags

  lifecycle {
    precondition {
      condition     = var.allow_any_source || length(local.ssh_from_anywhere) == 0
      error_message = local.ssh_from_anywhere_refusal
    }
  }
}

resource "openstack_networking_secgroup_rule_v2" "ssh" {
  for_each = toset(var.allowed_cidrs)

  description       = "SSH from ${each.value}"
  direction         = "ingress"
  ethertype         = strcontains(each.value, ":") ? "IPv6" : "IPv4"
  protocol          = "tcp"
  port_range_min    = 22
  port_range_max    = 22
  remote_ip_prefix  = each.value
  security_group_id = openstack_networking_secgroup_v2.cluster.id
}

resource "openstack_networking_secgroup_rule_v2" "internal" {
  for_each = local.ethertypes

  description       = "All ${each.value} traffic between cluster nodes"
  direction         = "ingress"
  ethertype         = each.value
  remote_group_id   = openstack_networking_secgroup_v2.cluster.id
  security_group_id = openstack_networking_secgroup_v2.cluster.id
}

resource "openstack_networking_secgroup_rule_v2" "egress" {
  for_each = local.ethertypes

  description       = "All ${each.value} egress"
  direction         = "egress"
  ethertype         = each.value
  security_group_id = openstack_networking_secgroup_v2.cluster.id
}
