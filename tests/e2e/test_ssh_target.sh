#!/usr/bin/env bash
# Target ssh on machines that already exist (here: the nodes of a local cluster): deploy configures
# them and the runtime runs across them; destroy removes only what ddl installed, never the machines.
source "$(dirname "$0")/lib.sh"
spec sshbase 2
ddl deploy sshbase.yaml >b.log 2>&1 || { cat b.log; fail "deploy base"; }
addrs=($(ddl status sshbase --output json | python3 -c 'import json,sys; print(" ".join(n["address"] for n in json.load(sys.stdin)["nodes"]))'))
cat >hosts.yaml <<YAML
apiVersion: ddl/v1
name: sshhosts
target: ssh
access:
  user: root
  private_key: $STATE/sshbase/id_ed25519
ssh:
  hosts:
    - {name: alpha, address: ${addrs[0]}}
    - {name: beta, address: ${addrs[1]}}
YAML
CLUSTERS+=(sshhosts)
ddl deploy hosts.yaml >h.log 2>&1 || { cat h.log; cat "$STATE/sshhosts/logs/ansible.jsonl" | grep failed | head -5; fail "deploy on existing hosts"; }
[ "$(stat -c %a "$STATE/sshhosts/known_hosts")" ] || fail "no pinned host keys for the ssh cluster"
ddl hostfile --cluster sshhosts | grep -q "^${addrs[1]} slots=1$" || fail "hostfile"
ddl run --cluster sshhosts -- ddl-allreduce-test -b 1M -e 1M -n 2 >run.out 2>&1 || { cat run.out; fail "allreduce"; }
grep -q "all results exact" run.out || fail "allreduce result"
ok "deploy and run on existing machines"
ddl plan hosts.yaml >plan.txt || { cat plan.txt; fail "plan on the ssh target"; }
expect_in plan.txt "^Nodes: 0 to create, 0 to update, 0 to replace, 0 to delete (2 unchanged).$" "plan of the deployed hosts"
ok "plan of the deployed hosts: nothing to change"
rc=0; ddl deploy -y hosts.yaml --replace beta >rp.log 2>&1 || rc=$?
expect_rc "$rc" 2 rp.log "target ssh cannot replace a node: ddl does not make its machines; repair or swap the machine" "deploy --replace on the ssh target"
ok "deploy --replace on the ssh target is refused, naming why and what to do"
ddl destroy -y sshhosts >d.log 2>&1 || { cat d.log; fail "destroy"; }
[ ! -e "$STATE/sshhosts" ] || fail "state of sshhosts left"
ddl exec --cluster sshbase -- 'test -z "$(ls -A /opt/ddl)" && test ! -e /etc/ddl/hostfile && test ! -e /etc/ddl/node.env' \
  || { ddl exec --cluster sshbase -- 'ls -A /opt/ddl /etc/ddl'; fail "destroy left ddl's files on the hosts"; }
ddl exec --cluster sshbase -- true >/dev/null || fail "destroy harmed the machines"
ok "destroy removed only what ddl installed"
# Jump hosts: machines behind a bastion (a local cluster in the bastion layout). beta jumps through
# another host of the list, gamma through a bastion written as user@host:port.
spec sshbast 3 "  bastion: true"
ddl deploy sshbast.yaml >bb.log 2>&1 || { cat bb.log; fail "deploy bastion base"; }
read -r pub priv w1 w2 <<<"$(ddl status sshbast --output json | python3 -c 'import json,sys; n=json.load(sys.stdin)["nodes"]; print(n[0]["address"], n[0]["private_address"], n[1]["address"], n[2]["address"])')"
cat >jump.yaml <<YAML
apiVersion: ddl/v1
name: sshjump
target: ssh
access:
  user: root
  private_key: $STATE/sshbast/id_ed25519
ssh:
  hosts:
    - {name: alpha, address: $pub, private_address: $priv}
    - {name: beta, address: $w1, jump: alpha}
    - {name: gamma, address: $w2, jump: "root@$pub:22"}
YAML
CLUSTERS+=(sshjump)
ddl deploy jump.yaml >j.log 2>&1 || { cat j.log; fail "deploy through jump hosts"; }
ddl hostfile --cluster sshjump | grep -q "^$priv slots=1$" || fail "hostfile names alpha's private address"
ddl run --cluster sshjump -- ddl-allreduce-test -b 1M -e 1M -n 2 >jrun.out 2>&1 || { cat jrun.out; fail "allreduce through jumps"; }
grep -q "all results exact" jrun.out || fail "allreduce result through jumps"
[ "$(ddl ssh --cluster sshjump gamma -- hostname)" = worker2 ] || fail "ddl ssh through user@host:port"
ok "jump hosts (by name and as user@host:port): deploy, run, ssh"

# sshjump's state folder is lost (a CI job's container thrown away): gc --spec from another state folder asks
# every host of the spec (beta and gamma through their jump hosts) for ddl's node file, lists the cluster,
# and removes what ddl installed there; --dry-run removes nothing.
mv "$STATE/sshjump" "$WORK/sshjump-lost"
gc_jump() { "$DDL" --state-dir "$WORK/other-state" gc --spec jump.yaml --prefix ssh --older-than 0s --target none "$@"; }
gc_jump --dry-run >gcd.log 2>&1 || { cat gcd.log; fail "gc --spec --dry-run on ssh hosts"; }
expect_in gcd.log "^would destroy sshjump (found on target ssh, .*ddl's files on 3 host(s): alpha, beta, gamma" \
  "gc --spec --dry-run does not list sshjump on its 3 hosts"
ddl exec --cluster sshbast -- 'test -e /opt/ddl/bin/ddl-allreduce-test && grep -q "^DDL_STATE_DIR=.*/sshjump$" /etc/ddl/node.env' ||
  fail "gc --dry-run removed files, or the node file names no state folder"
gc_jump -y >gc.log 2>&1 || { cat gc.log; fail "gc --spec on ssh hosts"; }
expect_in gc.log "^gc: 1 destroyed, 0 failed" "gc --spec did not remove sshjump"
ddl exec --cluster sshbast -- 'test ! -e /opt/ddl/bin/ddl-allreduce-test && test ! -e /etc/ddl/node.env' ||
  fail "gc --spec left ddl's files on the hosts"
ok "gc --spec from another state folder: ddl's files on ssh hosts whose state folder is gone are found and removed, through jump hosts"
# destroy through the jump hosts, from the state folder found again (what gc removed is gone already).
mv "$WORK/sshjump-lost" "$STATE/sshjump"
ddl destroy -y sshjump >jd.log 2>&1 || { cat jd.log; fail "destroy through jumps"; }
assert_gone sshjump
ddl exec --cluster sshbast -- true >/dev/null || fail "destroy through jumps harmed the machines"
ok "destroy through jump hosts"
