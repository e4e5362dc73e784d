#!/usr/bin/env bash
# plan_rendered_aws.sh DDL SPEC...: renders each SPEC with ddl and runs the real Terraform's `terraform test`
# on the rendered folder (module + ddl's terraform.tfvars.json, read by `terraform test` from the root)
# against a mocked hashicorp/aws provider: every variable validation and the plan-time preconditions judge
# exactly what ddl wrote. With a cluster public key, as `ddl deploy` renders it. Exit 77 (skipped) where
# Terraform or the provider mirror is missing, as validate_aws.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ddl=$1
shift
terraform=${TERRAFORM:-$(command -v terraform || true)}
mirror=${TF_MIRROR:-/opt/tf-plugins}
[ -n "$terraform" ] && [ -x "$terraform" ] || { echo "SKIP: terraform is not installed"; exit 77; }
compgen -G "$mirror/registry.terraform.io/hashicorp/aws/*/*/terraform-provider-aws_*" >/dev/null ||
  { echo "SKIP: no hashicorp/aws provider in the filesystem mirror $mirror"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/cli.tfrc" <<CONF
provider_installation {
  filesystem_mirror {
    path    = "$mirror"
    include = ["registry.terraform.io/*/*"]
  }
}
CONF
export TF_CLI_CONFIG_FILE=$work/cli.tfrc TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
unset TF_PLUGIN_CACHE_DIR TF_DATA_DIR
failed=0
for spec in "$@"; do
  name=$(basename "$(dirname "$spec")")-$(basename "$spec" .yaml)
  out="$work/$name"
  "$ddl" --state-dir "$work/state" render "$spec" --out "$out" >"$work/render.log" 2>&1 || { cat "$work/render.log"; exit 1; }
  dir="$out/aws/terraform"
  # The key `ddl deploy` would render (ddl render without a cluster key leaves var.public_key to the user).
  python3 - "$dir/terraform.tfvars.json" <<'PY'
import json, sys
p = sys.argv[1]
v = json.load(open(p))
assert "public_key" not in v, v["public_key"]
v["public_key"] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAbcdefghijklmnopqrstuvwxyz0123456789ABCDEF ddl-test"
json.dump(v, open(p, "w"))
PY
  mkdir -p "$dir/tests"
  cat >"$dir/tests/rendered.tftest.hcl" <<'HCL'
mock_provider "aws" {
  mock_data "aws_ami" {
    defaults = {
      id               = "ami-0123456789abcdef0"
      name             = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) 20250101"
      root_device_name = "/dev/sda1"
      block_device_mappings = [
        { device_name = "/dev/sda1", ebs = { volume_size = "75", volume_type = "gp3" }, no_device = "", virtual_name = "" },
      ]
    }
  }
  mock_data "aws_vpc" {
    defaults = { id = "vpc-0default" }
  }
  mock_data "aws_subnets" {
    defaults = { ids = ["subnet-0a"] }
  }
}

run "ddl_rendered_inputs_plan" {
  command = plan
}
HCL
  (cd "$dir" && "$terraform" init -backend=false -input=false -no-color >init.log 2>&1 || { cat init.log; exit 1; })
  if (cd "$dir" && "$terraform" test -no-color >test.log 2>&1); then
    echo "ok   $spec: the rendered inputs plan with the real Terraform"
  else
    cat "$dir/test.log"; echo "FAIL: $spec"; failed=1
  fi
done
exit "$failed"
