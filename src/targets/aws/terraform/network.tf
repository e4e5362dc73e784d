# Where the nodes live: one subnet, either a default subnet of the region's default VPC
# (var.use_default_vpc) or a new VPC with one public subnet, an internet gateway and a route table.
# Exactly one of the two paths has count = 1. All nodes share the subnet, which keeps them in one
# availability zone (a cluster placement group needs that, and traffic between zones is billed).

locals {
  create_vpc = !var.use_default_vpc
  vpc_id     = local.create_vpc ? aws_vpc.cluster[0].id : data.aws_vpc.default[0].id
  # Default subnets are listed in no particular order; sorting keeps the choice stable between plans.
  subnet_id = local.create_vpc ? aws_subnet.cluster[0].id : sort(data.aws_subnets.default[0].ids)[0]
}

# --- the default VPC --------------------------------------------------------------------------

data "aws_vpc" "default" {
  count = local.create_vpc ? 0 : 1

  default = true
}

data "aws_subnets" "default" {
  count = local.create_vpc ? 0 : 1

  filter {
    name   = "vpc-id"
    values = [data.aws_vpc.default[0].id]
  }

  filter {
    name   = "default-for-az"
    values = ["true"]
  }

  dynamic "filter" {
    for_each = var.availability_zone != "" ? [var.availability_zone] : []
    content {
      name   = "availability-zone"
      values = [filter.value]
    }
  }

  lifecycle {
    postcondition {
      condition     = length(self.ids) > 0
      error_message = "The default VPC has no default subnet${var.availability_zone != "" ? " in ${var.availability_zone}" : ""}; set use_default_vpc = false to create a VPC."
    }
  }
}

# --- a VPC of the cluster's own ---------------------------------------------------------------

resource "aws_vpc" "cluster" {
  count = local.create_vpc ? 1 : 0

  cidr_block           = var.network_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true

  tags = merge(local.tags, { Name = "${var.cluster_name}-vpc" })

  lifecycle {
    # CreateVpc refuses other sizes (InvalidVpc.Range).
    precondition {
      condition     = tonumber(split("/", var.network_cidr)[1]) >= 16 && tonumber(split("/", var.network_cidr)[1]) <= 28
      error_message = "network_cidr is ${var.network_cidr}: a VPC's network must have a /16 to /28 prefix, such as 10.42.0.0/16."
    }
  }
}

resource "aws_subnet" "cluster" {
  count = local.create_vpc ? 1 : 0

  vpc_id                  = aws_vpc.cluster[0].id
  cidr_block              = var.network_cidr
  availability_zone       = var.availability_zone != "" ? var.availability_zone : null
  map_public_ip_on_launch = true

  tags = merge(local.tags, { Name = "${var.cluster_name}-subnet" })
}

resource "aws_internet_gateway" "cluster" {
  count = local.create_vpc ? 1 : 0

  vpc_id = aws_vpc.cluster[0].id

  tags = merge(local.tags, { Name = "${var.cluster_name}-igw" })
}

resource "aws_route_table" "cluster" {
  count = local.create_vpc ? 1 : 0

  vpc_id = aws_vpc.cluster[0].id

  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.cluster[0].id
  }

  tags = merge(local.tags, { Name = "${var.cluster_name}-routes" })
}

resource "aws_route_table_association" "cluster" {
  count = local.create_vpc ? 1 : 0

  subnet_id      = aws_subnet.cluster[0].id
  route_table_id = aws_route_table.cluster[0].id
}
