# Credentials in the provider block, the wrong provider source, a computed-only argument, a block written
# as an attribute and a volume type EC2 does not have.
# expect: provider aws: "access_key" is a credential; it belongs in the environment or the shared credentials files, not in the module
# expect: provider aws: "secret_key" is a credential
# expect: terraform: required provider aws has source "aws/aws", expected "hashicorp/aws"
# expect: resource aws_instance.node: "public_ip" is computed-only and cannot be set
# expect: resource aws_instance.node: "instance_market_options" is a block; write "instance_market_options { ... }"
# expect: resource aws_instance.node: root_block_device.volume_type = "gp9" is not one of
terraform {
  required_providers {
    aws = {
      source  = "aws/aws"
      version = ">= 5.100, < 7.0"
    }
  }
}

variable "secret_key" {
  type      = string
  sensitive = true
}

provider "aws" {
  region     = "us-east-1"
  access_key = "AKIDEXAMPLE"
  secret_key = var.secret_key
}

resource "aws_instance" "node" {
  ami                     = "ami-0123456789abcdef0"
  instance_type           = "g5.xlarge"
  public_ip               = "203.0.113.10"
  instance_market_options = [{ market_type = "spot" }]

  root_block_device {
    volume_size = 100
    volume_type = "gp9"
  }
}
