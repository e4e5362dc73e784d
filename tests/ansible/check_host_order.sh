#!/usr/bin/env bash
# Every Jinja loop over a play's or group's hosts in playbooks/ must sort them: groups made by group_by
# (ddl_system, ddl_base_only) list hosts in the order they answered, which differs from run to run, so an
# unsorted loop renders a different file each time and a second configure is no longer changed=0.
#   tests/ansible/check_host_order.sh [PLAYBOOK_DIR]
set -euo pipefail
dir=${1:-"$(dirname "$0")/../../playbooks"}
pattern='\{%-?[[:space:]]*for[[:space:]]+[a-z_]+[[:space:]]+in[[:space:]]+(ansible_play_hosts_all|ansible_play_hosts|ansible_play_batch|groups(\[[^]]+\]|\.[a-z_]+))[[:space:]]*-?%\}'
if hits=$(grep -rnE "$pattern" "$dir" --include='*.yml' --include='*.j2'); then
  echo "loops over hosts without | sort (their order changes between runs):" >&2
  echo "$hits" >&2
  exit 1
fi
echo "every loop over hosts in $dir is sorted"
