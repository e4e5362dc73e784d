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
ddl destroy sshhosts >d.log 2>&1 || { cat d.log; fail "destroy"; }
[ ! -e "$STATE/sshhosts" ] || fail "state of sshhosts left"
ddl exec --cluster sshbase -- 'test ! -e /opt/ddl/bin/ddl-allreduce-test && test ! -e /etc/ddl/hostfile' \
  || fail "destroy left ddl's files on the hosts"
ddl exec --cluster sshbase -- true >/dev/null || fail "destroy harmed the machines"
ok "destroy removed only what ddl installed"
sed -e 's/{name: beta, address: \(.*\)}/{name: beta, address: \1, jump: alpha}/' -e 's/name: sshhosts/name: sshjump/' hosts.yaml >jump.yaml
CLUSTERS+=(sshjump)
if ddl deploy jump.yaml >j.log 2>&1; then fail "jump host accepted"; fi
grep -q "ssh.hosts\[1\] (beta): jump hosts are not supported" j.log || { cat j.log; fail "jump message"; }
ok "unsupported jump host refused with the host named"
