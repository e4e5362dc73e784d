#!/usr/bin/env bash
# validate_aws.sh [MODULE_DIR]: `terraform validate` of the AWS module (default src/targets/aws/terraform),
# then `terraform test` with aws/*.tftest.hcl (a mocked provider: no AWS), with the real Terraform and the hashicorp/aws provider from a filesystem mirror (no network: the
# Terraform registry is never asked). Exit 77 (CTest's SKIP_RETURN_CODE) with a reason when Terraform or
# the mirror is missing.
#   TERRAFORM     the binary (default: terraform on PATH)
#   TF_MIRROR     the filesystem mirror (default /opt/tf-plugins), laid out as
#                 registry.terraform.io/hashicorp/aws/VERSION/OS_ARCH/terraform-provider-aws_*
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
module=${1:-$here/../../src/targets/aws/terraform}
terraform=${TERRAFORM:-$(command -v terraform || true)}
mirror=${TF_MIRROR:-/opt/tf-plugins}

if [ -z "$terraform" ] || [ ! -x "$terraform" ]; then
  echo "SKIP: terraform is not installed (set TERRAFORM=/path/to/terraform)"
  exit 77
fi
if ! compgen -G "$mirror/registry.terraform.io/hashicorp/aws/*/*/terraform-provider-aws_*" >/dev/null; then
  echo "SKIP: no hashicorp/aws provider in the filesystem mirror $mirror (set TF_MIRROR)"
  exit 77
fi
[ -d "$module" ] || { echo "FAIL: no module folder $module"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$module"/*.tf "$work/"
mkdir "$work/tests"
cp "$here"/aws/*.tftest.hcl "$work/tests/"
cat >"$work/cli.tfrc" <<CONF
provider_installation {
  filesystem_mirror {
    path    = "$mirror"
    include = ["registry.terraform.io/*/*"]
  }
}
CONF

# Only the mirror: no user CLI config, no plugin cache, no checkpoint call.
export TF_CLI_CONFIG_FILE=$work/cli.tfrc TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
unset TF_PLUGIN_CACHE_DIR TF_DATA_DIR
cd "$work"
echo "$("$terraform" version | head -1), provider mirror $mirror"
"$terraform" init -backend=false -input=false -no-color >init.log 2>&1 || { cat init.log; echo "FAIL: terraform init"; exit 1; }
grep -o 'Installed hashicorp/aws v[0-9.]*.*' init.log || true
"$terraform" fmt -check -diff -no-color . || { echo "FAIL: terraform fmt -check (run terraform fmt on the module)"; exit 1; }
"$terraform" validate -no-color
# The module's behaviour (what each choice creates, the refusals, tags, outputs) on a mocked provider.
"$terraform" test -no-color
