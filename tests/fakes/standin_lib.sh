# shellcheck shell=bash
# Sourced by the stand-ins' self-tests (test_*_api.sh): a scratch folder $work removed at exit with the
# stand-in stopped, $py (the interpreter itself, not a slow version-manager shim), and start_standin.
# The stand-ins are reached with curl and their certificates made with openssl.
command -v curl >/dev/null || { echo "FAIL: curl not found"; exit 1; }
command -v openssl >/dev/null || { echo "FAIL: openssl not found"; exit 1; }
py=$(python3 -c 'import sys; print(sys.executable)')
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# start_standin SCRIPT CONFIG [ARGS...]: SCRIPT serves HTTPS with the test CA's certificate in $work/tls
# (made by make_test_ca.sh) on a free port, reading CONFIG (ARGS: its other options); sets $pid and $url
# once the port is known.
start_standin() {
  "$py" "$1" --cert "$work/tls/server.pem" --key "$work/tls/server.key" --config "$2" --port-file "$work/port" "${@:3}" &
  pid=$!
  for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
  [ -s "$work/port" ] || { echo "FAIL: the stand-in did not start"; exit 1; }
  # shellcheck disable=SC2034 # read by the sourcing script
  url="https://127.0.0.1:$(cat "$work/port")"
}
