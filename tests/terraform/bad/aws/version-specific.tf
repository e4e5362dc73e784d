# Arguments of one major version only: the module must work on 5.100.0 and on 6.x.
# expect: resource aws_instance.node: unknown argument "region" (added in provider 6.x; not in 5.100.0)
# expect: resource aws_instance.node: "cpu_core_count" was removed in provider 6.0
# expect: resource aws_instance.node: instance_market_options.market_type = "interruptible-capacity-reservation" is not one of "spot", "capacity-block"
# expect: data aws_ami.dl: unknown argument "allow_unsafe_filter" (added in provider 6.x; not in 5.100.0)
# expect: provider aws: unknown provider argument "user_agent" (added in provider 6.x; not in 5.100.0)
# expect: provider aws: "endpoints.opsworks" was removed in provider 6.0
provider "aws" {
  region     = "us-east-1"
  user_agent = ["ddl/1.0"]

  endpoints {
    ec2      = "https://127.0.0.1:8443"
    opsworks = "https://127.0.0.1:8443"
  }
}

data "aws_ami" "dl" {
  most_recent         = true
  owners              = ["amazon"]
  allow_unsafe_filter = true
}

resource "aws_instance" "node" {
  ami            = data.aws_ami.dl.id
  instance_type  = "g5.xlarge"
  region         = "us-west-2"
  cpu_core_count = 2

  instance_market_options {
    market_type = "interruptible-capacity-reservation"
  }
}
