#!/usr/bin/env bash
# Target slurm against a real Slurm 22.05 (munged + slurmctld here, one slurmd per node of a local
# cluster): the rendered batch script runs the bundled allreduce across 4 nodes with srun; plain srun
# finds its master without MASTER_ADDR; ddl deploy submits, follows and resumes a job (no second
# submission), reports a job that ends early and an unknown partition; ddl destroy -y scancels; with
# autostop the idle clock inside the job scancels it once idle, and status, list and gc --expired catch up.
source "$(dirname "$0")/lib.sh"
HELPER="$(cd "$(dirname "$0")" && pwd)/helpers/slurm_cluster.sh"
DIST="${DDL_BINARY_DIR:?}/dist"
for tool in slurmctld slurmd munged sbatch srun; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || fail "$tool missing: run scripts/install-deps.sh"
done
SLURM_DIR="$WORK/slurm"
SLURM_CLUSTERS=()
# Slurm clusters are destroyed while the controller still runs, then Slurm stops, then lib.sh's
# cleanup removes the local nodes and the work folder.
slurm_cleanup() {
  local rc=$?
  for c in "${SLURM_CLUSTERS[@]}"; do "$DDL" --state-dir "$STATE" destroy -y "$c" >/dev/null 2>&1 || true; done
  bash "$HELPER" down "$SLURM_DIR" >/dev/null 2>&1 || true
  set +e # lib.sh's cleanup reads the status from $?; under errexit `(exit 1)` would end this trap here
  (exit $rc)
  cleanup
}
trap slurm_cleanup EXIT

slurm_spec() { # NAME PARTITION
  SLURM_CLUSTERS+=("$1")
  cat >"$1.yaml" <<YAML
apiVersion: ddl/v1
name: $1
target: slurm
slurm:
  partition: $2
  nodes: 4
  time: "10"
  start_timeout_minutes: 2
runtime:
  backend: tcp
YAML
}
state_job() { ddl status "$1" --output json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_data"].get("job_id",""))' 2>/dev/null || true; }

spec slurmnodes 4
ddl deploy slurmnodes.yaml >nodes.log 2>&1 || { cat nodes.log; fail "deploy the local nodes"; }
bash "$HELPER" up "$SLURM_DIR" "$STATE" slurmnodes e2e || fail "start Slurm on the local nodes"
source "$SLURM_DIR/env"
[ "$(sinfo -h -N -o %N | sort -u | tr '\n' ' ')" = "master worker1 worker2 worker3 " ] || fail "Slurm nodes: $(sinfo -N)"
ok "Slurm up: slurmctld + 4 slurmd on the local nodes"

# 1. The rendered batch script runs the allreduce across the 4 nodes with srun.
slurm_spec slurmjob e2e
ddl render slurmjob.yaml --out rendered >/dev/null || fail "render"
script=rendered/slurm/job.sbatch
for line in "#SBATCH --job-name=ddl-slurmjob" "#SBATCH --partition=e2e" "#SBATCH --nodes=4" \
            "#SBATCH --ntasks-per-node=1" "#SBATCH --time=10" "#SBATCH --output=ddl-slurmjob-%j.out"; do
  grep -qxF -- "$line" "$script" || fail "rendered script lacks: $line"
done
! grep -q -- "--gres" "$script" || fail "a CPU-only spec asked for GPUs"
t0=$(date +%s.%N)
DDL_RUNTIME_DIR="$DIST" sbatch --wait --parsable "$script" ddl-allreduce-test -b 1M -e 16M -n 5 --json \
  >submit.out 2>submit.err || { cat submit.err; cat ddl-slurmjob-*.out; fail "the rendered job failed"; }
t1=$(date +%s.%N)
job=$(tail -1 submit.out)
out="ddl-slurmjob-$job.out"
python3 - "$out" <<'PY' || { cat "$out"; fail "allreduce result across the Slurm job"; }
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
r = json.loads(lines[-1])
assert r["ranks"] == 4 and r["wrong"] == 0 and r["backend"] == "tcp", r
big = r["results"][-1]
print("slurm allreduce: %d ranks, %d B: %.1f us, algbw %.4f GB/s, busbw %.4f GB/s, wrong %d"
      % (r["ranks"], big["size"], big["time_us"], big["algbw"], big["busbw"], r["wrong"]))
PY
printf 'rendered job %s: sbatch --wait returned after %.1f s (it polls); Slurm: %s\n' "$job" \
  "$(echo "$t1 - $t0" | bc)" "$(scontrol show job -o "$job" | tr ' ' '\n' | grep -E '^(SubmitTime|StartTime|EndTime)=' | tr '\n' ' ')"
hosts="ddl-slurmjob-$job.hosts"
[ "$(grep -v '^#' "$hosts" | tr '\n' ' ')" = "master slots=1 worker1 slots=1 worker2 slots=1 worker3 slots=1 " ] \
  || { cat "$hosts"; fail "the job's hostfile"; }
ok "rendered sbatch job: exact allreduce on 4 ranks over 4 nodes, hostfile from scontrol show hostnames"

# 2. Workers started by plain srun take rank, size and master from Slurm's variables alone.
env -u MASTER_ADDR -u DDL_MASTER_ADDR srun -p e2e -N4 --ntasks-per-node=1 "$DIST/bin/ddl-allreduce-test" --size 2M -n 2 \
  >srun.out 2>&1 || { cat srun.out; fail "srun of the workers"; }
grep -q "4 ranks" srun.out && grep -q "all results exact" srun.out || { cat srun.out; fail "srun allreduce"; }
ok "srun starts the workers with no launcher and no MASTER_ADDR"

# 3. ddl deploy submits, records the job, follows it to RUNNING; a second deploy submits nothing.
ddl deploy slurmjob.yaml >deploy.log 2>&1 || { cat deploy.log; fail "deploy on slurm"; }
grep -E "RUNNING on master,worker\[1-3\] after" deploy.log || { cat deploy.log; fail "deploy did not follow the job"; }
job1=$(state_job slurmjob)
[ -n "$job1" ] || fail "no job id in the state"
[ "$(squeue -h -j "$job1" -o %T)" = RUNNING ] || fail "job $job1 is not running: $(squeue)"
ddl status slurmjob | grep -q "^worker3 " || fail "the allocated nodes are not the cluster's nodes"
[ "$(ddl hostfile --cluster slurmjob | grep -c ' slots=1$')" = 4 ] || fail "hostfile of the slurm cluster"
ddl deploy slurmjob.yaml >deploy2.log 2>&1 || { cat deploy2.log; fail "second deploy"; }
[ "$(squeue -h -n ddl-slurmjob -o %i | wc -l)" = 1 ] || fail "a second deploy submitted again: $(squeue)"
ok "deploy: job $job1 submitted once and followed to RUNNING; nodes and hostfile from the allocation"
# A bigger allocation in the spec: the plan says the deploy keeps following the running job, and how to
# get the new allocation.
sed 's/^  nodes: 4$/  nodes: 3/' slurmjob.yaml >slurmjob3.yaml
grep -q "^  nodes: 3$" slurmjob3.yaml || fail "slurmjob.yaml has no 'nodes: 4' line to change"
ddl plan slurmjob3.yaml >plan.txt || { cat plan.txt; fail "plan on slurm"; }
expect_in plan.txt "^  note: the spec asks for 3 node(s).*a deploy keeps following job $job1: destroy the cluster and deploy again" \
  "plan of a changed allocation"
ok "plan of a changed Slurm allocation: the running job is kept, and the plan says how to change it"
ddl run --cluster slurmjob -np 4 -- ddl-allreduce-test --size 4M -n 3 >run.out 2>&1 || { cat run.out; fail "ddl run on slurm"; }
grep -q "4 ranks" run.out && grep -q "all results exact" run.out || { cat run.out; fail "ddl run allreduce"; }
ok "ddl run: an srun step in job $job1 runs the allreduce exactly on 4 ranks"
if ddl exec --cluster slurmjob -- true >exec.out 2>&1; then fail "ddl exec on a slurm cluster"; fi
expect_in exec.out "use \`ddl run -- PROG\`" "ddl exec message on slurm"

# 4. An interrupted deploy of a job that must wait resumes with the same job.
slurm_spec slurmwait e2e
"$DDL" --state-dir "$STATE" deploy slurmwait.yaml >wait.log 2>&1 &
pid=$!
for _ in $(seq 100); do job2=$(state_job slurmwait); [ -n "$job2" ] && break; sleep 0.1; done
[ -n "$job2" ] || { cat wait.log; fail "the waiting deploy recorded no job id"; }
sleep 1
[ "$(squeue -h -j "$job2" -o %T)" = PENDING ] || fail "job $job2 should wait for the nodes: $(squeue)"
kill -TERM "$pid"
if wait "$pid"; then fail "an interrupted deploy succeeded"; fi
expect_in wait.log "interrupted while job $job2 was PENDING" "interrupt message"
[ "$(state_job slurmwait)" = "$job2" ] || fail "the interrupted deploy lost its job id"
ok "interrupted while PENDING: job $job2 kept in the state"

# 5. destroy cancels the job and waits until it is gone; the state goes.
ddl destroy -y slurmjob >destroy.log 2>&1 || { cat destroy.log; fail "destroy"; }
[ -z "$(squeue -h -j "$job1" -o %T -t PD,R,CG 2>/dev/null)" ] || fail "job $job1 still queued after destroy"
[ ! -e "$STATE/slurmjob" ] || fail "state of slurmjob left"
ok "destroy: scancel $job1, job gone, state gone"

ddl deploy slurmwait.yaml >wait2.log 2>&1 || { cat wait2.log; fail "resumed deploy"; }
expect_in wait2.log "following job $job2 from the state" "the resumed deploy did not follow $job2"
[ "$(squeue -h -n ddl-slurmwait -o %i | tr -d ' ')" = "$job2" ] || fail "resumed deploy submitted again: $(squeue)"
ok "resumed deploy followed job $job2 to RUNNING, no second submission"

# 6. A job that ends before it runs is reported as such; an unknown partition is refused up front.
slurm_spec slurmearly e2e
"$DDL" --state-dir "$STATE" deploy slurmearly.yaml >early.log 2>&1 &
pid=$!
for _ in $(seq 100); do job3=$(state_job slurmearly); [ -n "$job3" ] && break; sleep 0.1; done
[ -n "$job3" ] || { cat early.log; fail "no job id for the early job"; }
scancel "$job3"
if wait "$pid"; then fail "deploy of a cancelled job succeeded"; fi
expect_in early.log "Slurm job $job3 ended before the cluster was up: CANCELLED" "ended-early message"
ddl destroy -y slurmearly >/dev/null 2>&1 || fail "destroy after an early end"
ok "a job cancelled while pending: clear error, destroy still works"

slurm_spec slurmbad nosuch
if ddl deploy slurmbad.yaml >bad.log 2>&1; then fail "unknown partition accepted"; fi
expect_in bad.log 'no partition "nosuch" on this Slurm cluster (it has: e2e)' "partition message"
[ -z "$(squeue -h -n ddl-slurmbad -o %i)" ] || fail "a job was submitted to an unknown partition"
ddl destroy -y slurmbad >/dev/null 2>&1 || fail "destroy after a refused partition"
ok "unknown partition refused before submitting, naming the partitions that exist"

# 7. gc from the queue's side: while slurmwait's state folder exists its job is left alone; once the folder
# is gone (a CI job's container thrown away), gc from an empty state folder finds the job and cancels it.
mkdir -p "$WORK/empty-state"
"$DDL" --state-dir "$WORK/empty-state" gc -y --target slurm --older-than 0s --prefix slurmwait >gc1.out 2>gc1.err ||
  { cat gc1.out gc1.err; fail "gc --target slurm"; }
grep -q "not touched: slurmwait (slurm: its state is in $STATE/slurmwait)" gc1.err && grep -q "gc: 0 destroyed" gc1.out ||
  { cat gc1.out gc1.err; fail "gc touched a Slurm cluster whose state folder exists"; }
mv "$STATE/slurmwait" "$WORK/slurmwait-state-moved"
"$DDL" --state-dir "$WORK/empty-state" gc -y --target slurm --older-than 0s --prefix slurmwait >gc2.out 2>gc2.err ||
  { cat gc2.out gc2.err; fail "gc --target slurm of a leaked job"; }
grep -q "destroying slurmwait (found on target slurm, created 0 h ago: Slurm job $job2 RUNNING; its state folder $STATE/slurmwait is gone)" gc2.out &&
  grep -q "gc: 1 destroyed, 0 failed" gc2.out || { cat gc2.out gc2.err; fail "gc did not cancel the leaked job"; }
for _ in $(seq 100); do [ -z "$(squeue -h -o %i)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -o %i)" ] || fail "jobs left: $(squeue)"
ok "gc --target slurm: a job whose state folder exists is left; once it is gone, gc cancels it; all jobs gone"

# 7b. deploy --replace on Slurm (issue 54): a 3-node cluster of the 4 nodes; replacing one asks first
# (nothing cancelled without -y), then cancels the job and submits a new allocation with --exclude; the
# cluster's nodes and hostfile follow, and a run is exact on the new nodes.
slurm_spec slurmrep e2e
sed -i 's/^  nodes: 4$/  nodes: 3/' slurmrep.yaml
ddl deploy slurmrep.yaml >rep1.log 2>&1 || { cat rep1.log; fail "deploy slurmrep"; }
jobA=$(state_job slurmrep)
victim=$(ddl status slurmrep --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"][-1]["name"])')
rc=0; ddl deploy slurmrep.yaml --replace "$victim" </dev/null >rep.log 2>&1 || rc=$?
expect_rc "$rc" 2 rep.log "replace node $victim: job $jobA is cancelled .* --exclude=$victim" "deploy --replace without -y on slurm"
[ "$(squeue -h -j "$jobA" -o %T)" = RUNNING ] || fail "the refused --replace touched job $jobA"
ddl deploy -y slurmrep.yaml --replace "$victim" >rep.log 2>&1 || { cat rep.log; fail "deploy --replace $victim on slurm"; }
jobB=$(state_job slurmrep)
[ -n "$jobB" ] && [ "$jobB" != "$jobA" ] || fail "no new allocation after --replace (job $jobA -> '$jobB')"
[ -z "$(squeue -h -j "$jobA" -o %T -t PD,R 2>/dev/null)" ] || fail "job $jobA still holds nodes after --replace"
scontrol show job -o "$jobB" | grep -q "ExcNodeList=$victim " || { scontrol show job -o "$jobB"; fail "job $jobB does not exclude $victim"; }
nodes=$(ddl status slurmrep --output json | python3 -c 'import json,sys; print(" ".join(n["name"] for n in json.load(sys.stdin)["nodes"]))')
[ "$(wc -w <<<"$nodes")" = 3 ] && ! grep -qw "$victim" <<<"$nodes" || fail "nodes after --replace $victim: $nodes"
ddl hostfile --cluster slurmrep | grep -qw "$victim" && fail "the hostfile still names $victim"
ddl run --cluster slurmrep -np 3 -- ddl-allreduce-test --size 1M -n 2 >rep-run.out 2>&1 || { cat rep-run.out; fail "ddl run after --replace"; }
grep -q "all results exact" rep-run.out || { cat rep-run.out; fail "allreduce after --replace"; }
ddl destroy -y slurmrep >/dev/null 2>&1 || fail "destroy slurmrep"
ok "deploy --replace $victim on slurm: asks first; job $jobA cancelled, job $jobB excludes $victim; nodes ($nodes), hostfile and an exact run follow"

# 8. autostop on Slurm: the idle clock runs inside the job (the batch script's `ddl-idle loop`, every 3 s
# here, the load limit lifted: these nodes share this machine's load) and records into the state folder; a
# running `ddl run` step keeps the cluster busy; once idle past autostop.idle_minutes (planted: idle_since
# moved 2 minutes back) it writes why into the job's output and scancels its own job; status and list show
# the cluster ended by autostop, and gc --expired cleans up the state.
t_idle=$SECONDS
slurm_spec slurmidle e2e
echo "autostop: {idle_minutes: 1}" >>slurmidle.yaml
DDL_IDLE_PERIOD=3 DDL_IDLE_CPU_LOAD=1000 ddl deploy slurmidle.yaml >idle.log 2>&1 || { cat idle.log; fail "deploy with autostop"; }
job4=$(state_job slurmidle)
rec="$STATE/slurmidle/idle.json"
record_says() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$rec" "$@" 2>/dev/null; }
ddl run --cluster slurmidle -np 1 -- sleep 8 >step.out 2>&1 &
step=$!
for _ in $(seq 60); do record_says 'any(b.startswith("step %s." % sys.argv[3]) for b in r["busy"])' "$job4" && break; sleep 0.25; done
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["busy"][0].startswith("step '"$job4"'.") and r["busy"][0].endswith(" running"), r
assert set(r["source"].values()) == {"load"} and sorted(r["source"]) == ["master", "worker1", "worker2", "worker3"], r' "$rec" ||
  { cat "$rec" step.out "$STATE/slurmidle/ddl-slurmidle-$job4.out"; squeue -s; fail "a running step does not keep the Slurm cluster busy"; }
wait $step || { cat step.out; fail "ddl run step"; }
for _ in $(seq 60); do record_says 'r["idle_since"] is not None' && break; sleep 0.25; done
record_says 'r["idle_since"] is not None' || { cat "$rec"; fail "the Slurm cluster is not idle after its step"; }
flock "$rec.lock" python3 -c 'import json, sys, time
r = json.load(open(sys.argv[1])); r["idle_since"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 120))
json.dump(r, open(sys.argv[1], "w"))' "$rec" || fail "planting idle_since"
for _ in $(seq 80); do [ -z "$(squeue -h -j "$job4" -o %T -t PD,R,CG 2>/dev/null)" ] && break; sleep 0.25; done
[ -z "$(squeue -h -j "$job4" -o %T -t PD,R,CG 2>/dev/null)" ] || { cat "$rec"; fail "job $job4 still holds the nodes after its idle minutes"; }
expect_in "$STATE/slurmidle/ddl-slurmidle-$job4.out" "^ddl-idle: autostop ends the allocation at .*: idle since .*, past autostop.idle_minutes 1 (scancel $job4)$" \
  "the job's output does not say why it ended"
ddl status slurmidle >is.out 2>&1 || { cat is.out; fail "status of the ended cluster"; }
expect_in is.out "^ended by autostop at .*: idle since .*, past autostop.idle_minutes 1 (scancel $job4)$" "status of the ended cluster"
ddl list >il.out || fail "list"
grep -Eq "^slurmidle +slurm .* ended by autostop .* ended$" il.out || { cat il.out; fail "list does not show the cluster ended by autostop"; }
ddl gc --expired -y --prefix slurmidle >ig.out 2>&1 || { cat ig.out; fail "gc --expired of the ended cluster"; }
grep -q "gc: 1 destroyed, 0 failed" ig.out && grep -q "ended by autostop" ig.out || { cat ig.out; fail "gc --expired did not clean up"; }
[ ! -e "$STATE/slurmidle" ] || fail "state of slurmidle left"
echo "autostop on Slurm: $((SECONDS - t_idle)) s"
ok "autostop on Slurm: a step keeps the job busy; once idle past idle_minutes the job scancels itself (its output says why); status, list, gc --expired catch up"
