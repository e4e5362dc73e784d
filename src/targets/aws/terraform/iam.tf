# The master's own credential (var.node_credential, common.tf; autostop.node_credential in the spec): an IAM
# role that EC2 hands to the master through an instance profile, whose temporary keys the master reads from
# its instance metadata (IMDSv2). With it the master's idle clock ends the cluster itself. The role may only
# stop or terminate the instances tagged ddl-cluster = this cluster, and add the tag ddl-autostop to them
# (why it ended them); nothing else, not even a Describe. The workers get no profile.

locals {
  # Every instance the master must act on, workers first and itself last (output node_ids).
  node_ids = concat(aws_instance.worker[*].id, [aws_instance.master.id])
  # Instances of this cluster only: the condition key aws:ResourceTag/<key> is the tag the instance carries
  # ("AWS global condition context keys", IAM User Guide).
  this_cluster = { "aws:ResourceTag/ddl-cluster" = var.cluster_name }
  instances    = "arn:aws:ec2:${var.region}:*:instance/*"
}

resource "aws_iam_role" "master" {
  count = var.node_credential ? 1 : 0

  name        = "${var.cluster_name}-master"
  description = "ddl cluster ${var.cluster_name}: the master may stop or terminate this cluster's instances (autostop)"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "ec2.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })

  tags = merge(local.tags, { Name = "${var.cluster_name}-master" })
}

resource "aws_iam_role_policy" "master" {
  count = var.node_credential ? 1 : 0

  name = "${var.cluster_name}-autostop"
  role = aws_iam_role.master[0].id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "EndThisCluster"
        Effect    = "Allow"
        Action    = ["ec2:StopInstances", "ec2:TerminateInstances"]
        Resource  = local.instances
        Condition = { StringEquals = local.this_cluster }
      },
      {
        # The tag ddl-autostop alone (aws:TagKeys: the keys of the request's tags), on this cluster's instances.
        Sid      = "RecordWhy"
        Effect   = "Allow"
        Action   = "ec2:CreateTags"
        Resource = local.instances
        Condition = {
          StringEquals                = local.this_cluster
          "ForAllValues:StringEquals" = { "aws:TagKeys" = ["ddl-autostop"] }
        }
      },
    ]
  })
}

resource "aws_iam_instance_profile" "master" {
  count = var.node_credential ? 1 : 0

  name = "${var.cluster_name}-master"
  role = aws_iam_role.master[0].name

  tags = merge(local.tags, { Name = "${var.cluster_name}-master" })
}

output "node_ids" {
  description = "EC2 ids of the cluster's instances, the workers first and the master last: what the master's idle clock stops or terminates with node_credential."
  value       = local.node_ids
}
