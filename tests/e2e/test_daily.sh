#!/usr/bin/env bash
# The researcher's daily loop (issue 38) on 2 namespace nodes: the spec's workdir synced at deploy with
# its .gitignore honoured, setup run once per node and again only when what it names changed, a failing
# setup named by node and line; `ddl run -d` jobs queued on the master that outlive the controller, their
# logs per rank, a cancelled job leaving no process, a job queued from a shell on the master; `ddl cp`;
# bad input (exit 2, one line); the secret from the controller's environment in no file.
source "$(dirname "$0")/lib.sh"
use_ping_playbook
command -v rsync >/dev/null || fail "rsync missing (scripts/install-deps.sh installs it)"

mkdir -p code/data
cat >code/train.py <<'PY'
import os, sys, time
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0)
print("rank %s of %s in %s lr=%s token_len=%d" % (os.environ["DDL_RANK"], os.environ["DDL_SIZE"], os.getcwd(),
      os.environ["LR"], len(os.environ.get("TOKEN", ""))), flush=True)
PY
echo numpy >code/requirements.txt
printf 'big.bin\n' >code/.gitignore
printf 'data/\n' >code/.ddlignore
head -c 8M /dev/zero >code/big.bin
echo x >code/data/raw.csv
cat >daily.yaml <<EOF2
apiVersion: ddl/v1
name: daily
target: local
local: {nodes: 2}
workdir: code
setup:
  - cat requirements.txt > /dev/null
  - |
    echo "\$DDL_NODE" >> $WORK/setup.count
    test ! -e fail-setup || /usr/bin/python3 -m pip install --no-index -r requirements.txt
  - |
    test ! -e leak-setup || echo "token=\$TOKEN"
    test ! -e leak-setup
env:
  LR: "0.1"
  TOKEN: \${DAILY_TOKEN}
EOF2
CLUSTERS+=(daily)
export DAILY_TOKEN="tok-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
ddl deploy daily.yaml >d.log 2>&1 || { cat d.log; fail "deploy with a workdir"; }
expect_in d.log "workdir synced to /shared/work" "deploy did not sync the workdir"
for node in master worker1; do
  ddl exec --cluster daily --nodes $node -- test -f /shared/work/train.py || fail "train.py not on $node"
  ddl exec --cluster daily --nodes $node -- test -e /shared/work/big.bin 2>/dev/null && fail "the .gitignored big.bin reached $node"
  ddl exec --cluster daily --nodes $node -- test -e /shared/work/data 2>/dev/null && fail "the .ddlignored data/ reached $node"
done
[ "$(sort setup.count | tr '\n' ' ')" = "master worker1 " ] || fail "setup ran: $(cat setup.count)"
perm=$(ddl exec --cluster daily --nodes master -- sh -c 'stat -c %a /var/lib/ddl/setup /var/lib/ddl/setup/daily-*.log | sort -u | paste -sd,')
[ "$perm" = "[master] 600,700" ] || fail "the setup logs are not 0600 in a 0700 folder: $perm"
ok "deploy: the workdir on every node without what .gitignore/.ddlignore name; setup ran once per node; its logs 0600 in a 0700 folder"

ddl deploy daily.yaml >d2.log 2>&1 || { cat d2.log; fail "second deploy"; }
ddl sync daily >s.log 2>&1 || { cat s.log; fail "sync"; }
[ "$(wc -l <setup.count)" = 2 ] || fail "setup ran again with nothing changed: $(cat setup.count)"
expect_in s.log "setup unchanged on master, worker1" "sync did not say setup was unchanged"
echo torch >>code/requirements.txt
ddl --output json sync daily >s2.json 2>s2.log || { cat s2.log; fail "sync after requirements.txt changed"; }
[ "$(sort setup.count | tr '\n' ' ')" = "master master worker1 worker1 " ] || fail "setup after a change: $(cat setup.count)"
python3 - s2.json <<'PY' || fail "sync's JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["remote_dir"] == "/shared/work" and j["nodes"] == ["master"] and j["changed"] >= 1, j
assert j["setup"] == {"ran": ["master", "worker1"], "unchanged": []}, j
PY
ok "setup not run again by a second deploy or sync; run again after a file it names changed (--output json)"

rc=0
touch code/fail-setup
ddl sync daily >f.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat f.log; fail "a failing setup exited $rc, not 2"; }
expect_in f.log "setup\[1\] line 2 (test ! -e fail-setup || /usr/bin/python3 -m pip install --no-index -r requirements.txt) failed on nodes master, worker1 (exit 1); their logs /var/lib/ddl/setup/daily-<node>.log end (the same on each):" "the failure of both nodes not said once, naming them and the line"
# Debian's Python refuses pip outside a virtual environment (PEP 668): what a user's setup meets first.
expect_in f.log "externally-managed-environment" "the log's end does not show pip's PEP 668 refusal"
[ "$(grep -c "failed on node" f.log)" = 1 ] || { cat f.log; fail "the same failure of two nodes said more than once"; }
# A failed setup is the cluster's state (issue 52): status and list say so, run refuses with the fix.
ddl status daily --no-check >fs.log 2>&1 || true
expect_in fs.log "^setup failed: .*setup\[1\] line 2 (test ! -e fail-setup || /usr/bin/python3 -m pip install --no-index -r requirements.txt) failed on node" "status does not show the failed setup"
ddl list >fl.log 2>&1 || true
expect_in fl.log "setup failed" "list does not show the failed setup"
rc=0
ddl run -- true >fr.log 2>&1 || rc=$?
expect_rc "$rc" 2 fr.log "the setup failed: .*setup\[1\] line 2 (test ! -e fail-setup || /usr/bin/python3 -m pip install --no-index -r requirements.txt) failed on node" "run on a cluster whose setup failed"
# deploy: the nodes exist and one step failed, so 1 (the README's table), not 2 ("nothing was changed").
rc=0
ddl deploy daily.yaml >fd.log 2>&1 || rc=$?
expect_rc "$rc" 1 fd.log "setup\[1\] line 2 (test ! -e fail-setup || /usr/bin/python3 -m pip install --no-index -r requirements.txt) failed on nodes master, worker1" "deploy of a cluster whose setup fails"
rc=0
env -u DAILY_TOKEN "$DDL" --state-dir "$STATE" sync daily >u.log 2>&1 || rc=$?
[ $rc = 2 ] && [ "$(wc -l <u.log)" = 1 ] && grep -q 'env.TOKEN is read from \$DAILY_TOKEN, which is not set here' u.log ||
  { cat u.log; fail "sync without DAILY_TOKEN: exit $rc"; }
rm code/fail-setup
ddl sync daily >s3.log 2>&1 || { cat s3.log; fail "sync after the failure"; }
expect_in s3.log "setup ran on master, worker1" "setup did not run again after it failed"
ddl status daily --no-check 2>&1 | grep -q "^setup failed" && fail "status still shows the setup failed after it ran"
ok "a failing setup exits 2 (sync) or 1 (deploy) naming node, program, line and its text, is shown by status and list, refused by run; a missing env variable exits 2 in one line"

# A failing setup whose output holds the secret the spec's env: read from here: ddl quotes the end of the
# setup's log in its message, and the secret in it is masked on stdout (the JSON error object), on stderr
# and in every file ddl wrote (issue 51).
touch code/leak-setup
rc=0
ddl --output json sync daily >leak.json 2>leak.err || rc=$?
[ $rc = 2 ] || { cat leak.err; fail "a setup that printed the secret and failed exited $rc, not 2"; }
expect_in leak.err "setup\[2\] line 2 (test ! -e leak-setup) failed on nodes\? master" "the leaking setup's failure not named"
expect_in leak.err "token=\*\*\*" "the setup's output not quoted with the secret masked"
python3 - leak.json <<'PY' || { cat leak.json; fail "the JSON error object of a failing setup"; }
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert e["command"] == "sync" and e["exit_code"] == 2 and "token=***" in e["message"], e
PY
for f in leak.json leak.err; do
  [ "$(grep -cF -- "$DAILY_TOKEN" "$f" || true)" = 0 ] || fail "the secret printed by a failing setup reached ddl's $f"
done
grep -rlF -- "$DAILY_TOKEN" "$STATE" && fail "the secret printed by a failing setup is in a file ddl wrote"
rm code/leak-setup
ddl sync daily >s5.log 2>&1 || { cat s5.log; fail "sync after the leaking setup"; }
ok "a failing setup that printed an env: secret: 0 hits on stdout (JSON), stderr and the files ddl wrote; *** in its place"

# A sync killed after its files landed but before it recorded success: not taken for synced.
echo "# changed" >>code/train.py
rc=0
DDL_TEST_KILL_AT=sync:master:copied "$DDL" --state-dir "$STATE" sync daily >k.log 2>&1 || rc=$?
[ $rc = 137 ] || { cat k.log; fail "sync was not killed at sync:master:copied (exit $rc)"; }
rc=0
ddl run -d -- python3 train.py >nr.log 2>&1 || rc=$?
[ $rc = 2 ] && [ "$(wc -l <nr.log)" = 1 ] && grep -q "the workdir is not synced on master" nr.log ||
  { cat nr.log; fail "run -d after a killed sync: exit $rc"; }
ddl sync daily >s4.log 2>&1 || { cat s4.log; fail "sync after the killed one"; }
ok "a sync killed before it recorded success is not taken for synced (run -d refuses, exit 2); the next sync completes it"

id1=$(ddl run -d --name first -- python3 train.py 3) || fail "run -d"
id2=$(ddl run -d --name second -- python3 train.py 0) || fail "second run -d"
[ "$id1" = 1 ] && [ "$id2" = 2 ] || fail "job ids $id1 $id2"
ddl logs "$id1" -f >follow.log 2>&1 &
follower=$!
sleep 0.5
kill -9 $follower
wait $follower 2>/dev/null || true
jobs_ended() {
  ddl --output json jobs >jobs.json &&
    python3 -c 'import json,sys; sys.exit(0 if all(j["state"] in ("succeeded","failed","cancelled") for j in json.load(open("jobs.json"))) else 1)'
}
wait_for 60 "jobs $id1 and $id2 to end" jobs_ended
python3 - jobs.json <<'PY' || { cat jobs.json; fail "the jobs' records"; }
import json, sys
j = {x["id"]: x for x in json.load(open(sys.argv[1]))}
a, b = j[1], j[2]
assert a["state"] == "succeeded" and a["exit_code"] == 0 and a["ranks"] == 2 and a["name"] == "first", a
assert a["command"] == ["python3", "train.py", "3"] and a["origin"] == "ddl run -d", a
assert b["state"] == "succeeded" and b["started"] >= a["ended"], (a, b)
PY
ddl logs "$id1" >l1.log || fail "logs"
grep -q "^\[0\] rank 0 of 2 in /shared/work lr=0.1 token_len=${#DAILY_TOKEN}$" l1.log &&
  expect_in l1.log "^\[1\] rank 1 of 2 in /shared/work lr=0.1 token_len=${#DAILY_TOKEN}$" "logs of every rank"
out=$(ddl logs "$id1" --rank 1)
[ "$out" = "[1] rank 1 of 2 in /shared/work lr=0.1 token_len=${#DAILY_TOKEN}" ] || fail "logs --rank 1: $out"
ddl jobs | grep -q "^1    first            succeeded  2 " || { ddl jobs; fail "ddl jobs' table"; }
ok "run -d: jobs ran to the end with the controller's follower killed; the second queued behind the first; logs per rank; env and the secret reached every rank"

# Numbers no other suite sleeps for, and anchored: the suites beside this one (test_daily_containers'
# `sleep 313`, and the `ddl exec ... pgrep` lines that name them) are processes of this machine too.
ranks_of() { [ "$(pgrep -fc "^sleep $1\$" || true)" = "$2" ]; }
id3=$(ddl run -d --name long -- sleep 3131) || fail "run -d long"
wait_for 60 "the long job's 2 ranks to start" ranks_of 3131 2
[ "$(ddl --output json cancel "$id3")" = "{\"id\":3,\"state\":\"cancelled\"}" ] || fail "cancel"
pgrep -af '^sleep 3131$' && fail "a rank of the cancelled job still runs"
pgrep -af "ddl-run _supervise $id3\$" && fail "the cancelled job's supervisor still runs"
ddl --output json jobs | python3 -c 'import json,sys; j=[x for x in json.load(sys.stdin) if x["id"]==3][0]; sys.exit(j["state"]!="cancelled")' ||
  fail "the cancelled job is not recorded as cancelled"
ok "cancel stops every rank on every node and records the job cancelled"

id4=$(ddl run -d --name orphan -- sleep 3141) || fail "run -d orphan"
wait_for 60 "the orphan job's 2 ranks to start" ranks_of 3141 2
kill -9 "$(pgrep -f "ddl-run _supervise $id4\$")"
wait_for 60 "the ranks to end with their killed supervisor" ranks_of 3141 0
id5=$(ddl run -d --name next -- true) || fail "run -d next"
for _ in $(seq 50); do ddl jobs | grep -q "^$id5 .*succeeded" && break; sleep 0.2; done
ddl --output json jobs | python3 -c '
import json, sys
j = {x["id"]: x for x in json.load(sys.stdin)}
sys.exit(not (j[4]["state"] == "failed" and j[4]["detail"] == "its supervisor is gone" and j[5]["state"] == "succeeded"))' ||
  { ddl jobs; fail "the job whose supervisor died is not failed, or the queue stalled behind it"; }
ok "a job whose supervisor was killed: its ranks stop on every node, it is recorded failed, the next job runs"

ddl exec --cluster daily --nodes master -- sh -c 'cd /shared/work && /opt/ddl/bin/ddl-run --name fromshell --follow -- env LR=0.2 python3 train.py 0' \
  >shell.log 2>&1 || { cat shell.log; fail "ddl-run from a shell on the master"; }
ddl --output json jobs | python3 -c '
import json, sys
j = [x for x in json.load(sys.stdin) if x["name"] == "fromshell"]
sys.exit(not (j and j[0]["state"] == "succeeded" and j[0]["origin"] == "ddl-run"))' ||
  { ddl jobs; fail "the job from the master's shell is not in ddl jobs"; }
expect_in shell.log "rank 1 of 2 in /shared/work lr=0.2" "the shell's job output"
ok "a job queued with ddl-run from a shell on the master is in ddl jobs"

# --max-restarts on a detached job: the master starts a failed job again, DDL_RESTART_COUNT one higher.
idr=$(ddl run -d --name retry --max-restarts 2 -- \
  bash -c 'echo attempt $DDL_RESTART_COUNT ckpt=${DDL_CHECKPOINT_DIR:-none}; [ "$DDL_RESTART_COUNT" -ge 1 ]') ||
  fail "run -d --max-restarts"
idf=$(ddl run -d --name hopeless --max-restarts 1 -- bash -c 'exit 4') || fail "run -d hopeless"
for _ in $(seq 100); do ddl jobs | grep -q "^$idf .*failed" && break; sleep 0.2; done
ddl --output json jobs | python3 -c '
import json, sys
j = {x["id"]: x for x in json.load(sys.stdin)}
r, f = j['"$idr"'], j['"$idf"']
sys.exit(not (r["state"] == "succeeded" and r["restarts"] == 1 and f["state"] == "failed" and
              f["exit_code"] == 4 and f["restarts"] == 1))' || { ddl jobs; fail "the restarted jobs' records"; }
ddl logs "$idr" --rank 0 >retry.log 2>&1 || { cat retry.log; fail "logs of the restarted job"; }
expect_in retry.log "^\[0\] attempt 0 ckpt=/shared/checkpoints/daily$" "the first attempt, with the checkpoint folder"
expect_in retry.log "^\[0\] --- ddl-run: rank [01] exited 1; restart 1 of 2 at " "the restart in the log"
expect_in retry.log "^\[0\] attempt 1 ckpt=" "the second attempt"
ddl jobs >jobs.txt
expect_in jobs.txt "^$idf .* 4 (rank [01]), restarted 1/1 " "the table names the restarts"
rc=0
ddl run -d --max-restarts 1 --restart-on node-fault -- true >nf.log 2>&1 || rc=$?
expect_rc "$rc" 2 nf.log "restarts on any failure (its master runs no health checks)" "run -d --restart-on node-fault is refused"
ok "run -d --max-restarts: a failed job starts again on the master (DDL_RESTART_COUNT, DDL_CHECKPOINT_DIR), up to N times"

# One word after -- is a program's name for run -d as for a foreground run (no shell in between): no such
# program is on the master, so it is refused before it is queued (exit 2), as a missing script is.
rc=0
ddl run -d --np 1 --name oneword -- 'echo $(id -u)' >oneword.log 2>&1 || rc=$?
expect_rc "$rc" 2 oneword.log 'echo \$(id -u): no such program on the master' "run -d of one word that is no program"
rc=0
ddl run -d -- python3 no_such_script.py >noscript.log 2>&1 || rc=$?
expect_rc "$rc" 2 noscript.log "no_such_script.py: no such file in the job's folder" "run -d of a missing script"
# The node's sshd has PATH (and the PWD its init.sh's /bin/sh exports) as its whole environment: none of
# ddl's (DAILY_TOKEN is in it).
# sshd writes its process title over its argv and environment (setproctitle), so the names cannot be read
# back; the size of the block it started with can: PATH and PWD alone are well under 256 bytes, this
# shell's environment (DAILY_TOKEN in it) is not.
[ "$(env | wc -c)" -gt 256 ] || fail "this shell's environment is too small to tell"
for pid in $(cat "$STATE"/daily/nodes/*/sshd.pid); do
  size=$(wc -c </proc/"$pid"/environ)
  [ "$size" -lt 256 ] || fail "sshd $pid started with an environment of $size bytes (PATH and PWD are less)"
done
ok "run -d takes one word as a program's name, as ddl run does; each node's sshd starts with PATH only"

ddl run -- python3 /shared/work/train.py 0 >fg.log 2>&1 || { cat fg.log; fail "foreground run"; }
expect_in fg.log "^\[1\] rank 1 of 2 in .* lr=0.1 token_len=0$" "the spec's literal env (not the secret) in a foreground run"
ddl --output json jobs | python3 -c '
import json, sys
j = [x for x in json.load(sys.stdin) if x["origin"] == "ddl run"]
sys.exit(not (len(j) == 1 and j[0]["state"] == "succeeded" and j[0]["exit_code"] == 0))' ||
  { ddl jobs; fail "the foreground run is not recorded in ddl jobs"; }
ok "a foreground ddl run gets the spec's literal env (not the secret read from the environment) and is recorded in ddl jobs"

# One meaning of `ddl run`: foreground ranks start in the synced workdir with DDL_WORKDIR, as a detached
# job's do, so a script named relative to the workdir runs as written (the README's examples).
ddl run -- python3 train.py 0 >fgrel.log 2>&1 || { cat fgrel.log; fail "a foreground run of a script by its workdir path"; }
expect_in fgrel.log "^\[1\] rank 1 of 2 in " "a foreground run of train.py from the workdir"
ddl run --np 1 -- sh -c 'echo "pwd=$(pwd) wd=$DDL_WORKDIR"' >fgpwd.log 2>&1 || { cat fgpwd.log; fail "foreground pwd"; }
idp=$(ddl run -d --np 1 -- sh -c 'echo "pwd=$(pwd) wd=$DDL_WORKDIR"') || fail "run -d pwd"
wait_for 60 "job $idp to succeed" job_in_state "$idp" succeeded
ddl logs "$idp" >dpwd.log
[ "$(sed 's/^\[0\] //' fgpwd.log)" = "pwd=/shared/work wd=/shared/work" ] || { cat fgpwd.log; fail "foreground folder and DDL_WORKDIR"; }
[ "$(sed 's/^\[0\] //' dpwd.log)" = "$(sed 's/^\[0\] //' fgpwd.log)" ] || { cat dpwd.log fgpwd.log; fail "detached and foreground start apart"; }
ok "foreground and detached ranks start in the synced workdir with the same DDL_WORKDIR"

# The controller of a foreground run killed: the master's hold sees its channel close and records the run
# failed instead of leaving it running.
"$DDL" --state-dir "$STATE" run -- sleep 30 >fgk.log 2>&1 &
fgpid=$!
fg_state() {
  ddl --output json jobs | python3 -c '
import json, sys
j = [x for x in json.load(sys.stdin) if x["origin"] == "ddl run" and x["command"] == ["sleep", "30"]]
print(j[0]["state"] + ":" + j[0].get("detail", "") if j else "none")'
}
for _ in $(seq 100); do [ "$(fg_state)" = "running:" ] && break; sleep 0.2; done
[ "$(fg_state)" = "running:" ] || { cat fgk.log; fail "the foreground run is not recorded as running: $(fg_state)"; }
kill -9 $fgpid
wait $fgpid 2>/dev/null || true
for _ in $(seq 50); do [ "$(fg_state)" != "running:" ] && break; sleep 0.2; done
[[ "$(fg_state)" == "failed:its controller is gone"* ]] ||
  { ddl jobs; fail "the foreground run whose controller was killed: $(fg_state)"; }
ok "a foreground run whose controller is killed is recorded failed (its controller is gone), not left running"

ddl cp daily:/shared/work/train.py back.py && cmp back.py code/train.py || fail "cp from the cluster"
echo result >up.txt
ddl cp up.txt daily:/shared/up.txt && [ "$(ddl exec --cluster daily --nodes worker1 -- cat /shared/up.txt)" = "[worker1] result" ] ||
  fail "cp to the cluster"
ok "cp both ways over the cluster's keys"

# The edited spec is the truth (issue 52): a setup added to the spec is named by every command that opens
# the cluster, listed by plan, refused by sync (the deployed setup is never run in its place) and applied by
# deploy.
sed -i "s|^setup:\$|setup:\n  - echo \"\$DDL_NODE\" >> $WORK/new-setup.ran|" daily.yaml
ddl status daily >st.log 2>st.err || { cat st.err; fail "status with an edited spec"; }
expect_in st.err "daily.yaml changed since deploy: setup; .ddl deploy .*daily.yaml. applies it" "status did not name the edited setup"
ddl plan daily.yaml >plan.log 2>&1 || { cat plan.log; fail "plan of the edited spec"; }
expect_in plan.log "update config setup\[0\]" "plan did not list the edited setup"
rc=0
ddl sync daily >sd.log 2>&1 || rc=$?
expect_rc "$rc" 2 sd.log "sync runs the deployed ones" "sync of an edited setup"
[ -e new-setup.ran ] && fail "sync ran the edited setup"
ddl deploy daily.yaml >dd.log 2>&1 || { cat dd.log; fail "deploy of the edited setup"; }
[ "$(sort new-setup.ran | tr '\n' ' ')" = "master worker1 " ] || fail "deploy did not run the new setup on every node: $(cat new-setup.ran 2>&1)"
ddl status daily >/dev/null 2>st2.err
grep -q "changed since deploy" st2.err && { cat st2.err; fail "still named as changed after deploy"; }
ok "an edited setup: named by status, listed by plan, refused by sync (exit 2, naming deploy), applied by deploy"

# Clusters from anywhere, and next steps (issue 52): another folder finds it through DDL_STATE_DIR, or is
# told which state folder deployed it; a mistyped name gets "did you mean"; an undeployed spec gets `ddl
# deploy FILE`.
mkdir -p elsewhere home
(cd elsewhere && DDL_STATE_DIR="$STATE" "$DDL" status daily >../sw.log 2>&1) || { cat sw.log; fail "status through DDL_STATE_DIR"; }
rc=0
(cd elsewhere && HOME="$WORK/home" "$DDL" status daily >../se.log 2>&1) || rc=$?
expect_rc "$rc" 2 se.log "no cluster \"daily\" in $WORK/home/.ddl" "status from another folder looked elsewhere than ~/.ddl"
expect_in se.log "it was deployed from the state folder $STATE" "status from another folder"
expect_in "$XDG_STATE_HOME/ddl/state-folders" "^$STATE\$" "deploy did not record its state folder"
(cd elsewhere && HOME="$WORK/home" "$DDL" list --all >../la.log 2>&1) || { cat la.log; fail "list --all"; }
expect_in la.log "^daily  .* local .* 2 " "list --all from another folder does not show daily"
expect_in la.log "^    in $STATE (ddl --state-dir $STATE" "list --all does not name daily's state folder"
rc=0
ddl status dialy >dm.log 2>&1 || rc=$?
expect_rc "$rc" 2 dm.log "did you mean daily?" "a mistyped cluster name"
sed 's/^name: daily/name: nx-other/' daily.yaml >other.yaml
rc=0
ddl run --cluster other.yaml -- true >nd.log 2>&1 || rc=$?
expect_rc "$rc" 2 nd.log "other.yaml is not deployed from here: .ddl deploy other.yaml. creates it" "an undeployed spec"
ok "found through DDL_STATE_DIR, or the state folder named from elsewhere, and by list --all; did you mean; ddl deploy FILE for an undeployed spec"

for args in "logs 99" "cancel abc" "cp daily:/nonexistent/x here"; do
  rc=0
  ddl $args >bad.log 2>&1 || rc=$?
  [ $rc = 2 ] && [ "$(wc -l <bad.log)" = 1 ] || { cat bad.log; fail "ddl $args: exit $rc"; }
done
grep -q "nonexistent" bad.log || fail "cp names the missing path"
mkdir -p other && sed 's/^workdir: code/workdir: missing/' daily.yaml >other/bad.yaml
rc=0
ddl validate other/bad.yaml >v.log 2>&1 || rc=$?
expect_rc "$rc" 2 v.log "other/bad.yaml:5:10: error: workdir missing is not a folder" "missing workdir"
ok "bad input (unknown job, bad job id, missing remote path, missing workdir) exits 2 with one line naming it"

grep -rlF "$DAILY_TOKEN" "$STATE" /var/lib/ddl/jobs/daily && fail "the secret is in a state or job file"
ok "the env secret is in no state, spec or job file"

ddl destroy -y daily >x.log 2>&1 || { cat x.log; fail "destroy"; }
assert_gone daily
# Namespace nodes share this machine's /var/lib/ddl: destroy removes what the cluster kept there.
left=$(ls -d /var/lib/ddl/jobs/daily /var/lib/ddl/setup/daily-* /var/lib/ddl/sync/daily.done 2>/dev/null || true)
[ -z "$left" ] || fail "left on this machine after destroy: $left"
ok "destroy removes the jobs, setup records and sync marker the namespace nodes kept on this machine"
