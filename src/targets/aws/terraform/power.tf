# The nodes stopped or running (var.stopped, common.tf: `ddl stop`, `ddl start`). aws_ec2_instance_state
# (hashicorp/aws, "Resource: aws_ec2_instance_state") takes "running" or "stopped"; a change is EC2's
# StopInstances / StartInstances, then a wait for the state. A stopped instance keeps its EBS root volume
# (billed per GB-month) and its private address; its public IPv4 address is released and a new one is given at
# start (the module's outputs carry it). One-time Spot Instances cannot be stopped (EC2 refuses
# StopInstances): ddl refuses autostop.action: stop and `ddl stop` with spot, and the precondition below says
# so to Terraform users.
resource "aws_ec2_instance_state" "master" {
  instance_id = aws_instance.master.id
  state       = var.stopped ? "stopped" : "running"

  lifecycle {
    precondition {
      condition     = !(var.stopped && var.spot)
      error_message = "One-time Spot Instances cannot be stopped; destroy the cluster instead."
    }
  }
}

resource "aws_ec2_instance_state" "worker" {
  count = var.worker_count

  instance_id = aws_instance.worker[count.index].id
  state       = var.stopped ? "stopped" : "running"

  lifecycle {
    precondition {
      condition     = !(var.stopped && var.spot)
      error_message = "One-time Spot Instances cannot be stopped; destroy the cluster instead."
    }
  }
}
