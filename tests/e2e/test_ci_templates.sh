#!/usr/bin/env bash
# docs/ci/gitlab-ci.yml run for real by gitlab-ci-local (tests/ci/package.json; 4.65.1 is the newest that
# runs on Debian's Node.js 20: later releases use Set.prototype.union, Node 22) with its shell executor, as
# a scheduled pipeline (CI_PIPELINE_SOURCE=schedule) on a runner where ddl is installed (DDL=...):
# smoke:local passes and leaves its JUnit artifact; a smoke job killed with SIGKILL mid-deploy, whose state
# folder is then thrown away like a job container, leaves a cluster that the gc job finds on the machine
# and removes. The GitHub workflow is checked by action-validator (github.com/mpalmer/action-validator, its
# npm build @action-validator/cli, pinned in tests/ci/package.json: the workflow schema GitHub's syntax page
# describes, as published by SchemaStore), which must also refuse a copy with a misspelt key; and read as
# YAML for what no schema says: no secret pasted into a script.
source "$(dirname "$0")/lib.sh"
GLCI_DIR="$DDL_SOURCE_DIR/tests/ci"
command -v rsync >/dev/null || fail "rsync is not installed (gitlab-ci-local copies the repository with it)"
if [ ! -x "$GLCI_DIR/node_modules/.bin/gitlab-ci-local" ] || [ ! -x "$GLCI_DIR/node_modules/.bin/action-validator" ]; then
  npm ci --prefix "$GLCI_DIR" --no-audit --no-fund >npm.log 2>&1 || { cat npm.log; fail "npm ci in tests/ci (needs the npm registry once)"; }
fi
glci() { "$GLCI_DIR/node_modules/.bin/gitlab-ci-local" --force-shell-executor --ignore-predefined-vars CI_PIPELINE_SOURCE \
  --variable CI_PIPELINE_SOURCE=schedule --variable "DDL=$DDL" "$@"; }

# A project that holds the template as its .gitlab-ci.yml and the config it smoke-tests.
mkdir -p repo/configs
cp "$DDL_SOURCE_DIR/docs/ci/gitlab-ci.yml" repo/.gitlab-ci.yml
cp "$DDL_SOURCE_DIR/configs/local-4nodes.yaml" repo/configs/
cd repo
git init -q && git add -A && git -c user.email=ci@example.org -c user.name=ci commit -qm "smoke pipeline"
git remote add origin https://gitlab.example.org/ml/ddl-smoke.git
trap 'rc=$?; pkill -KILL -f "smoke-test configs/local-4nodes.yaml" 2>/dev/null || true
      glci --variable GC_OLDER_THAN=0s gc >/dev/null 2>&1 || true; (exit $rc); cleanup' EXIT

glci smoke:local >smoke.log 2>&1 || { cat smoke.log; fail "gitlab-ci-local smoke:local"; }
grep -q "PASS  smoke:local" smoke.log && grep -q "smoke test of cluster local-demo-[0-9]*: PASSED" smoke.log ||
  { cat smoke.log; fail "smoke:local did not pass"; }
junit=$(ls .gitlab-ci-local/artifacts/*/junit-*.xml 2>/dev/null | head -1)
[ -n "$junit" ] || { find .gitlab-ci-local -maxdepth 3; fail "no JUnit artifact"; }
python3 - "$junit" <<'PY' || fail "the JUnit artifact"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.get("failures") == "0" and any(s.get("name") == "checks" for s in root), root.attrib
PY
ok "gitlab-ci-local runs smoke:local of docs/ci/gitlab-ci.yml: PASSED, JUnit artifact kept"

# A smoke job killed mid-deploy (SIGKILL: no destroy), its state folder gone with its container.
glci smoke:local >killed.log 2>&1 &
job=$!
cluster=""
for _ in $(seq 600); do
  cluster=$(ls .ddl 2>/dev/null | grep '^local-demo-' | head -1 || true)
  [ -n "$cluster" ] && grep -q '"wait-ssh"' ".ddl/$cluster/state.json" 2>/dev/null && break
  sleep 0.1
done
[ -n "$cluster" ] || { cat killed.log; fail "the second smoke job deployed nothing"; }
pkill -KILL -f "smoke-test configs/local-4nodes.yaml" || fail "no ddl to kill"
wait $job 2>/dev/null || true
rm -rf .ddl
ip netns list | grep -q "^ddl-$cluster-master" || fail "the killed job left no cluster to find"
glci --variable GC_OLDER_THAN=0s gc >gc.log 2>&1 || { cat gc.log; fail "gitlab-ci-local gc"; }
grep -q "destroying $cluster (found on target local" gc.log && grep -q "gc: 1 destroyed, 0 failed" gc.log ||
  { cat gc.log; fail "the gc job did not remove $cluster"; }
! ip netns list | grep -q "^ddl-$cluster-" || fail "namespaces of $cluster left after the gc job"
ok "the gc job of the template removes the cluster of a killed smoke job whose state folder is gone"

validator="$GLCI_DIR/node_modules/.bin/action-validator"
"$validator" "$DDL_SOURCE_DIR/docs/ci/github-actions.yml" >lint.out 2>&1 || { cat lint.out; fail "action-validator refuses docs/ci/github-actions.yml"; }
sed 's/^\( *\)runs-on:/\1runs-onn:/' "$DDL_SOURCE_DIR/docs/ci/github-actions.yml" >misspelt.yml
grep -q 'runs-onn:' misspelt.yml || fail "no runs-on to misspell in the workflow"
"$validator" misspelt.yml >lint-bad.out 2>&1 && fail "action-validator accepted a job without runs-on"
grep -q "Additional property 'runs-onn' is not allowed" lint-bad.out || { cat lint-bad.out; fail "action-validator's refusal"; }
ok "action-validator accepts docs/ci/github-actions.yml and refuses a copy with a misspelt key"
/usr/bin/python3 - "$DDL_SOURCE_DIR/docs/ci/github-actions.yml" <<'PY' || fail "docs/ci/github-actions.yml"
import sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
on = w[True] if True in w else w["on"]  # YAML 1.1 reads the key `on` as true
assert "schedule" in on and "workflow_dispatch" in on, on
for name, job in w["jobs"].items():
    assert "runs-on" in job and job["steps"], name
    for step in job["steps"]:
        run = step.get("run", "")
        assert "${{ secrets." not in run, (name, "a secret pasted into a script", run)
PY
ok "the GitHub workflow: triggers and jobs present, no secret pasted into a script"
