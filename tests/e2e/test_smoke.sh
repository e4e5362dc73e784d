#!/usr/bin/env bash
# ddl smoke-test on a local 4-node cluster: a passing run leaves nothing behind; a run with a node's
# sshd killed after deploy records exactly that failure in the JUnit file, destroys the cluster anyway,
# and sends a notice to a real SMTP server (aiosmtpd, AUTH required) and to a webhook receiver, both on
# loopback. A planted SMTP password (once from DDL_SMTP_PASSWORD_FILE, once from DDL_SMTP_PASSWORD) must reach
# the server and nothing else: not the state, logs, JUnit or output, not any process's argv, not the
# environment of ddl's subprocesses. DDL_E2E_PREFIX prefixes the cluster name (concurrent runs).
source "$(dirname "$0")/lib.sh"
helpers="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/helpers"
C=${DDL_E2E_PREFIX:-}smoke
# The checks' list comes last: a later run appends a check to it.
spec "$C" 4 "  bandwidth: 1gbit" "services:" "  nfs: {enabled: false}" \
  "cost: {per_node_hour: 3.6, per_gpu_hour: 10, currency: EUR}" \
  "smoke:" "  checks:" "    - {name: cpus, run: nproc, on: all, timeout: 20}"

# --name-suffix: this run's cluster is $C-p1 (two pipelines at once deploy two clusters).
CLUSTERS+=("$C-p1")
ddl smoke-test "$C.yaml" --junit pass.xml --history hist.jsonl --name-suffix p1 >pass.out 2>pass.err || { cat pass.out pass.err; fail "passing smoke test"; }
expect_in pass.out "smoke test of cluster $C-p1: PASSED" "summary"
assert_gone "$C-p1"
expect_in pass.out "ok   checks   allreduce (all slots).*4 ranks, 16 MiB exact, busbw" "allreduce check"
grep -Eq "ok   checks   training \(mlp_trainer\) .*loss [0-9.]+ -> [0-9.]+ in 40 steps \(must reach [0-9.]+ or less\)" pass.out ||
  { cat pass.out; fail "training check"; }
assert_gone "$C"
python3 - pass.xml <<'PY' || fail "JUnit of the passing run"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites" and root.get("failures") == "0", root.attrib
suites = {s.get("name"): s for s in root}
assert list(suites) == ["deploy", "checks", "destroy"], list(suites)
names = [t.get("name") for t in suites["checks"]]
assert names[:4] == ["ssh (master)", "ssh (worker1)", "ssh (worker2)", "ssh (worker3)"], names
assert suites["checks"].get("skipped") == "8", suites["checks"].attrib  # 6 built-in, 2 regression (no history yet)
assert "allreduce in containers" in names, names  # skipped: the spec sets no runtime.image
assert names[-6:-2] == ["cpus (master)", "cpus (worker1)", "cpus (worker2)", "cpus (worker3)"], names
PY
python3 - hist.jsonl <<'PY' || fail "the history line of the passing run"
import json, sys
[run] = [json.loads(l) for l in open(sys.argv[1])]
assert run["passed"] and run["figures"]["busbw_gbs"] > 0 and run["figures"]["deploy_s"] > 0, run
assert run["cluster"].endswith("-p1"), run
f = run["figures"]  # 4 nodes for the seconds the run took, no GPU, 3.6 EUR a node-hour
assert 0 < f["node_hours"] < 0.5 and f["gpu_hours"] == 0 and run["currency"] == "EUR", run
assert abs(f["cost"] - 3.6 * f["node_hours"]) < 1e-9, run
PY
expect_in pass.out "usage: 4 nodes, 0 GPUs: .* node-hours, 0.00 GPU-hours (cost .* EUR so far" "usage line"
xmllint --noout --schema "$helpers/junit.xsd" pass.xml || fail "JUnit does not match the schema"
ok "passing smoke test: summary, JUnit (schema-valid), nothing left"

smtp_port=$((20000 + RANDOM % 20000)); hook_port=$((smtp_port + 1))
smtp_secret="PLANTED-smtp-$$-$RANDOM$RANDOM"
printf '%s\n' "$smtp_secret" >smtp.pass && chmod 600 smtp.pass
/usr/bin/python3 "$helpers/smtp_auth_server.py" "$smtp_port" ddl-ci smtp.pass mail.log 2>smtp.err &
smtp_pid=$!
/usr/bin/python3 "$helpers/webhook_receiver.py" "$hook_port" hook.jsonl &
hook_pid=$!
trap 'rc=$?; kill $smtp_pid $hook_pid 2>/dev/null || true; (exit $rc); cleanup' EXIT
smtp_up() { listening "$smtp_port" || { cat smtp.err; false; }; } # its errors, should it not start
wait_for 30 "the SMTP stand-in to listen on port $smtp_port" smtp_up
wait_for 30 "the webhook stand-in to listen on port $hook_port" listening "$hook_port"
export DDL_SMTP_URL="smtp://127.0.0.1:$smtp_port" DDL_SMTP_FROM="ddl-ci@example.org" DDL_SMTP_USER=ddl-ci
secret_watch

# SIGTERM in the middle of the deploy: the smoke test still destroys the cluster, fails, and mails that.
DDL_SMTP_PASSWORD_FILE="$WORK/smtp.pass" "$DDL" --state-dir "$STATE" smoke-test "$C.yaml" --junit term.xml \
  --notify mailto:oncall@example.org >term.out 2>&1 &
smoke_pid=$!
WAIT_EVERY=0.05 wait_for 60 "the smoke test's deploy to reach provision" grep -q '"provision"' "$STATE/$C/state.json"
kill -TERM "$smoke_pid"
set +e; wait "$smoke_pid"; rc=$?; set -e
[ $rc != 0 ] || fail "interrupted smoke test exited 0"
expect_in term.out "ok   destroy  destroy" "no destroy after SIGTERM"
assert_gone "$C"
for _ in $(seq 50); do grep -q "to oncall@example.org authenticated=True" mail.log && break; sleep 0.1; done
grep -q "to oncall@example.org authenticated=True" mail.log || { cat term.out mail.log; fail "no authenticated mail after SIGTERM (password file)"; }
ok "SIGTERM mid-deploy: cluster destroyed anyway, run failed, notice mailed with AUTH (password file)"

# The hook kills worker2's sshd and keeps a copy of the cluster's state folder as it is at the checks
# (logs, rendered files, Ansible's folder), for the secret sweep: the run removes it with the cluster.
cat >before_checks.sh <<EOF
#!/bin/bash
cp -a "$STATE/$C" "$WORK/state-at-checks" 2>/dev/null || true
pkill -KILL -f "$STATE/$C/nodes/worker2/sshd_config"
EOF
chmod +x before_checks.sh
# A user check failing on purpose, and a planted history in which every deploy took 1 s: this run's deploy
# time is a regression against their median.
printf '%s\n' '    - {name: fails on purpose, run: "echo planted failure >&2; exit 4", on: master}' >>"$C.yaml"
for i in 1 2 3 4 5; do printf '{"time": "2026-11-0%dT00:00:00Z", "figures": {"deploy_s": 1.0, "busbw_gbs": 0.001}}\n' "$i"; done >planted.jsonl
set +e
DDL_SMTP_PASSWORD="$smtp_secret" \
  ddl smoke-test "$C.yaml" --junit fail.xml --before-checks "$WORK/before_checks.sh" --history planted.jsonl \
  --notify mailto:maintainers@example.org --notify "http://127.0.0.1:$hook_port/hook" >fail.out 2>fail.err
rc=$?
set -e
[ $rc = 1 ] || { cat fail.out fail.err; fail "failing smoke test exit $rc"; }
expect_in fail.out "FAIL checks   ssh (worker2)" "summary does not name ssh (worker2)"
assert_gone "$C"
python3 - fail.xml <<'PY' || fail "JUnit of the failing run"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
failed = [(s.get("name"), t.get("name")) for s in root for t in s if t.find("failure") is not None]
assert ("checks", "ssh (worker2)") in failed, failed
assert ("checks", "fails on purpose (master)") in failed and ("checks", "regression (deploy time)") in failed, failed
assert all(n in ("ssh (worker2)", "allreduce (all slots)", "training (mlp_trainer)", "cpus (worker2)",
                 "fails on purpose (master)", "regression (deploy time)") or
           (n.startswith("doctor: ") and "worker2" in n) for _, n in failed), failed
cases = {t.get("name"): t for s in root for t in s}
assert cases["cpus (master)"].find("failure") is None, "a passing user check failed"
assert "exit 4, expected 0: planted failure" in cases["fails on purpose (master)"].find("failure").get("message"), \
    cases["fails on purpose (master)"].find("failure").attrib
assert "against a median of 1.0 s over the last 5 run(s)" in cases["regression (deploy time)"].find("failure").get("message")
destroy = [t for s in root if s.get("name") == "destroy" for t in s]
assert destroy and destroy[0].find("failure") is None, "destroy did not pass"
PY
xmllint --noout --schema "$helpers/junit.xsd" fail.xml || fail "JUnit of the failing run does not match the schema"
ok "failing check recorded in JUnit, cluster destroyed anyway"
for _ in $(seq 50); do grep -q "ssh (worker2)" mail.log && [ -s hook.jsonl ] && break; sleep 0.1; done
expect_in mail.log "Subject: \[ddl\] smoke test FAILED: cluster $C" "no mail at the SMTP server"
expect_in mail.log "to maintainers@example.org authenticated=True" "mail recipient or AUTH"
python3 -c 'import json,sys; j=json.loads(open(sys.argv[1]).readline()); assert j["status"]=="failed" and any("ssh (worker2)" in c for c in j["failed_checks"]), j' hook.jsonl \
  || { cat hook.jsonl; fail "webhook notice"; }
ok "notice arrived by SMTP and webhook"
[ -d state-at-checks/logs ] || fail "the before-checks hook did not copy the state folder"
secret_sweep "SMTP password" "$smtp_secret" '/smtp\.pass$' "$WORK"
