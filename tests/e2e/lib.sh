# Shared helpers for the e2e scripts. Each test works in its own temp folder and state dir and
# destroys what it made, also when it fails.
set -euo pipefail
: "${DDL:?DDL must point at the ddl binary}"
WORK=$(mktemp -d /tmp/ddl-e2e.XXXXXX)
STATE="$WORK/state"
cd "$WORK"
CLUSTERS=()

cleanup() {
  local rc=$?
  for c in "${CLUSTERS[@]}"; do "$DDL" --state-dir "$STATE" destroy "$c" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# spec NAME NODES [extra yaml lines...]: writes NAME.yaml for a local cluster.
spec() {
  local name=$1 nodes=$2; shift 2
  { printf 'apiVersion: ddl/v1\nname: %s\ntarget: local\nlocal:\n  nodes: %s\n' "$name" "$nodes"
    for l in "$@"; do printf '%s\n' "$l"; done; } >"$name.yaml"
  CLUSTERS+=("$name")
}

ddl() { "$DDL" --state-dir "$STATE" "$@"; }

# Asserts that nothing of cluster NAME is left on the machine.
assert_gone() {
  local name=$1
  if ip netns list | grep -q "^ddl-$name-"; then fail "namespaces of $name left: $(ip netns list | grep "ddl-$name-")"; fi
  if pgrep -f "$STATE/$name/" >/dev/null; then fail "processes of $name left: $(pgrep -af "$STATE/$name/")"; fi
  if [ -e "$STATE/$name" ]; then fail "state folder of $name left"; fi
  if command -v podman >/dev/null && [ -n "$(podman ps -a --filter "label=ddl.cluster=$name" --format '{{.Names}}')" ]; then
    fail "containers of $name left"
  fi
  local tag
  tag=$(python3 - "$name" <<'PY'
import sys
h = 2166136261
for c in sys.argv[1].encode():
    h ^= c; h = (h * 16777619) & 0xffffffff
print("%06x" % (h & 0xffffff))
PY
)
  if ip -o link show | grep -q "ddl.*$tag"; then fail "links of $name left: $(ip -o link show | grep "$tag")"; fi
}

# Makes the configure phase run a one-task playbook (ping every node) through the real ansible-playbook,
# ddl's inventory and its event callback: for suites about the pipeline rather than the roles, where the
# roles would add 20-40 s to every deploy.
use_ping_playbook() {
  local src=${DDL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
  mkdir -p "$WORK/data/playbooks"
  cp -r "$src/playbooks/ansible.cfg" "$src/playbooks/callback_plugins" "$WORK/data/playbooks/"
  printf -- '- name: Reach every node\n  hosts: all\n  gather_facts: false\n  tasks:\n    - name: Node answers\n      ansible.builtin.ping:\n' \
    >"$WORK/data/playbooks/site.yml"
  export DDL_DATA_DIR="$WORK/data"
}
