#!/usr/bin/env bash
# The smoke test's Jupyter check: through an SSH tunnel to the master's localhost, libcurl must get an
# answer with the cluster's token (generated per cluster, kept only in the 0600 state) and a refusal
# without it; with nothing listening the check fails and names why.
source "$(dirname "$0")/lib.sh"
helpers="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/helpers"
spec jt 2 "services:" "  nfs: {enabled: false}" "  jupyter: {enabled: true, port: 8888}"
ddl smoke-test jt.yaml --before-checks "$helpers/start_fake_jupyter.sh ddl-jt-master 8888 $STATE/jt/state.json" \
  >pass.out 2>&1 || { cat pass.out; fail "smoke test with a token-checking JupyterLab"; }
grep -q "ok   checks   jupyter (master) .*answers with the token, refuses without" pass.out || { cat pass.out; fail "jupyter check"; }
assert_gone jt
ok "jupyter check passes through the tunnel with the token"
set +e; ddl -v smoke-test jt.yaml --keep-on-failure >none.out 2>&1; rc=$?; set -e
[ $rc = 1 ] || fail "smoke test passed with no JupyterLab"
grep -q "FAIL checks   jupyter (master) .*does not answer" none.out || { cat none.out; fail "missing JupyterLab not reported"; }
grep -q "ddl destroy jt" none.out || fail "--keep-on-failure does not say how to destroy"
token=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jupyter_token"])' "$STATE/jt/state.json")
[ ${#token} = 48 ] || fail "token: '$token'"
[ "$(stat -c %a "$STATE/jt/state.json")" = 600 ] && [ "$(stat -c %a "$STATE/jt/ansible/secrets.json")" = 600 ] || fail "secret files not 0600"
if grep -rl "$token" "$STATE/jt" none.out | grep -vE "/state.json$|/ansible/secrets.json$"; then fail "the Jupyter token leaked into the files above"; fi
ok "kept on failure; the token is only in state.json and secrets.json (0600), not in logs or rendered files"
# ddl tunnel: OpenSSH forwarding to the master's localhost with the pinned keys; the URL carries the token.
"$helpers/start_fake_jupyter.sh" ddl-jt-master 8888 "$STATE/jt/state.json"
port=$((20000 + RANDOM % 20000))
ddl tunnel --cluster jt jupyter --local-port $port >tunnel.out 2>&1 &
tunnel_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
url=$(head -1 tunnel.out | sed 's/^jupyter on master: //')
[ "$url" = "http://127.0.0.1:$port/lab?token=$token" ] || { cat tunnel.out; fail "tunnel URL"; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url")" = 200 ] || fail "jupyter through ddl tunnel with the token"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/lab")" = 403 ] || fail "jupyter without the token"
kill $tunnel_pid; wait $tunnel_pid 2>/dev/null || true
ddl tunnel --cluster jt grafana >g.out 2>&1 && fail "tunnel to monitoring that is not deployed"
grep -q "has no monitoring" g.out || { cat g.out; fail "grafana refusal"; }
ok "ddl tunnel jupyter forwards to the master's localhost; the token URL works, no token is refused"
ddl destroy jt >/dev/null 2>&1 || fail destroy
assert_gone jt
ok "a missing JupyterLab fails the check"
