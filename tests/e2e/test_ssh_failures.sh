#!/usr/bin/env bash
# A node whose host key changed is refused; a node whose sshd is dead makes wait-ssh fail at its
# deadline naming it.
source "$(dirname "$0")/lib.sh"
spec keys 2
ddl deploy keys.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
node_dir="$STATE/keys/nodes/worker1"
pid=$(cat "$node_dir/sshd.pid")
kill "$pid"
wait_for 15 "worker1's sshd (pid $pid) to exit" gone "$pid"
rm -f "$node_dir/ssh_host_ed25519_key" "$node_dir/ssh_host_ed25519_key.pub"
ddl deploy keys.yaml --only provision >p.log 2>&1 || { cat p.log; fail "re-provision"; }
if ddl exec --cluster keys --nodes worker1 -- true >x.log 2>&1; then fail "changed host key accepted"; fi
expect_in x.log "host key of root@.*:22 has CHANGED" "message"
ok "changed host key refused"
pid=$(cat "$STATE/keys/nodes/master/sshd.pid")
kill "$pid"
wait_for 15 "the master's sshd (pid $pid) to exit" gone "$pid"
if ddl deploy keys.yaml --only wait-ssh --ssh-timeout 3 >w.log 2>&1; then fail "wait-ssh passed with a dead node"; fi
expect_in w.log "SSH not reachable on master.* within 3 s" "message"
ok "dead node named at the deadline"
ddl destroy -y keys >/dev/null 2>&1 || fail "destroy"
assert_gone keys
