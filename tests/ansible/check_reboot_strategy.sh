#!/usr/bin/env bash
# Every play of site.yml whose roles may reboot a node (a task using ansible.builtin.reboot) runs with
# Ansible's own `linear` strategy, never the mitogen strategy configure picks for the other plays; and at
# least one such play exists (the driver's), so the check cannot pass on nothing.
set -euo pipefail
playbooks=${1:?playbooks folder}
python3 - "$playbooks" <<'PY'
import os, sys, yaml
root = sys.argv[1]

def reboots(node):
    if isinstance(node, dict):
        if any(k in ("ansible.builtin.reboot", "reboot", "ansible.legacy.reboot") for k in node):
            return True
        return any(reboots(v) for v in node.values())
    if isinstance(node, list):
        return any(reboots(v) for v in node)
    return False

def role_reboots(role):
    folder = os.path.join(root, "roles", role, "tasks")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".yml") and reboots(yaml.safe_load(open(os.path.join(folder, name)))):
            return name
    return None

plays = yaml.safe_load(open(os.path.join(root, "site.yml")))
found, bad = [], []
for play in plays:
    for r in play.get("roles", []):
        role = r if isinstance(r, str) else r["role"]
        where = role_reboots(role)
        if where:
            found.append(play["name"])
            if play.get("strategy") != "linear":
                bad.append(f"play '{play['name']}' applies {role} (roles/{role}/tasks/{where} reboots) with strategy {play.get('strategy')!r}")
if not found:
    sys.exit("FAIL: no play of site.yml applies a role that reboots: the check has nothing to check")
for b in bad:
    print("FAIL:", b)
if bad:
    sys.exit(1)
print("ok: plays that may reboot run with the linear strategy:", ", ".join(found))
PY
