#!/usr/bin/env bash
# SIGKILL of `ddl deploy` and `ddl destroy` at every named point of a run (DDL_TEST_KILL_AT, see
# src/util/KillPoint.hpp), plus once while ansible-playbook runs. After each kill: state.json parses,
# `ddl deploy` converges to a cluster whose nodes all answer, `ddl destroy` leaves nothing, no temp
# file of an interrupted atomic write survives the next command, and no child of the killed ddl runs on.
# KILL_POINTS_MAX=N limits the number of deploy points (for a quick run); the default is all of them.
# The configure phase runs a one-task playbook through the real ansible-playbook, ddl's inventory and
# event callback (the roles themselves are tested elsewhere; they would make each of the ~40 deploys
# 20-40 s longer). KILL_REAL_PLAYBOOKS=1 uses the real roles.
source "$(dirname "$0")/lib.sh"
[ -n "${KILL_REAL_PLAYBOOKS:-}" ] || use_ping_playbook
name=fltk
spec $name 2

check_state() { # what: state.json (if any) is whole JSON with a schema version
  local f="$STATE/$name/state.json"
  [ -e "$f" ] || return 0
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "cluster" in d' "$f" ||
    fail "state.json corrupt after $1: $(head -c 300 "$f")"
}
no_temp_files() {
  local left
  left=$(find "$STATE" -name '.*.tmp??????' 2>/dev/null || true)
  [ -z "$left" ] || fail "temp files of an interrupted write left after $1: $left"
}
killed_at() { # kind point: runs ddl KIND with DDL_TEST_KILL_AT=point, expects the SIGKILL
  local kind=$1 point=$2 rc=0
  if [ "$kind" = deploy ]; then
    DDL_TEST_KILL_AT="$point" "$DDL" --state-dir "$STATE" deploy $name.yaml >"k.log" 2>&1 || rc=$?
  else
    DDL_TEST_KILL_AT="$point" "$DDL" --state-dir "$STATE" destroy -y $name >"k.log" 2>&1 || rc=$?
  fi
  [ $rc = 137 ] || { cat k.log; fail "$kind was not killed at $point (exit $rc): point not reached"; }
  check_state "$kind killed at $point"
}
converge() {
  ddl deploy $name.yaml >c.log 2>&1 || { cat c.log; fail "deploy did not converge after $1"; }
  ddl exec --cluster $name -- true >/dev/null 2>&1 || fail "nodes do not answer after $1"
  check_state "converged deploy after $1"
  no_temp_files "$1"
}
destroy_clean() {
  ddl destroy -y $name >d.log 2>&1 || { cat d.log; fail "destroy after $1"; }
  assert_gone $name
}

# 1. Trace one undisturbed deploy and destroy: the list of points, in the order a run passes them.
t0=$(date +%s)
DDL_TEST_KILL_TRACE="$WORK/deploy.trace" ddl deploy $name.yaml >t.log 2>&1 || { cat t.log; fail "traced deploy"; }
DDL_TEST_KILL_TRACE="$WORK/destroy.trace" ddl destroy -y $name >t.log 2>&1 || { cat t.log; fail "traced destroy"; }
assert_gone $name
echo "undisturbed deploy+destroy: $(($(date +%s) - t0)) s"
# Every named point; of the many atomic writes, those of state.json (each one a different moment).
mapfile -t deploy_points < <(grep -v '^atomic-write:' "$WORK/deploy.trace" | sed 's/#1$//'
                             grep '^atomic-write:state.json:' "$WORK/deploy.trace")
mapfile -t destroy_points < <(grep -v '^atomic-write:' "$WORK/destroy.trace" | sed 's/#1$//'
                              grep '^atomic-write:state.json:' "$WORK/destroy.trace")
[ ${#deploy_points[@]} -ge 15 ] || fail "only ${#deploy_points[@]} deploy points traced"
[ ${#destroy_points[@]} -ge 8 ] || fail "only ${#destroy_points[@]} destroy points traced"
if [ -n "${KILL_POINTS_MAX:-}" ]; then deploy_points=("${deploy_points[@]:0:$KILL_POINTS_MAX}"); fi

# 2. One cycle per deploy point: killed deploy, converging deploy, and (while destroy points remain)
# a killed destroy, then a destroy that must leave nothing.
hit=0 d=0
for p in "${deploy_points[@]}"; do
  killed_at deploy "$p"
  converge "deploy killed at $p"
  hit=$((hit + 1)); echo "ok: deploy killed at $p -> converged"
  if [ $d -lt ${#destroy_points[@]} ]; then
    q=${destroy_points[$d]}; d=$((d + 1))
    killed_at destroy "$q"
    # A half-destroyed cluster is not deployed over (by design): deploy refuses and says how to finish.
    if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("destroying") else 1)' \
        "$STATE/$name/state.json" 2>/dev/null; then
      if ddl deploy $name.yaml >r.log 2>&1; then fail "deploy ran over a half-destroyed cluster ($q)"; fi
      expect_in r.log "half destroyed" "no hint after destroy killed at $q"
    fi
    destroy_clean "destroy killed at $q"
    hit=$((hit + 1)); echo "ok: destroy killed at $q -> destroy left nothing"
  else
    destroy_clean "deploy killed at $p"
  fi
done
[ $d = ${#destroy_points[@]} ] || [ -n "${KILL_POINTS_MAX:-}" ] || fail "destroy points left untried"

# 3. A kill while ansible-playbook runs (with the mitogen strategy the roles get, whose connection
# processes are forks of ansible-playbook): the children die with ddl, and the next deploy converges.
DDL_ANSIBLE_STRATEGY= "$DDL" --state-dir "$STATE" deploy $name.yaml >m.log 2>&1 &
pid=$!
for _ in $(seq 600); do pgrep -f "ansible-playbook -i $STATE/$name/" >/dev/null && break; sleep 0.1; done
pgrep -f "ansible-playbook -i $STATE/$name/" >/dev/null || { cat m.log; fail "ansible-playbook never started"; }
kill -KILL $pid; wait $pid 2>/dev/null || true
for _ in $(seq 50); do pgrep -f "ansible-playbook -i $STATE/$name/" >/dev/null || break; sleep 0.1; done
pgrep -af "ansible-playbook -i $STATE/$name/" && fail "ansible-playbook outlived the killed ddl"
check_state "kill during ansible-playbook"
converge "kill during ansible-playbook"
destroy_clean "kill during ansible-playbook"
hit=$((hit + 1)); echo "ok: deploy killed while ansible-playbook ran -> converged, no orphan"
echo "kill points: $hit hit (${#deploy_points[@]} deploy + $d destroy + 1 mid-ansible), all converged, 0 corrupt state files, total $(($(date +%s) - t0)) s"
