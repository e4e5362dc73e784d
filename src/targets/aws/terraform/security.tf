# Two security groups. "nodes" (every node): all traffic from members of the group and all egress.
# "ssh" (the master only): SSH from var.allowed_cidrs. Workers therefore accept nothing from outside
# the cluster; they are reached through the master.
#
# The provider removes the allow-all egress rule AWS puts into a new group, so egress is added back
# explicitly. Rules are separate aws_vpc_security_group_*_rule resources (one CIDR each), never
# inline ingress/egress blocks, which the provider says not to mix with them.

locals {
  ssh_ipv4_cidrs = toset([for c in var.allowed_cidrs : c if !strcontains(c, ":")])
  ssh_ipv6_cidrs = toset([for c in var.allowed_cidrs : c if strcontains(c, ":")])
}

resource "aws_security_group" "nodes" {
  name        = "${var.cluster_name}-nodes"
  description = "ddl cluster ${var.cluster_name}: all traffic between nodes, all egress"
  vpc_id      = local.vpc_id

  tags = merge(local.tags, { Name = "${var.cluster_name}-nodes" })
}

resource "aws_security_group" "ssh" {
  name        = "${var.cluster_name}-ssh"
  description = "ddl cluster ${var.cluster_name}: SSH to the master from allowed networks"
  vpc_id      = local.vpc_id

  tags = merge(local.tags, { Name = "${var.cluster_name}-ssh" })

  lifecycle {
    precondition {
      condition     = var.allow_any_source || length(local.ssh_from_anywhere) == 0
      error_message = local.ssh_from_anywhere_refusal
    }
  }
}

resource "aws_vpc_security_group_ingress_rule" "internal" {
  description                  = "All traffic between cluster nodes"
  security_group_id            = aws_security_group.nodes.id
  referenced_security_group_id = aws_security_group.nodes.id
  ip_protocol                  = "-1"

  tags = merge(local.tags, { Name = "${var.cluster_name}-internal" })
}

resource "aws_vpc_security_group_egress_rule" "ipv4" {
  description       = "All IPv4 egress"
  security_group_id = aws_security_group.nodes.id
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "-1"

  tags = merge(local.tags, { Name = "${var.cluster_name}-egress-ipv4" })
}

resource "aws_vpc_security_group_egress_rule" "ipv6" {
  description       = "All IPv6 egress"
  security_group_id = aws_security_group.nodes.id
  cidr_ipv6         = "::/0"
  ip_protocol       = "-1"

  tags = merge(local.tags, { Name = "${var.cluster_name}-egress-ipv6" })
}

resource "aws_vpc_security_group_ingress_rule" "ssh_ipv4" {
  for_each = local.ssh_ipv4_cidrs

  description       = "SSH from ${each.value}"
  security_group_id = aws_security_group.ssh.id
  cidr_ipv4         = each.value
  ip_protocol       = "tcp"
  from_port         = 22
  to_port           = 22

  tags = merge(local.tags, { Name = "${var.cluster_name}-ssh" })
}

resource "aws_vpc_security_group_ingress_rule" "ssh_ipv6" {
  for_each = local.ssh_ipv6_cidrs

  description       = "SSH from ${each.value}"
  security_group_id = aws_security_group.ssh.id
  cidr_ipv6         = each.value
  ip_protocol       = "tcp"
  from_port         = 22
  to_port           = 22

  tags = merge(local.tags, { Name = "${var.cluster_name}-ssh" })
}
