# `terraform test` of src/targets/aws/terraform against a mocked hashicorp/aws provider (Terraform >= 1.7):
# the real provider schema, no AWS. validate_aws.sh runs it after `terraform validate`. It checks what the
# provider cannot: which resources each choice makes, the refusals that must stop a plan, tags, outputs.

mock_provider "aws" {
  mock_data "aws_ami" {
    defaults = {
      id               = "ami-0123456789abcdef0"
      name             = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) 20250101"
      root_device_name = "/dev/sda1"
      block_device_mappings = [
        { device_name = "/dev/sda1", ebs = { volume_size = "75", volume_type = "gp3" }, no_device = "", virtual_name = "" },
        { device_name = "/dev/sdb", ebs = { volume_size = "500" }, no_device = "", virtual_name = "" },
      ]
    }
  }
  mock_data "aws_vpc" {
    defaults = { id = "vpc-0default" }
  }
  mock_data "aws_subnets" {
    defaults = { ids = ["subnet-0b", "subnet-0a"] }
  }
  mock_resource "aws_instance" {
    defaults = { public_ip = "203.0.113.10", private_ip = "10.42.0.10" }
  }
}

variables {
  cluster_name         = "demo"
  region               = "us-east-1"
  ssh_user             = "ubuntu"
  public_key           = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAbcdefghijklmnopqrstuvwxyz0123456789ABCDEF me@host"
  master_instance_type = "g5.xlarge"
  worker_instance_type = "g5.2xlarge"
  worker_count         = 2
  root_volume_gb       = 100
  network_cidr         = "10.42.0.0/16"
  allowed_cidrs        = ["203.0.113.0/24", "2001:db8::/32"]
}

run "new_vpc_makes_network_nodes_and_outputs" {
  command = apply

  assert {
    condition     = length(aws_vpc.cluster) == 1 && length(aws_subnet.cluster) == 1 && length(aws_internet_gateway.cluster) == 1 && length(aws_route_table_association.cluster) == 1
    error_message = "a VPC, subnet, gateway and route table association are created without use_default_vpc"
  }
  assert {
    condition     = length(data.aws_vpc.default) == 0 && length(aws_placement_group.cluster) == 0
    error_message = "the default VPC is not looked up, no placement group by default"
  }
  assert {
    condition     = aws_instance.master.instance_type == "g5.xlarge" && alltrue([for w in aws_instance.worker : w.instance_type == "g5.2xlarge"])
    error_message = "master and workers take their own instance types"
  }
  assert {
    condition     = aws_instance.master.ami == "ami-0123456789abcdef0" && aws_instance.master.root_block_device[0].volume_size == 100 && aws_instance.master.root_block_device[0].volume_type == "gp3"
    error_message = "AMI from the lookup, root volume from the variables"
  }
  assert {
    condition     = length(aws_instance.master.instance_market_options) == 0 && aws_instance.master.metadata_options[0].http_tokens == "required"
    error_message = "on-demand by default, IMDSv2 only"
  }
  assert {
    condition     = length(aws_instance.master.vpc_security_group_ids) == 2 && alltrue([for w in aws_instance.worker : w.vpc_security_group_ids == toset([aws_security_group.nodes.id])])
    error_message = "the master is in both groups, the workers only in the nodes group"
  }
  assert {
    condition     = length(aws_vpc_security_group_ingress_rule.ssh_ipv4) == 1 && aws_vpc_security_group_ingress_rule.ssh_ipv4["203.0.113.0/24"].security_group_id == aws_security_group.ssh.id && aws_vpc_security_group_ingress_rule.ssh_ipv6["2001:db8::/32"].cidr_ipv6 == "2001:db8::/32"
    error_message = "one SSH rule per allowed CIDR, IPv4 and IPv6 apart, in the ssh group"
  }
  assert {
    condition     = aws_vpc_security_group_ingress_rule.internal.referenced_security_group_id == aws_security_group.nodes.id && aws_vpc_security_group_egress_rule.ipv4.cidr_ipv4 == "0.0.0.0/0" && aws_vpc_security_group_egress_rule.ipv6.cidr_ipv6 == "::/0"
    error_message = "all traffic between members, explicit egress for IPv4 and IPv6"
  }
  assert {
    condition = alltrue([for t in [aws_vpc.cluster[0].tags, aws_subnet.cluster[0].tags, aws_internet_gateway.cluster[0].tags, aws_route_table.cluster[0].tags,
      aws_security_group.nodes.tags, aws_security_group.ssh.tags, aws_key_pair.cluster.tags, aws_vpc_security_group_ingress_rule.internal.tags,
      aws_vpc_security_group_egress_rule.ipv4.tags, aws_vpc_security_group_egress_rule.ipv6.tags, aws_instance.master.tags, aws_instance.worker[1].tags,
    aws_instance.master.root_block_device[0].tags] : t["ddl-cluster"] == "demo" && t["ddl-managed"] == "true"])
    error_message = "every resource carries ddl-cluster and ddl-managed"
  }
  assert {
    condition     = output.master_public_ip == "203.0.113.10" && output.master_private_ip == "10.42.0.10" && output.worker_private_ips == ["10.42.0.10", "10.42.0.10"] && output.ssh_user == "ubuntu" && output.cluster_name == "demo"
    error_message = "the outputs have the OpenStack module's shape"
  }
}

run "no_lifetime_no_expiry_tag" {
  command = plan

  assert {
    condition     = alltrue([for t in [aws_vpc.cluster[0].tags, aws_instance.master.tags, aws_key_pair.cluster.tags] : !contains(keys(t), "ddl-expires")])
    error_message = "without expires no resource carries ddl-expires"
  }
}

run "lifetime_tags_every_resource_with_its_end" {
  command = plan

  variables {
    expires = "2026-11-28T00:00:00Z"
  }

  assert {
    condition = alltrue([for t in [aws_vpc.cluster[0].tags, aws_subnet.cluster[0].tags, aws_internet_gateway.cluster[0].tags, aws_route_table.cluster[0].tags,
      aws_security_group.nodes.tags, aws_security_group.ssh.tags, aws_key_pair.cluster.tags, aws_vpc_security_group_ingress_rule.internal.tags,
      aws_instance.master.tags, aws_instance.worker[1].tags,
    aws_instance.master.root_block_device[0].tags] : t["ddl-expires"] == "2026-11-28T00:00:00Z" && t["ddl-cluster"] == "demo"])
    error_message = "with expires every resource carries ddl-expires beside ddl-cluster"
  }
}

run "expires_must_be_rfc3339_utc" {
  command = plan

  variables {
    expires = "2026-11-28 00:00"
  }

  expect_failures = [var.expires]
}

run "default_vpc_uses_a_default_subnet" {
  command = plan

  variables {
    use_default_vpc   = true
    availability_zone = "us-east-1b"
  }

  assert {
    condition     = length(aws_vpc.cluster) == 0 && length(aws_subnet.cluster) == 0 && length(aws_internet_gateway.cluster) == 0
    error_message = "nothing of the network is created with use_default_vpc"
  }
  assert {
    condition     = aws_instance.master.subnet_id == "subnet-0a" && aws_instance.worker[0].subnet_id == "subnet-0a"
    error_message = "every node goes into the first default subnet in sorted order"
  }
  assert {
    condition     = aws_security_group.nodes.vpc_id == "vpc-0default"
    error_message = "the groups belong to the default VPC"
  }
}

run "default_vpc_without_default_subnet_is_refused" {
  command = plan

  variables {
    use_default_vpc = true
  }
  override_data {
    target = data.aws_subnets.default
    values = { ids = [] }
  }
  expect_failures = [data.aws_subnets.default]
}

run "explicit_ami_id_is_looked_up_by_id" {
  command = plan

  variables {
    ami_id = "ami-0fedcba9876543210"
  }

  assert {
    condition     = data.aws_ami.node.most_recent == false && data.aws_ami.node.owners == null && anytrue([for f in data.aws_ami.node.filter : f.name == "image-id" && f.values == toset(["ami-0fedcba9876543210"])])
    error_message = "an explicit AMI is read by its id, not searched for"
  }
}

run "spot_makes_one_time_spot_instances" {
  command = plan

  variables {
    spot           = true
    spot_max_price = "0.75"
  }

  assert {
    condition     = aws_instance.worker[1].instance_market_options[0].market_type == "spot" && aws_instance.worker[1].instance_market_options[0].spot_options[0].instance_interruption_behavior == "terminate" && aws_instance.worker[1].instance_market_options[0].spot_options[0].max_price == "0.75"
    error_message = "spot makes one-time Spot Instances terminated on interruption"
  }
}

run "placement_group_alone" {
  command = plan

  variables {
    placement_group = true
  }

  assert {
    condition     = aws_placement_group.cluster[0].strategy == "cluster" && aws_instance.master.placement_group == "demo-nodes" && aws_instance.worker[0].placement_group == "demo-nodes"
    error_message = "placement_group puts every node into one cluster placement group"
  }
}

run "spot_with_placement_group_is_refused" {
  command = plan

  variables {
    spot            = true
    placement_group = true
  }
  expect_failures = [aws_placement_group.cluster]
}

run "ssh_from_anywhere_is_refused" {
  command = plan

  variables {
    allowed_cidrs = ["0.0.0.0/0", "::/0"]
  }
  expect_failures = [aws_security_group.ssh]
}

run "ssh_from_anywhere_when_allowed" {
  command = plan

  variables {
    allowed_cidrs    = ["0.0.0.0/0"]
    allow_any_source = true
  }

  assert {
    condition     = aws_vpc_security_group_ingress_rule.ssh_ipv4["0.0.0.0/0"].cidr_ipv4 == "0.0.0.0/0"
    error_message = "allow_any_source lets 0.0.0.0/0 through"
  }
}

run "root_volume_smaller_than_the_snapshot_is_refused" {
  command = plan

  variables {
    root_volume_gb = 50
  }
  expect_failures = [aws_instance.master, aws_instance.worker]
}

run "vpc_network_outside_16_to_28_is_refused" {
  command = plan

  variables {
    network_cidr = "10.0.0.0/8"
  }
  expect_failures = [aws_vpc.cluster]
}

run "key_types_ec2_cannot_import_are_refused" {
  command = plan

  variables {
    public_key = "ecdsa-sha2-nistp256 AAAAE2VjZHNh"
  }
  expect_failures = [aws_key_pair.cluster]
}

run "state_dir_longer_than_a_tag_value_is_refused" {
  command = plan

  variables {
    state_dir = "/${join("/", [for i in range(26) : "abcdefghij"])}"
  }
  expect_failures = [aws_instance.master]
}

run "bad_values_are_refused" {
  command = plan

  variables {
    cluster_name     = "Demo_1"
    region           = "us-east"
    public_key       = "AAAAE2VjZHNh ecdsa-sha2-nistp256"
    ami_id           = "ami-123"
    worker_count     = 1.5
    root_volume_type = "st1"
    network_cidr     = "10.42.0.1/16"
    allowed_cidrs    = ["203.0.113.7/24"]
  }
  expect_failures = [var.cluster_name, var.region, var.public_key, var.ami_id, var.worker_count, var.root_volume_type, var.network_cidr, var.allowed_cidrs]
}

run "stopped_sets_every_node_stopped" {
  command = plan

  variables {
    stopped = true
  }
  assert {
    condition     = aws_ec2_instance_state.master.state == "stopped" && length(aws_ec2_instance_state.worker) == 2 && alltrue([for s in aws_ec2_instance_state.worker : s.state == "stopped"])
    error_message = "instance_state stopped reaches the master and every worker"
  }
}

run "stopping_spot_instances_is_refused" {
  command = plan

  variables {
    spot    = true
    stopped = true
  }
  expect_failures = [aws_ec2_instance_state.master, aws_ec2_instance_state.worker]
}


run "no_node_credential_no_role" {
  command = plan

  assert {
    condition     = length(aws_iam_role.master) == 0 && length(aws_iam_role_policy.master) == 0 && length(aws_iam_instance_profile.master) == 0
    error_message = "without node_credential no IAM role, policy or instance profile is created"
  }
}

run "node_credential_gives_the_master_a_role_that_ends_this_cluster_only" {
  command = apply

  variables {
    node_credential = true
  }

  assert {
    condition     = aws_iam_role.master[0].name == "demo-master" && aws_iam_instance_profile.master[0].name == "demo-master" && aws_iam_instance_profile.master[0].role == "demo-master" && aws_iam_role_policy.master[0].name == "demo-autostop"
    error_message = "role, profile and policy are named from the cluster"
  }
  assert {
    condition     = aws_instance.master.iam_instance_profile == "demo-master"
    error_message = "the master carries the instance profile"
  }
  assert {
    condition     = jsondecode(aws_iam_role.master[0].assume_role_policy).Statement[0].Principal.Service == "ec2.amazonaws.com" && jsondecode(aws_iam_role.master[0].assume_role_policy).Statement[0].Action == "sts:AssumeRole"
    error_message = "the role is trusted by EC2 alone"
  }
  assert {
    condition = (length(jsondecode(aws_iam_role_policy.master[0].policy).Statement) == 2
      && jsondecode(aws_iam_role_policy.master[0].policy).Statement[0].Action == ["ec2:StopInstances", "ec2:TerminateInstances"]
      && jsondecode(aws_iam_role_policy.master[0].policy).Statement[0].Condition.StringEquals["aws:ResourceTag/ddl-cluster"] == "demo"
      && jsondecode(aws_iam_role_policy.master[0].policy).Statement[1].Action == "ec2:CreateTags"
      && jsondecode(aws_iam_role_policy.master[0].policy).Statement[1].Condition.StringEquals["aws:ResourceTag/ddl-cluster"] == "demo"
    && jsondecode(aws_iam_role_policy.master[0].policy).Statement[1].Condition["ForAllValues:StringEquals"]["aws:TagKeys"] == ["ddl-autostop"])
    error_message = "the policy allows only stopping, terminating and tagging (ddl-autostop) the instances tagged ddl-cluster = demo"
  }
  assert {
    condition     = alltrue([for s in jsondecode(aws_iam_role_policy.master[0].policy).Statement : s.Effect == "Allow" && s.Resource == "arn:aws:ec2:us-east-1:*:instance/*"])
    error_message = "every statement is on the region's instances"
  }
  assert {
    condition     = alltrue([for t in [aws_iam_role.master[0].tags, aws_iam_instance_profile.master[0].tags] : t["ddl-cluster"] == "demo" && t["ddl-managed"] == "true"])
    error_message = "role and profile carry ddl-cluster and ddl-managed"
  }
  assert {
    condition     = output.node_ids == [aws_instance.worker[0].id, aws_instance.worker[1].id, aws_instance.master.id]
    error_message = "node_ids lists the workers, then the master"
  }
}
