#!/usr/bin/env bash
# Follows: Terraform, "Backend Type: http" (https://developer.hashicorp.com/terraform/language/backend/http)
# and GitLab, "GitLab-managed Terraform/OpenTofu state" (https://docs.gitlab.com/user/infrastructure/iac/terraform_state/,
# its API lib/api/terraform/state.rb).
# Checks the pair the GitLab CI template's OpenStack job runs against in test_ci_templates: gitlab_tf_state.py
# answers and refuses as GitLab's state API does (curl), and the Terraform stand-in reaches it as Terraform's
# http backend does: TF_HTTP_* for what backend.tf.json leaves out, a refused token fails init, a lock held
# by another run fails plan with Terraform's words, and the stand-in's own lock is taken and released.
# Usage: test_tf_http_state.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$src/tests/fakes/standin_lib.sh"
tf="$src/tests/fakes/terraform"
fail() { echo "FAIL: $*"; exit 1; }
export FAKE_GITLAB_JOB_TOKEN="job-token-$RANDOM$RANDOM"
"$py" "$src/tests/fakes/gitlab_tf_state.py" --port-file "$work/port" --project-id 42 --states "$work/states.json" &
pid=$!
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "gitlab_tf_state.py did not start"
server="http://127.0.0.1:$(cat "$work/port")/api/v4/projects"
base="$server/42/terraform/state"
code() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }
auth=(-u "gitlab-ci-token:$FAKE_GITLAB_JOB_TOKEN")

# GitLab's answers, read with curl.
[ "$(code "$base/s1")" = 401 ] || fail "GET without credentials"
[ "$(code -u "gitlab-ci-token:wrong" "$base/s1")" = 401 ] || fail "GET with a wrong token"
[ "$(code "${auth[@]}" "$server/43/terraform/state/s1")" = 404 ] || fail "another project"
[ "$(code "${auth[@]}" "$base/s1")" = 404 ] || fail "GET of a state never written"
[ "$(code "${auth[@]}" -X POST --data 'not json' "$base/s1")" = 422 ] && grep -q "invalid JSON" "$work/body" || fail "POST of a body that is not JSON"
[ "$(code "${auth[@]}" -X POST --data '{"version": 4}' "$base/s1")" = 422 ] && grep -q "No serial" "$work/body" || fail "POST without a serial"
[ "$(code "${auth[@]}" -X POST --data '{"ID": "a"}' "$base/s1/lock")" = 400 ] || fail "a lock without its fields"
lock='{"ID": "L1", "Operation": "OperationTypeApply", "Info": "", "Who": "ci@runner", "Version": "1.9.0", "Created": "2026-01-01T00:00:00Z", "Path": ""}'
[ "$(code "${auth[@]}" -X POST --data "$lock" "$base/s1/lock")" = 200 ] || fail "lock"
[ "$(code "${auth[@]}" -X POST --data "${lock/L1/L2}" "$base/s1/lock")" = 409 ] && grep -q '"ID": "L1"' "$work/body" || fail "a second lock: 409 with the holder's"
[ "$(code "${auth[@]}" -X POST --data '{"serial": 1}' "$base/s1")" = 409 ] || fail "a write without the lock's ID"
[ "$(code "${auth[@]}" -X POST --data '{"serial": 1}' "$base/s1?ID=L1")" = 200 ] || fail "a write with the lock's ID"
[ "$(code "${auth[@]}" -X DELETE --data '{"ID": "L2"}' "$base/s1/lock")" = 409 ] || fail "unlock with another ID"
[ "$(code "${auth[@]}" -X DELETE --data "$lock" "$base/s1/lock")" = 200 ] || fail "unlock"
[ "$(code "${auth[@]}" "$base/s1")" = 200 ] && grep -q '"serial": 1' "$work/body" || fail "GET of the stored state"
echo "ok: gitlab_tf_state.py answers and refuses as GitLab's Terraform state API"

# The Terraform stand-in as the http backend's client, with the block ddl renders (openstack.state_backend
# {type: http} without an address) and the addresses from TF_HTTP_*.
mkdir "$work/mod" && cd "$work/mod"
cp "$src"/src/targets/openstack/terraform/*.tf .
echo '{"terraform": {"backend": {"http": {"lock_method": "POST", "unlock_method": "DELETE", "retry_wait_min": 5}}}}' >backend.tf.json
unset TF_HTTP_ADDRESS
"$tf" init -input=false -no-color >out.txt 2>&1 && fail "init without an address"
grep -q 'The argument "address" is required' out.txt || { cat out.txt; fail "init without an address: Terraform's words"; }
export TF_HTTP_ADDRESS="$base/s2" TF_HTTP_LOCK_ADDRESS="$base/s2/lock" TF_HTTP_UNLOCK_ADDRESS="$base/s2/lock"
export TF_HTTP_USERNAME=gitlab-ci-token TF_HTTP_PASSWORD=wrong
"$tf" init -input=false -no-color >out.txt 2>&1 && fail "init with a refused token"
grep -q "HTTP remote state endpoint requires auth" out.txt || { cat out.txt; fail "init with a refused token: Terraform's words"; }
export TF_HTTP_PASSWORD="$FAKE_GITLAB_JOB_TOKEN"
"$tf" init -input=false -no-color >out.txt 2>&1 || { cat out.txt; fail "init"; }
! grep -q "$FAKE_GITLAB_JOB_TOKEN" .terraform/terraform.tfstate || fail "init recorded the token"
[ "$(code "${auth[@]}" -X POST --data "${lock//s1/s2}" "$base/s2/lock")" = 200 ] || fail "lock s2 as another run"
"$tf" plan -input=false -no-color >out.txt 2>&1 && fail "plan while another run holds the lock"
grep -q "Error acquiring the state lock" out.txt && grep -q "ID=L1" out.txt || { cat out.txt; fail "plan while locked: Terraform's words"; }
[ "$(code "${auth[@]}" -X DELETE --data "$lock" "$base/s2/lock")" = 200 ] || fail "unlock s2"
"$tf" state list >out.txt 2>&1 || { cat out.txt; fail "state list of an empty remote state"; }
echo '{"nonsense": 1}' >terraform.tfvars.json
"$tf" plan -input=false -no-color >out.txt 2>&1 && fail "plan with an undeclared variable"
grep -q 'Value for undeclared variable' out.txt || { cat out.txt; fail "plan's own error under the lock"; }
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["s2"]; assert s["lock"] is None, s' "$work/states.json" ||
  fail "the plan that failed left the lock held"
grep -q "POST /api/v4/projects/42/terraform/state/s2/lock 200" "$work/states.json.log" &&
  grep -q "DELETE /api/v4/projects/42/terraform/state/s2/lock 200" "$work/states.json.log" || fail "plan did not lock and unlock"
echo "ok: the Terraform stand-in reads, locks and unlocks the state at the http backend as Terraform does"
