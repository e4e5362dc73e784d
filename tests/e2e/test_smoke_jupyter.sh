#!/usr/bin/env bash
# The smoke test's Jupyter check: through an SSH tunnel to the master's localhost, libcurl must get an
# answer with the cluster's token (generated per cluster, kept only in the 0600 state) and a refusal
# without it; with nothing listening the check fails and names why. The token of each run must be in
# nothing else ddl wrote (logs, rendered files, output; `ddl tunnel` prints it in the URL it gives the
# user) and in no process's argv. DDL_E2E_PREFIX prefixes the cluster name (concurrent runs).
source "$(dirname "$0")/lib.sh"
helpers="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/helpers"
J=${DDL_E2E_PREFIX:-}jt
spec "$J" 2 "services:" "  nfs: {enabled: false}" "  jupyter: {enabled: true, port: 8888}"
# The hook starts the token-checking JupyterLab and keeps a copy of the state folder as it is at the checks
# (the passing run removes it with the cluster): the token is only known from there.
cat >before_checks.sh <<HOOK
#!/bin/bash
cp -a "$STATE/$J" "$WORK/state-at-checks" 2>/dev/null || true
exec "$helpers/start_fake_jupyter.sh" "ddl-$J-master" 8888 "$STATE/$J/state.json"
HOOK
chmod +x before_checks.sh
secret_watch
ddl smoke-test "$J.yaml" --before-checks "$WORK/before_checks.sh" \
  >pass.out 2>&1 || { cat pass.out; fail "smoke test with a token-checking JupyterLab"; }
expect_in pass.out "ok   checks   jupyter (master) .*answers with the token, refuses without" "jupyter check"
assert_gone "$J"
ok "jupyter check passes through the tunnel with the token"
token=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jupyter_token"])' state-at-checks/state.json)
[ ${#token} = 48 ] || fail "token of the passing run: '$token'"
secret_sweep "Jupyter token, passing smoke test" "$token" '/state-at-checks/(state\.json(\.backup)?|ansible/secrets\.json)$' "$WORK"

secret_watch
set +e; ddl -v smoke-test "$J.yaml" --keep-on-failure >none.out 2>&1; rc=$?; set -e
[ $rc = 1 ] || fail "smoke test passed with no JupyterLab"
expect_in none.out "FAIL checks   jupyter (master) .*does not answer" "missing JupyterLab not reported"
grep -q "ddl destroy $J" none.out || fail "--keep-on-failure does not say how to destroy"
token=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jupyter_token"])' "$STATE/$J/state.json")
[ ${#token} = 48 ] || fail "token: '$token'"
[ "$(stat -c %a "$STATE/$J/state.json")" = 600 ] && [ "$(stat -c %a "$STATE/$J/ansible/secrets.json")" = 600 ] || fail "secret files not 0600"
ok "kept on failure; the token is in the 0600 state.json and secrets.json"
ddl status "$J" --output json >status.json
# The pattern comes from a file (printf is a builtin): the token must not appear in any argv either.
grep -qFf <(printf "%s\n" "$token") status.json && fail "ddl status --output json printed the Jupyter token"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "jupyter_token" not in d and d["nodes"]' status.json || fail "status json"
[ "$(ddl status "$J" --output json --show-secrets | python3 -c 'import json,sys; print(json.load(sys.stdin)["jupyter_token"])')" = "$token" ] ||
  fail "status --show-secrets"
rm -f status.json
ok "ddl status --output json leaves the token out; --show-secrets prints it"
# ddl tunnel: OpenSSH forwarding to the master's localhost with the pinned keys; the URL carries the token.
# curl reads the URL from a config on a pipe (-K), so that the token is not in this test's own argv either;
# the captured output (the user's terminal) is kept 0600 like the state.
"$helpers/start_fake_jupyter.sh" "ddl-$J-master" 8888 "$STATE/$J/state.json"
port=$((20000 + RANDOM % 20000))
(umask 077; exec "$DDL" --state-dir "$STATE" tunnel --cluster "$J" jupyter --local-port $port >tunnel.out 2>&1) &
tunnel_pid=$!
# Both what the URL check reads: ddl's first line (the URL) and the forward itself.
tunnel_up() { [ "$(wc -l <tunnel.out)" -ge 1 ] && curl -s -o /dev/null "http://127.0.0.1:$port/"; }
wait_for 30 "ddl tunnel to forward 127.0.0.1:$port and print its URL" tunnel_up
url=$(head -1 tunnel.out | sed 's/^jupyter on master: //')
[ "$url" = "http://127.0.0.1:$port/lab?token=$token" ] || { cat tunnel.out; fail "tunnel URL"; }
[ "$(curl -s -o /dev/null -w '%{http_code}' -K <(printf 'url = "%s"\n' "$url"))" = 200 ] || fail "jupyter through ddl tunnel with the token"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/lab")" = 403 ] || fail "jupyter without the token"
kill $tunnel_pid; wait $tunnel_pid 2>/dev/null || true
ddl tunnel --cluster "$J" grafana >g.out 2>&1 && fail "tunnel to monitoring that is not deployed"
expect_in g.out "has no monitoring" "grafana refusal"
ok "ddl tunnel jupyter forwards to the master's localhost; the token URL works, no token is refused"
secret_sweep "Jupyter token, kept cluster and ddl tunnel" "$token" '(/state\.json(\.backup)?|/ansible/secrets\.json|/tunnel\.out)$' "$WORK"
ddl destroy -y "$J" >/dev/null 2>&1 || fail destroy
assert_gone "$J"
ok "a missing JupyterLab fails the check"
