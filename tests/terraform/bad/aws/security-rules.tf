# Security group rules: one source per rule, ports in range, protocols as EC2 names them.
# expect: resource aws_security_group.nodes: name = "sg-nodes" does not match ^(?!sg-)
# expect: resource aws_vpc_security_group_ingress_rule.ssh: to_port = 70000 is above the maximum 65535
# expect: resource aws_vpc_security_group_ingress_rule.ssh: "cidr_ipv4" conflicts with "cidr_ipv6"
# expect: resource aws_vpc_security_group_egress_rule.all: ip_protocol = "all" is not one of the documented values
# expect: resource aws_vpc_security_group_egress_rule.all: exactly one of "cidr_ipv4", "cidr_ipv6", "prefix_list_id", "referenced_security_group_id" must be set
resource "aws_security_group" "nodes" {
  name        = "sg-nodes"
  description = "nodes"
}

resource "aws_vpc_security_group_ingress_rule" "ssh" {
  security_group_id = aws_security_group.nodes.id
  ip_protocol       = "tcp"
  from_port         = 22
  to_port           = 70000
  cidr_ipv4         = "203.0.113.0/24"
  cidr_ipv6         = "2001:db8::/32"
}

resource "aws_vpc_security_group_egress_rule" "all" {
  security_group_id = aws_security_group.nodes.id
  ip_protocol       = "all"
}
