#!/usr/bin/env bash
# docs/ci/gitlab-ci.yml run for real by gitlab-ci-local (tests/ci/package.json; 4.65.1 is the newest that
# runs on Debian's Node.js 20: later releases use Set.prototype.union, Node 22) with its shell executor, as
# a scheduled pipeline (CI_PIPELINE_SOURCE=schedule) on a runner where ddl is installed (DDL=...), both
# smoke jobs at once: smoke:local, and smoke:horovod-reference with the reference config pointed at the
# OpenStack stand-ins (tests/e2e/helpers/openstack.sh: the cloud's APIs, Terraform on PATH, so the job's
# OpenTofu install is skipped) and its Terraform state in a stand-in of GitLab's state API
# (tests/fakes/gitlab_tf_state.py, reached as the project's CI_API_V4_URL with the job token). Both pass
# and leave their JUnit artifacts; the state API holds the OpenStack cluster's state, unlocked and empty
# after destroy. Then both smoke jobs again, killed with SIGKILL mid-deploy, their state folder thrown away
# like a job container: the gc job finds the local cluster on the machine and the OpenStack one on the
# cloud (--spec), and removes both. The GitHub workflow is checked by action-validator
# (github.com/mpalmer/action-validator, its npm build @action-validator/cli, pinned in
# tests/ci/package.json: the workflow schema GitHub's syntax page describes, as published by SchemaStore),
# which must also refuse a copy with a misspelt key; and read as YAML for what no schema says: no secret
# pasted into a script, every secret it uses named in its header.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
source "$HERE/helpers/openstack.sh"
GLCI_DIR="$DDL_SOURCE_DIR/tests/ci"
command -v rsync >/dev/null || fail "rsync is not installed (gitlab-ci-local copies the repository with it)"
if [ ! -x "$GLCI_DIR/node_modules/.bin/gitlab-ci-local" ] || [ ! -x "$GLCI_DIR/node_modules/.bin/action-validator" ]; then
  npm ci --prefix "$GLCI_DIR" --no-audit --no-fund >npm.log 2>&1 || { cat npm.log; fail "npm ci in tests/ci (needs the npm registry once)"; }
fi
DDL_FAKE_NODES="$DDL_BINARY_DIR/tests/fakes/ddl-fake-nodes"
[ -x "$DDL_FAKE_NODES" ] || fail "$DDL_FAKE_NODES is not built"
export DDL_FAKE_NODES
use_ping_playbook # the OpenStack nodes' configure: one ping task (the roles are test_openstack's)

# kill_smoke_jobs [CONFIG]: SIGKILL to the ddl of this suite's smoke jobs (of CONFIG's), found by pid: those
# whose folder is this suite's project. Fails when there was none.
kill_smoke_jobs() {
  local p killed=1
  for p in $(pgrep -x ddl || true); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$WORK/repo" ] && grep -qa "smoke-test.${1:-}" "/proc/$p/cmdline" 2>/dev/null &&
      kill -KILL "$p" 2>/dev/null && killed=0
  done
  return $killed
}
trap 'rc=$?; kill_smoke_jobs || true
      [ -d "$WORK/repo" ] && (cd "$WORK/repo" && glci --variable GC_OLDER_THAN=0s gc >/dev/null 2>&1) || true
      kill ${FAKE_CLOUD_PID:-} ${STATE_API_PID:-} 2>/dev/null || true; (exit $rc); cleanup' EXIT

start_fake_cloud
# GitLab's Terraform state API for project 1217 (gitlab-ci-local's CI_PROJECT_ID), at the server the
# project's remote names (gitlab-ci-local derives CI_SERVER_URL and CI_API_V4_URL from it).
export FAKE_GITLAB_JOB_TOKEN="PLANTED-JobToken-$$-$RANDOM$RANDOM"
python3 "$FAKES/gitlab_tf_state.py" --port-file "$WORK/state-api.port" --project-id 1217 --states "$WORK/tf-states.json" &
STATE_API_PID=$!
for _ in $(seq 100); do [ -s "$WORK/state-api.port" ] && break; sleep 0.05; done
[ -s "$WORK/state-api.port" ] || fail "the GitLab state API stand-in did not start"
glci() { "$GLCI_DIR/node_modules/.bin/gitlab-ci-local" --force-shell-executor --ignore-predefined-vars CI_PIPELINE_SOURCE \
  --variable CI_PIPELINE_SOURCE=schedule --variable "DDL=$DDL" --variable "CI_JOB_TOKEN=$FAKE_GITLAB_JOB_TOKEN" "$@"; }

# A project that holds the template as its .gitlab-ci.yml and the configs it smoke-tests: the reference
# OpenStack config as it is, but for the stand-in cloud (its cloud, flavors, one worker, root logins, no
# GPU driver or services, the tcp backend): its state_backend {type: http} is the file's own.
mkdir -p repo/configs
cp "$DDL_SOURCE_DIR/docs/ci/gitlab-ci.yml" repo/.gitlab-ci.yml
cp "$DDL_SOURCE_DIR/configs/local-4nodes.yaml" repo/configs/
/usr/bin/python3 - "$DDL_SOURCE_DIR/configs/openstack-horovod-reference.yaml" repo/configs/openstack-horovod-reference.yaml <<'PY' ||
import sys, yaml
s = yaml.safe_load(open(sys.argv[1]))
assert s["name"] == "horovod-ref" and s["openstack"]["state_backend"] == {"type": "http"}, s
s["nodes"] = {"master": {"flavor": "m1.small"}, "workers": {"count": 1, "flavor": "g1.small"}}
s["access"] = {"user": "root", "allowed_cidrs": ["10.0.0.0/8"]}
s["openstack"]["cloud"] = "fakecloud"
s["openstack"]["boot_volume_gb"] = 20
s.pop("gpu")
s["services"] = {"nfs": {"enabled": False}, "jupyter": {"enabled": False}, "monitoring": {"enabled": False}}
s["runtime"] = {"backend": "tcp"}
s["hostfile"] = {"format": "openmpi"}
yaml.safe_dump(s, open(sys.argv[2], "w"), sort_keys=False)
PY
  fail "the reference config for the stand-in cloud"
cd repo
git init -q && git add -A && git -c user.email=ci@example.org -c user.name=ci commit -qm "smoke pipeline"
git remote add origin "http://127.0.0.1:$(cat "$WORK/state-api.port")/ml/ddl-smoke.git"

glci smoke:local smoke:horovod-reference >smoke.log 2>&1 || { cat smoke.log; fail "gitlab-ci-local smoke:local smoke:horovod-reference"; }
grep -q "PASS  smoke:local" smoke.log && grep -q "smoke test of cluster local-demo-[0-9]*: PASSED" smoke.log ||
{ cat smoke.log; fail "smoke:local did not pass"; }
grep -q "PASS  smoke:horovod-reference" smoke.log && grep -q "smoke test of cluster horovod-ref-[0-9]*: PASSED" smoke.log ||
{ cat smoke.log; fail "smoke:horovod-reference did not pass"; }
expect_in smoke.log "Terraform/OpenTofu on PATH: $FAKES/\(tofu\|terraform\) (not installing OpenTofu)" \
  "the OpenTofu install was not skipped with the stand-in on PATH"
# (Both jobs run in this one folder, as gitlab-ci-local's shell executor runs them: each job's artifacts
# also take the other's JUnit file when it is there.)
junits=$(ls .gitlab-ci-local/artifacts/*/junit-*.xml 2>/dev/null | xargs -n1 basename | sort -u | wc -l)
[ "$junits" = 2 ] || { find .gitlab-ci-local -maxdepth 3; fail "$junits JUnit files in the artifacts, expected 2"; }
/usr/bin/python3 - .gitlab-ci-local/artifacts/*/junit-*.xml <<'PY' || fail "the JUnit artifacts"
import sys, xml.etree.ElementTree as ET
for f in sys.argv[1:]:
    root = ET.parse(f).getroot()
    assert root.get("failures") == "0" and any(s.get("name") == "checks" for s in root), (f, root.attrib)
PY
cluster=$(grep -o "smoke test of cluster horovod-ref-[0-9]*" smoke.log | head -1 | awk '{print $NF}')
/usr/bin/python3 - "$WORK/tf-states.json" "$cluster" <<'PY' || { cat "$WORK/tf-states.json.log"; fail "the OpenStack job's state in GitLab's state API"; }
import json, sys
st = json.load(open(sys.argv[1]))[sys.argv[2]]
assert st["lock"] is None and st["versions"] >= 2, st
state = json.loads(st["state"])
assert state["resources"] == [], state["resources"]
PY
grep -q "POST /api/v4/projects/1217/terraform/state/$cluster/lock 200" "$WORK/tf-states.json.log" &&
  grep -q "DELETE /api/v4/projects/1217/terraform/state/$cluster/lock 200" "$WORK/tf-states.json.log" ||
  { cat "$WORK/tf-states.json.log"; fail "the OpenStack job's Terraform did not lock its state in GitLab"; }
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); left={k: v for k, v in r.items() if v}; assert not left, left' \
  "$FAKE_OPENSTACK_RESOURCES" || fail "the OpenStack smoke job left resources on the cloud"
# The job token (TF_HTTP_PASSWORD) reaches Terraform through its environment only: no file holds it (state
# folders, Terraform's working folders and log, artifacts, job logs, the state API's own files).
hits=$(grep -rlF "$FAKE_GITLAB_JOB_TOKEN" "$WORK" 2>/dev/null || true)
[ -z "$hits" ] || fail "the job token was written to: $hits"
ok "gitlab-ci-local runs both smoke jobs of docs/ci/gitlab-ci.yml: PASSED, JUnit kept; the OpenStack job skips the OpenTofu install, keeps its Terraform state in GitLab's state API (locked while used, empty after destroy) and leaves nothing on the cloud"

# Both smoke jobs killed mid-deploy (SIGKILL: no destroy), their state folders gone with their container.
glci smoke:local smoke:horovod-reference >killed.log 2>&1 &
job=$!
# Each job's ddl is killed as soon as its cluster is up (its nodes made; waiting for SSH).
deployed() { grep -q '"wait-ssh"' .ddl/$1-*/state.json 2>/dev/null; }
local_cluster="" os_cluster=""
for _ in $(seq 1200); do
  if [ -z "$local_cluster" ] && deployed local-demo; then
    kill_smoke_jobs configs/local-4nodes.yaml || fail "no ddl of smoke:local to kill"
    local_cluster=$(basename "$(ls -d .ddl/local-demo-*)")
  fi
  if [ -z "$os_cluster" ] && deployed horovod-ref; then
    kill_smoke_jobs configs/openstack-horovod-reference.yaml || fail "no ddl of smoke:horovod-reference to kill"
    os_cluster=$(basename "$(ls -d .ddl/horovod-ref-*)")
  fi
  [ -n "$local_cluster" ] && [ -n "$os_cluster" ] && break
  sleep 0.1
done
[ -n "$local_cluster" ] && [ -n "$os_cluster" ] || { cat killed.log; fail "the second smoke jobs did not both deploy"; }
wait $job 2>/dev/null || true
rm -rf .ddl
ip netns list | grep -q "^ddl-$local_cluster-master" || fail "the killed local job left no cluster to find"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert any(s["metadata"].get("ddl_cluster") == sys.argv[2] for s in r["servers"])' \
  "$FAKE_OPENSTACK_RESOURCES" "$os_cluster" || fail "the killed OpenStack job left no servers to find"
glci --variable GC_OLDER_THAN=0s gc >gc.log 2>&1 || { cat gc.log; fail "gitlab-ci-local gc"; }
grep -q "destroying $local_cluster (found on target local" gc.log &&
  grep -q "destroying $os_cluster (found on target openstack" gc.log &&
  [ "$(grep -c "gc: 1 destroyed, 0 failed" gc.log)" = 2 ] || { cat gc.log; fail "the gc job did not remove $local_cluster and $os_cluster"; }
! ip netns list | grep -q "^ddl-$local_cluster-" || fail "namespaces of $local_cluster left after the gc job"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); left={k: v for k, v in r.items() if v}; assert not left, left' \
  "$FAKE_OPENSTACK_RESOURCES" || fail "the gc job left resources of $os_cluster on the cloud"
! pgrep -f "$WORK/nodes/$os_cluster/" >/dev/null || fail "nodes of $os_cluster left after the gc job"
ok "the gc job of the template removes the clusters of killed smoke jobs whose state folder is gone: the local one on this machine, the OpenStack one on the cloud (--spec)"
cd "$WORK"
assert_no_secret

validator="$GLCI_DIR/node_modules/.bin/action-validator"
"$validator" "$DDL_SOURCE_DIR/docs/ci/github-actions.yml" >lint.out 2>&1 || { cat lint.out; fail "action-validator refuses docs/ci/github-actions.yml"; }
sed 's/^\( *\)runs-on:/\1runs-onn:/' "$DDL_SOURCE_DIR/docs/ci/github-actions.yml" >misspelt.yml
grep -q 'runs-onn:' misspelt.yml || fail "no runs-on to misspell in the workflow"
"$validator" misspelt.yml >lint-bad.out 2>&1 && fail "action-validator accepted a job without runs-on"
expect_in lint-bad.out "Additional property 'runs-onn' is not allowed" "action-validator's refusal"
ok "action-validator accepts docs/ci/github-actions.yml and refuses a copy with a misspelt key"
cat >check_workflow.py <<'PY'
import re, sys, yaml
text = open(sys.argv[1]).read()
w = yaml.safe_load(text)
on = w[True] if True in w else w["on"]  # YAML 1.1 reads the key `on` as true
assert "schedule" in on and "workflow_dispatch" in on, on
for name, job in w["jobs"].items():
    assert "runs-on" in job and job["steps"], name
    for step in job["steps"]:
        run = step.get("run", "")
        assert "${{ secrets." not in run, (name, "a secret pasted into a script", run)
header = "".join(l for l in text.splitlines(True)[:next(i for i, l in enumerate(text.splitlines()) if not l.startswith("#"))])
used = set(re.findall(r"\$\{\{\s*secrets\.([A-Za-z0-9_]+)\s*\}\}", text))
assert used, "no secret used"
unnamed = sorted(s for s in used if not re.search(r"\b%s\b" % s, header))
assert not unnamed, ("secrets used but not named in the header comment", unnamed)
smoke = {s.get("uses", "").split("@")[0]: s for s in w["jobs"]["smoke"]["steps"]}
tofu = smoke["opentofu/setup-opentofu"]
assert re.fullmatch(r"opentofu/setup-opentofu@[0-9a-f]{40}", tofu["uses"]), tofu["uses"]  # pinned to a commit
assert tofu["with"]["tofu_wrapper"] is False and "steps.tf.outputs.path == ''" in tofu["if"], tofu
upload = smoke["actions/upload-artifact"]
assert upload["with"]["include-hidden-files"] is True and upload["if"] == "always()", upload
PY
/usr/bin/python3 check_workflow.py "$DDL_SOURCE_DIR/docs/ci/github-actions.yml" || fail "docs/ci/github-actions.yml"
# A copy whose header no longer names TF_HTTP_USERNAME (the workflow still uses it) is refused.
sed '1,/^[^#]/s/TF_HTTP_USERNAME, //' "$DDL_SOURCE_DIR/docs/ci/github-actions.yml" >unnamed.yml
! /usr/bin/python3 check_workflow.py unnamed.yml >unnamed.out 2>&1 || fail "a workflow using a secret its header does not name passed"
expect_in unnamed.out "not named in the header comment.*TF_HTTP_USERNAME" "the unnamed secret's refusal"
ok "the GitHub workflow: triggers and jobs present, no secret pasted into a script, every secret named in its header, OpenTofu pinned and skipped when on PATH, logs uploaded with hidden files"
