#!/usr/bin/env bash
# Follows: Terraform CLI documentation, "Command: init" / "Command: plan" / "Command: apply"
# (https://developer.hashicorp.com/terraform/cli/commands) and "Input Variables", "Assigning values to root
# module variables" (https://developer.hashicorp.com/terraform/language/values/variables): undeclared and
# unset variables are errors, in terraform.tfvars.json and in *.auto.tfvars.json ("Variable Definitions
# (.tfvars) Files").
# Checks tests/fakes/terraform refuses what Terraform refuses, in Terraform's words and exit status: an
# unknown command, a flag the subcommand does not define, a variable the module does not declare, a
# required variable left unset; and it refuses a module of a provider it does not model. (The e2e suites
# test_openstack and test_aws drive its accepted paths.)
# Usage: test_terraform_standin.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
tf="$src/tests/fakes/terraform"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$src"/src/targets/openstack/terraform/*.tf .
n=0
expect() { # WANT_RC PATTERN ARGS...: the stand-in exits WANT_RC and prints PATTERN (stdout or stderr)
  local want=$1 pattern=$2 rc=0; shift 2
  "$tf" "$@" >out.txt 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat out.txt; echo "FAIL: terraform $* exited $rc, expected $want"; exit 1; }
  grep -q -- "$pattern" out.txt || { cat out.txt; echo "FAIL: terraform $* did not say: $pattern"; exit 1; }
  n=$((n + 1))
}
expect 1 'Terraform has no command named "frobnicate"' frobnicate
expect 1 'flag provided but not defined: -foo' plan -foo
expect 1 'flag provided but not defined: -target' apply -target=x
expect 1 'flag needs an argument: -replace' plan -replace
expect 0 'Terraform has been successfully initialized' init -input=false
echo '{"nonsense": 1}' >terraform.tfvars.json
expect 1 'Value for undeclared variable' plan -input=false -no-color
echo '{}' >terraform.tfvars.json
expect 1 'No value for required variable' plan -input=false -no-color
# "Variable Definitions (.tfvars) Files": *.auto.tfvars.json are read too (ddl's power.auto.tfvars.json).
echo '{"nonsense": 1}' >x.auto.tfvars.json
expect 1 'a value was found in file "x.auto.tfvars.json"' plan -input=false -no-color
rm x.auto.tfvars.json
# The mode is the module's provider block: a module of a provider the stand-in does not model is refused,
# not planned as another provider's.
mkdir other && cd other
printf 'provider "google" {\n  project = "p"\n}\n' >main.tf
expect 1 'configures neither provider "aws" nor provider "openstack"' init -input=false
cd ..
echo "ok: the Terraform stand-in refuses $((n - 2)) calls as Terraform does and a module it does not model (and accepts init)"
