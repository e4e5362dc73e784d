#!/usr/bin/env bash
# start_fake_jupyter.sh NETNS PORT STATE_JSON: the fake JupyterLab inside a node's network namespace,
# detached (ddl's destroy kills every process in the namespace).
set -euo pipefail
ip netns exec "$1" setsid /usr/bin/python3 "$(dirname "$0")/fake_jupyter.py" "$2" "$3" </dev/null >/dev/null 2>&1 &
for _ in $(seq 50); do ip netns exec "$1" bash -c "exec 3<>/dev/tcp/127.0.0.1/$2" 2>/dev/null && exit 0; sleep 0.1; done
echo "fake JupyterLab did not start" >&2; exit 1
