#!/usr/bin/env bash
# The bastion layout (local.bastion): workers sit on a private bridge that only the master reaches, as
# on a cloud where only the master has a floating IP. Everything ddl does with the workers - wait-ssh,
# Ansible, probe, exec, ssh, the launcher - goes through the master; node-to-node traffic and the
# hostfile use the private addresses.
source "$(dirname "$0")/lib.sh"
spec bast 3 "  bastion: true"
ddl deploy bast.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
ok "deployed through the bastion"

ddl status bast --output json >st.json
read -r master_pub master_priv w1 w1_jump <<<"$(python3 - st.json <<'PY'
import json, sys
n = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}
print(n["master"]["address"], n["master"]["private_address"], n["worker1"]["address"], n["worker1"]["jump"])
PY
)"
[ "$w1_jump" = master ] || fail "worker1 is not reached through the master (jump=$w1_jump)"
case "$w1" in 172.*) ;; *) fail "worker1 is not on the private network ($w1)";; esac
# The machine itself has no way to the workers: no route over a ddl bridge, no sshd answering (a
# connect alone can succeed where the sandbox proxies outbound TCP, so look for the SSH banner).
ip route get "$w1" | grep -q ddl && fail "the machine routes to worker1 ($w1) over a ddl bridge"
banner=$(timeout 3 bash -c "exec 3<>/dev/tcp/$w1/22; head -c 4 <&3" 2>/dev/null || true)
[ "$banner" != "SSH-" ] || fail "worker1 ($w1) answers without the bastion"
ok "workers are private ($w1), master public ($master_pub) and private ($master_priv)"

[ "$(ddl exec --cluster bast -- hostname | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 [worker2] worker2 " ] ||
  fail "exec on every node"
ddl exec --cluster bast --nodes worker2 -- cat /etc/ddl/node.env | grep -q "DDL_MASTER_ADDR=$master_priv" ||
  fail "workers reach the master at its private address"
ok "exec through the bastion; node.env names the master's private address"

[ "$(ddl ssh --cluster bast worker2 -- hostname)" = worker2 ] || fail "ddl ssh through the bastion"
ok "ddl ssh through the bastion (OpenSSH ProxyCommand with pinned keys)"

ddl hostfile --cluster bast >hf
grep -q "^$master_priv slots=" hf && ! grep -q "$master_pub" hf || { cat hf; fail "hostfile uses private addresses"; }
ok "hostfile uses the private addresses"

ddl run --cluster bast -- ddl-allreduce-test -b 4 -e 1M -f 4 -n 2 -w 1 >ar.out 2>&1 || { cat ar.out; fail "allreduce"; }
expect_in ar.out "^\[0\] # all results exact" "allreduce result"
ok "ddl run: allreduce across the private network exact"

# Second deploy converges without touching anything (all phases done).
ddl deploy bast.yaml >d2.log 2>&1 || { cat d2.log; fail "second deploy"; }

ddl destroy -y bast >x.log 2>&1 || { cat x.log; fail "destroy"; }
assert_gone bast
ok "destroy removes both bridges, every link and namespace"
