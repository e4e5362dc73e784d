# Nodes: one master and var.worker_count workers, every one with a public IPv4 address (the only way
# out to the Internet without a NAT gateway), launched from one AMI in the cluster's subnet, optionally
# as Spot Instances and optionally in a cluster placement group.

locals {
  # On every resource, so that resources left behind can be found from the cloud's side (`ddl gc --spec`;
  # the instances also carry ddl-state, the state folder that deployed them), and ddl-expires when
  # var.expires (common.tf) is set.
  tags = merge({
    "ddl-cluster" = var.cluster_name
    "ddl-managed" = "true"
  }, local.expiry_tags)
  # When the cluster's lifetime ends (var.expires), so that `ddl gc --expired --spec` finds an expired
  # cluster in the region even where the state folder that deployed it is gone; no lifetime: no tag.
  expiry_tags = { for k, v in { "ddl-expires" = var.expires } : k => v if v != "" }
  lookup_ami  = var.ami_id == ""
  # null (no placement group) unless var.placement_group.
  placement_group = one(aws_placement_group.cluster[*].name)
  # Size of the AMI's root snapshot: a smaller root volume is refused by RunInstances, as is one outside
  # EBS's 8-16384 GiB or a fraction.
  ami_root_gb = try(tonumber(one([
    for m in data.aws_ami.node.block_device_mappings : m.ebs["volume_size"]
    if m.device_name == data.aws_ami.node.root_device_name
  ])), 0)
  root_volume_ok = (floor(var.root_volume_gb) == var.root_volume_gb && var.root_volume_gb <= 16384
  && var.root_volume_gb >= max(8, local.ami_root_gb))
  root_volume_refusal = "root_volume_gb is ${var.root_volume_gb}: it must be a whole number of GiB from ${max(8, local.ami_root_gb)} (8, or the ${local.ami_root_gb} GiB root snapshot of ${data.aws_ami.node.id}, ${data.aws_ami.node.name}) to 16384."
  # Empty unless var.spot: drives the dynamic instance_market_options blocks.
  spot = var.spot ? [{ max_price = var.spot_max_price != "" ? var.spot_max_price : null }] : []

  # What the outputs of common.tf report.
  master_public_ip   = aws_instance.master.public_ip
  master_private_ip  = aws_instance.master.private_ip
  worker_private_ips = aws_instance.worker[*].private_ip
}

# Either the newest image matching var.ami_name_filter from var.ami_owners, or exactly var.ami_id.
data "aws_ami" "node" {
  most_recent = local.lookup_ami
  owners      = local.lookup_ami ? var.ami_owners : null

  filter {
    name   = local.lookup_ami ? "name" : "image-id"
    values = [local.lookup_ami ? var.ami_name_filter : var.ami_id]
  }

  filter {
    name   = "state"
    values = ["available"]
  }
}

resource "aws_key_pair" "cluster" {
  key_name   = "${var.cluster_name}-key"
  public_key = var.public_key

  tags = merge(local.tags, { Name = "${var.cluster_name}-key" })

  lifecycle {
    precondition {
      condition     = can(regex("^(ssh-ed25519|ssh-rsa) ", trimspace(var.public_key)))
      error_message = "public_key must be an OpenSSH ed25519 or RSA public key (\"ssh-ed25519 AAAA...\"): EC2 imports no other key type."
    }
  }
}

resource "aws_placement_group" "cluster" {
  count = var.placement_group ? 1 : 0

  name     = "${var.cluster_name}-nodes"
  strategy = "cluster"

  tags = merge(local.tags, { Name = "${var.cluster_name}-nodes" })

  lifecycle {
    precondition {
      condition     = !var.spot
      error_message = "placement_group and spot cannot both be true: a cluster placement group needs every node's capacity in one zone at once, which Spot rarely has (the launch fails with InsufficientInstanceCapacity). Set one of them to false."
    }
  }
}

# --- instances -------------------------------------------------------------------------------

resource "aws_instance" "master" {
  ami                         = data.aws_ami.node.id
  instance_type               = var.master_instance_type
  subnet_id                   = local.subnet_id
  vpc_security_group_ids      = [aws_security_group.nodes.id, aws_security_group.ssh.id]
  key_name                    = aws_key_pair.cluster.key_name
  associate_public_ip_address = true
  placement_group             = local.placement_group
  user_data                   = local.user_data
  # With var.node_credential (iam.tf): the role that may end this cluster; null otherwise.
  iam_instance_profile = one(aws_iam_instance_profile.master[*].name)

  root_block_device {
    volume_size           = var.root_volume_gb
    volume_type           = var.root_volume_type
    encrypted             = true
    delete_on_termination = true
    tags                  = merge(local.tags, { Name = "${var.cluster_name}-master" })
  }

  metadata_options {
    http_endpoint = "enabled"
    http_tokens   = "required"
  }

  dynamic "instance_market_options" {
    for_each = local.spot
    content {
      market_type = "spot"
      spot_options {
        instance_interruption_behavior = "terminate"
        spot_instance_type             = "one-time"
        max_price                      = instance_market_options.value.max_price
      }
    }
  }

  tags = merge(local.tags, { Name = "${var.cluster_name}-master", "ddl-role" = "master", "ddl-state" = var.state_dir })

  # Destroyed before the route to the internet gateway (the gateway cannot be detached while
  # instances hold public addresses), created after it (cloud-init may need the Internet).
  depends_on = [aws_route_table_association.cluster, aws_vpc_security_group_egress_rule.ipv4]

  lifecycle {
    # A newer image release must not replace running nodes; another image means a new cluster.
    ignore_changes = [ami]

    precondition {
      condition     = length(var.state_dir) <= 256
      error_message = "state_dir must be at most 256 characters: it is the value of the ddl-state tag, and EC2 tag values are at most 256."
    }

    precondition {
      condition     = local.root_volume_ok
      error_message = local.root_volume_refusal
    }
  }
}

resource "aws_instance" "worker" {
  count = var.worker_count

  ami                         = data.aws_ami.node.id
  instance_type               = var.worker_instance_type
  subnet_id                   = local.subnet_id
  vpc_security_group_ids      = [aws_security_group.nodes.id]
  key_name                    = aws_key_pair.cluster.key_name
  associate_public_ip_address = true
  placement_group             = local.placement_group
  user_data                   = local.user_data

  root_block_device {
    volume_size           = var.root_volume_gb
    volume_type           = var.root_volume_type
    encrypted             = true
    delete_on_termination = true
    tags                  = merge(local.tags, { Name = "${var.cluster_name}-worker-${count.index}" })
  }

  metadata_options {
    http_endpoint = "enabled"
    http_tokens   = "required"
  }

  dynamic "instance_market_options" {
    for_each = local.spot
    content {
      market_type = "spot"
      spot_options {
        instance_interruption_behavior = "terminate"
        spot_instance_type             = "one-time"
        max_price                      = instance_market_options.value.max_price
      }
    }
  }

  tags = merge(local.tags, { Name = "${var.cluster_name}-worker-${count.index}", "ddl-role" = "worker", "ddl-state" = var.state_dir })

  depends_on = [aws_route_table_association.cluster, aws_vpc_security_group_egress_rule.ipv4]

  lifecycle {
    ignore_changes = [ami]

    precondition {
      condition     = local.root_volume_ok
      error_message = local.root_volume_refusal
    }
  }
}
