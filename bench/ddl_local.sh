# Sourced by the bench scripts that drive the ddl binary on a local cluster: sets `root`, `ddl_bin` (the
# script's first argument, else build-dev/src/ddl, else build/src/ddl), `work` (a temp folder named after
# PREFIX), `state`, a `ddl` function using that state folder, and DDL_DATA_DIR with a playbook that only
# pings the nodes (the benchmarks measure ddl, not the roles).
# Usage: . bench/ddl_local.sh PREFIX [DDL]
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ddl_bin=${2:-$root/build-dev/src/ddl}
[ -x "$ddl_bin" ] || ddl_bin=$root/build/src/ddl
work=$(mktemp -d "/tmp/$1.XXXXXX")
state=$work/state
ddl() { "$ddl_bin" --state-dir "$state" "$@"; }
export DDL_DATA_DIR=$work/data
mkdir -p "$DDL_DATA_DIR/playbooks"
cp -r "$root/playbooks/ansible.cfg" "$root/playbooks/callback_plugins" "$DDL_DATA_DIR/playbooks/"
printf -- '- name: Reach every node\n  hosts: all\n  gather_facts: false\n  tasks:\n    - name: Node answers\n      ansible.builtin.ping:\n' \
  >"$DDL_DATA_DIR/playbooks/site.yml"
