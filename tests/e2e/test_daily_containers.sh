#!/usr/bin/env bash
# The daily loop on 2 container nodes (own file systems, systemd as PID 1), NFS off: a deploy whose sync
# fails (no rsync on the nodes yet) leaves no node marked synced; `ddl sync` then puts the workdir on every
# node; `ddl run -d` runs as a transient systemd unit ddl-job-ID on the master; `ddl cancel` stops the unit
# and leaves no process. The rest of the loop is test_daily's (namespace nodes).
source "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || fail "podman missing (scripts/install-deps.sh installs it)"
use_ping_playbook # the roles (rsync from the runtime role) are test_roles_containers'; rsync comes by hand below
mkdir -p code
printf 'import os\nprint("rank", os.environ["DDL_RANK"], "unit", os.environ.get("INVOCATION_ID") is not None, os.getcwd(), flush=True)\n' >code/train.py
printf 'secret.txt\n' >code/.gitignore
echo s >code/secret.txt
spec dctr 2 "  nodes_as: containers" "services: {nfs: {enabled: false}}" "workdir: code"

rc=0
ddl deploy dctr.yaml >d.log 2>&1 || rc=$?
expect_rc "$rc" 1 d.log "sync failed on master: .*worker1: " "deploy without rsync on the nodes"
ddl exec --cluster dctr -- test -e /var/lib/ddl/sync/dctr.done 2>/dev/null && fail "a node is marked synced after a failed sync"
rc=0
ddl run -d --np 1 -- python3 train.py >nr.log 2>&1 || rc=$?
expect_rc "$rc" 2 nr.log "the workdir is not synced on master, worker1" "run -d before a sync"
ok "a sync that failed leaves no node marked synced (exit 1 naming every node); run -d refuses (exit 2)"

ddl exec --cluster dctr -- sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q rsync' >apt.log 2>&1 ||
  { tail -20 apt.log; fail "installing rsync on the nodes"; }
ddl --output json sync dctr >s.json 2>s.log || { cat s.log; fail "sync"; }
python3 -c 'import json,sys; j=json.load(open("s.json")); sys.exit(j["nodes"] != ["master", "worker1"] or j["remote_dir"] != "/var/lib/ddl/work/dctr")' ||
  { cat s.json; fail "sync's JSON"; }
for node in master worker1; do
  ddl exec --cluster dctr --nodes $node -- test -f /var/lib/ddl/work/dctr/train.py || fail "train.py not on $node"
  ddl exec --cluster dctr --nodes $node -- test -f /var/lib/ddl/sync/dctr.done || fail "$node not marked synced"
  ddl exec --cluster dctr --nodes $node -- test -e /var/lib/ddl/work/dctr/secret.txt 2>/dev/null && fail "secret.txt reached $node"
done
[ -e /var/lib/ddl/work/dctr ] && fail "the workdir landed on this machine"
ok "sync: the workdir on each node's own file system, without what .gitignore names; each node marked synced"

id=$(ddl run -d --np 1 -- python3 train.py) || fail "run -d"
wait_for 60 "job $id to succeed" job_in_state "$id" succeeded dctr
[ "$(ddl logs "$id")" = "[0] rank 0 unit True /var/lib/ddl/work/dctr" ] || { ddl logs "$id"; fail "the job's output"; }
ok "run -d runs the job as a systemd unit on the master, in the synced workdir"

id=$(ddl run -d --np 1 --name long -- sleep 313) || fail "run -d long"
# The unit is active before its rank is: the check waits for the rank itself.
wait_for 60 "the long job's rank (sleep 313) to run on the master" ddl exec --cluster dctr --nodes master -- pgrep -x sleep
ddl cancel "$id" >c.log || { cat c.log; fail "cancel"; }
ddl exec --cluster dctr --nodes master -- pgrep -af 'sleep 313' 2>/dev/null && fail "the cancelled job's rank still runs"
ddl exec --cluster dctr --nodes master -- systemctl is-active "ddl-job-$id" 2>/dev/null | grep -qx '\[master\] active' &&
  fail "the job's unit is still active"
ddl jobs dctr | grep -q "^$id .*cancelled" || { ddl jobs dctr; fail "not recorded as cancelled"; }
ok "cancel stops the job's systemd unit and every process of it"

ddl destroy -y dctr >x.log 2>&1 || { cat x.log; fail "destroy"; }
assert_gone dctr
