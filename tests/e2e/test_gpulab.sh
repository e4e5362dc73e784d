#!/usr/bin/env bash
# Target gpulab over API v4.0 (as imec's current CLI calls it) against an HTTPS stand-in of the GPULab API
# (tests/fakes/gpulab_server.py) that requires
# a client certificate from a test CA made here with openssl; a started job's container is a real local
# node in which the stand-in runs the job's command as docker-py and Docker do (ENTRYPOINT + command, a
# string split into words, no shell), so the node answers SSH only because ddl's command starts sshd.
# jobs-per-gpu across GPUs refused at validate time; deploy of one 3-GPU job -> exec -> destroy cancels it
# with GPULab's documented cancel (PUT …/jobs/<id>/state/status, body CANCELLED; the stand-in refuses
# DELETE with 405); the old string form of the command fails to start; refused certificates; an image
# whose ENTRYPOINT cannot run fails deploy with the job's log; a job that never leaves the queue; the same
# deploy through GPULab's SSH proxy (a jump host); a legacy wall2 login refused at pre-flight; an 11th job
# refused by plan under SLICES AI's fair use; the jobs' lease in status, list and run; with autostop the
# master's idle clock ends its job (FINISHED) once idle, and status, list and gc --expired catch up. A line from the
# middle of alice's private key is the planted secret: it must be in nothing ddl writes or runs (state,
# rendered jobs, logs, output, argv, subprocess environments).
# DDL_E2E_PREFIX prefixes the cluster names (concurrent runs).
source "$(dirname "$0")/lib.sh"
P=${DDL_E2E_PREFIX:-}
fakes="$DDL_SOURCE_DIR/tests/fakes"
export DDL_FAKE_NODES="${DDL_FAKE_NODES:-$DDL_BINARY_DIR/tests/fakes/ddl-fake-nodes}"
[ -x "$DDL_FAKE_NODES" ] || fail "missing $DDL_FAKE_NODES (build the tests/fakes tools)"
server_pid=""
stop_server() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  server_pid=""
  for d in "$WORK"/gl-*/nodes/*/; do [ -d "$d" ] && "$DDL_FAKE_NODES" down --id "$(basename "$d")" --state-dir "$(dirname "$d")" >/dev/null 2>&1; done
  return 0
}
trap 'rc=$?; stop_server; (exit $rc); cleanup' EXIT

# Test PKI: a CA, the server's certificate for 127.0.0.1, alice's client certificate (cert + key in one PEM,
# as iLab.t hands it out), mallory's from the same CA (not a GPULab user) and eve's self-signed one.
pki() {
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=ddl test CA" -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext -out server.pem 2>/dev/null
  # The user URN and e-mail in subjectAltName, as iLab.t's login certificates carry them (bob's of the
  # legacy wall2 authority).
  for u in alice mallory bob carol dave; do
    local auth=ilabt.imec.be; [ $u = bob ] && auth=wall2.ilabt.iminds.be
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$u" -keyout $u.key -out $u.csr 2>/dev/null
    printf 'subjectAltName=URI:urn:publicid:IDN+%s+user+%s,email:%s@example.org\n' $auth $u $u >$u.ext
    openssl x509 -req -in $u.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile $u.ext -out $u.crt 2>/dev/null
    cat $u.crt $u.key >$u.pem; chmod 600 $u.pem $u.key
  done
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=alice" -keyout eve.key -out eve.crt \
    -addext "subjectAltName=URI:urn:publicid:IDN+ilabt.imec.be+user+alice" 2>/dev/null
  cat eve.crt eve.key >eve.pem; chmod 600 eve.pem
}
pki
export GPULAB_CA_BUNDLE="$WORK/ca.pem"

image=gitlab.ilabt.imec.be:4567/ddl/pytorch:24.05
broken=gitlab.ilabt.imec.be:4567/ddl/broken:1
start_server() { # NAME MODE [stand-in options]
  stop_server
  local dir="$WORK/gl-$1" mode=$2; shift 2; mkdir -p "$dir"; rm -f "$dir/port"
  # The test image has an ENTRYPOINT that ends in exec "$@" (as NGC's images); the broken one names an
  # ENTRYPOINT this machine lacks.
  python3 "$fakes/gpulab_server.py" --cert server.pem --key server.key --ca ca.pem --state "$dir" \
    --port-file "$dir/port" --users alice --project ddltest --mode "$mode" --log "$dir/events.log" \
    --image "$image=[\"$fakes/gpulab_images/entrypoint.sh\"]" --project-share "$WORK/project_ghent" --image "$broken=[\"/opt/nvidia/nvidia_entrypoint.sh\"]" \
    "$@" 2>"$dir/server.err" &
  server_pid=$!
  for _ in $(seq 50); do [ -s "$dir/port" ] && break; sleep 0.1; done
  [ -s "$dir/port" ] || { cat "$dir/server.err"; fail "the GPULab stand-in did not start"; }
  port=$(cat "$dir/port"); events="$dir/events.log"
}
# Cancel requests the stand-in accepted: GPULab's documented PUT …/jobs/<id>/state/status with CANCELLED.
cancel_puts() { grep -c '^PUT /api/gpulab/v4\.0/jobs/[0-9a-f-]*/state/status CANCELLED$' "$events"; }

api() { curl -sS --cacert "$WORK/ca.pem" --cert "$WORK/alice.pem" "$@"; }
job_state() { api "https://127.0.0.1:$port/api/gpulab/v4.0/jobs/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"]["status"])'; }
write_spec() { # NAME LAYOUT [extra lines]
  local name=$1 layout=$2; shift 2
  { cat <<YAML
apiVersion: ddl/v1
name: $name
target: gpulab
nodes:
  master: {gpus: 1}
  workers: {count: 2, gpus: 1}
gpulab:
  project: ddltest
  cluster_id: "3"
  docker_image: ${IMAGE:-$image}
  layout: $layout
  api_url: https://127.0.0.1:$port/api/gpulab/v4.0
  wait_minutes: 1
  ssh_via: ${SSH_VIA:-auto}
  project_share: ${PROJECT_SHARE:-false}
gpu:
  driver: false
services:
  nfs: {enabled: false}
YAML
    for l in "$@"; do printf '%s\n' "$l"; done; } >"$name.yaml"
  CLUSTERS+=("$name")
}

start_server main normal
key_line=$(sed -n 15p alice.key) # deep in the private exponent and primes: in no certificate
[ ${#key_line} = 64 ] || fail "key line: '$key_line'"
secret_watch
write_spec ${P}glmulti jobs-per-gpu
rc=0; ddl validate ${P}glmulti.yaml >v.log 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "gpulab.layout: jobs-per-gpu cannot train across 3 jobs" v.log && grep -q "use gpulab.layout: one-job" v.log \
  || { cat v.log; fail "jobs-per-gpu across 3 GPUs not refused with the reason and the working layout"; }
ok "jobs-per-gpu across GPUs is refused at validate time, naming one-job"
mkdir -p project_ghent
PROJECT_SHARE=true write_spec ${P}gle2e one-job "runtime:" "  lease_warn_minutes: 2000"
GPULAB_CERT="$WORK/alice.pem" ddl deploy ${P}gle2e.yaml >d.log 2>&1 || { cat d.log; fail "deploy on GPULab"; }
[ "$(grep -c '^Queued ' "$events")" = 1 ] || { cat "$events"; fail "one job submitted"; }
grep -q "Running .* ddl-${P}gle2e-master$" "$events" || fail "job of master running"
e2e_job=$(awk '/^Queued /{print $2; exit}' "$events")
# Docker ran the image's ENTRYPOINT with ddl's command after it: a shell and its program, one argument.
grep -q "^exec $e2e_job \[\"$fakes/gpulab_images/entrypoint.sh\", \"/bin/sh\", \"-c\", \"set -eu; " "$events" \
  || { cat "$events"; fail "the job's container did not run ENTRYPOINT + [/bin/sh, -c, program]"; }
joblog=$(api "https://127.0.0.1:$port/api/gpulab/v4.0/jobs/$e2e_job/log")
grep -q "^== ddl test image: entrypoint ran with 3 argument(s) ==$" <<<"$joblog" && grep -q "^ddl: sshd for node master of cluster ${P}gle2e on port 22$" <<<"$joblog" \
  || { echo "$joblog"; fail "the job's log (GET …/jobs/<id>/log) does not show the command starting sshd"; }
out=$(ddl exec --cluster ${P}gle2e -- hostname) || fail "exec on the job"
[ "$(grep -c '^\[' <<<"$out")" = 1 ] || { echo "$out"; fail "exec output of one job"; }
grep -q "alice.pem\|BEGIN" "$STATE/${P}gle2e/logs/ddl.log" && fail "certificate path or key material in the log"
api "https://127.0.0.1:$port/api/gpulab/v4.0/jobs/$e2e_job" | python3 -c '
import json, sys
j = json.load(sys.stdin)
o = j["owner"]
assert o["projectUrn"] == "urn:publicid:IDN+ilabt.imec.be+project+ddltest", o
assert o["userUrn"] == "urn:publicid:IDN+ilabt.imec.be+user+alice" and o["userEmail"] == "alice@example.org", o
assert j["deploymentEnvironment"] == "production", j
assert [k.split()[0] for k in j["request"]["extra"]["sshPubKeys"]] == ["ssh-ed25519"], j["request"]["extra"]
' || fail "the v4.0 job body (owner from the certificate, deploymentEnvironment, extra.sshPubKeys)"
ddl exec --cluster ${P}gle2e -- 'echo from-the-job >/shared/share-test' >/dev/null || fail "writing into the shared folder"
[ "$(cat project_ghent/share-test 2>/dev/null)" = from-the-job ] || fail "the job's /shared is not the project's share (PROJECT_SHARE_AUTO)"
items=$(api "https://127.0.0.1:$port/api/gpulab/v4.0/jobs?user_urn=urn%3Apublicid%3AIDN%2Bilabt.imec.be%2Buser%2Balice&page_size=200" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
[ "$items" -ge 1 ] || fail "GET jobs?user_urn= lists no items"
ok "deploy: one 3-GPU job submitted over API v4.0 (owner from the certificate's URN and e-mail; the project's share as /shared) with a client certificate; its command (ENTRYPOINT + sh -c) started sshd; reached over SSH"
# The job ends maxDuration (1 day) after GPULab's eventTimes.RUNNING: status and list show it, and run
# warns (lease_warn_minutes 2000 is more than the day left).
ddl status ${P}gle2e >s.out || fail "status"
grep -Eq '^lease ends [0-9T:-]+Z \(in 2[34]h [0-9]+m\)$' s.out || { cat s.out; fail "status shows no lease"; }
ddl list >ls.out || fail "list"
grep -q "LEASE LEFT" ls.out && grep -Eq "^${P}gle2e .* 2[34]h [0-9]+m$" ls.out || { cat ls.out; fail "list shows no lease"; }
ddl run --cluster ${P}gle2e -np 1 -- hostname >r.out 2>&1 || { cat r.out; fail "run on the job"; }
grep -Eq "the gpulab nodes of cluster ${P}gle2e: lease ends .*, within runtime.lease_warn_minutes \(2000\)" r.out || { cat r.out; fail "run did not warn of the lease"; }
ok "lease: status and list show when the job ends (RUNNING + maxDuration); run warns within lease_warn_minutes"

# The command as one string (what ddl sent before), in an image without an ENTRYPOINT (the page's
# debian:stable): docker-py splits it into words and runs no shell, so the container executes `set` and never
# starts.
ddl render ${P}gle2e.yaml --out rendered-e2e >/dev/null 2>&1 || fail "render"
python3 - rendered-e2e/gpulab/master.json >old-form.json <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))
cmd = job["request"]["docker"]["command"]
assert cmd[:2] == ["/bin/sh", "-c"], cmd
job["request"]["docker"]["command"] = cmd[2]
job["name"] = "old-string-form"
job["request"]["docker"]["image"] = "debian:stable"
print(json.dumps(job))
PY
old_job=$(api -H 'Content-Type: application/json' --data @old-form.json "https://127.0.0.1:$port/api/gpulab/v4.0/jobs") || fail "submit the old form"
[[ "$old_job" =~ ^[0-9a-f-]{36}$ ]] || fail "v4.0 POST jobs did not answer the id as text: '$old_job'"
for _ in $(seq 100); do st=$(job_state "$old_job"); [ "$st" = Queued ] || [ "$st" = Starting ] || break; sleep 0.1; done
[ "$st" = Failed ] || fail "the old string form reached $st, not Failed"
grep -q "^Running $old_job " "$events" && fail "the old string form ran"
api "https://127.0.0.1:$port/api/gpulab/v4.0/jobs/$old_job/log" | grep -q 'exec: "set": executable file not found in \$PATH' \
  || fail "the old form's log does not say that set was not found"
ok "the old command (one string with a shell program) fails to start as docker-py runs it: exec \"set\" not found"
# deploy --replace master (issue 54): the node's job is cancelled (PUT state/status CANCELLED) and waited
# for, a new job is submitted for the node, and ddl pins the new job's host key; asked first (-y here).
GPULAB_CERT="$WORK/alice.pem" ddl deploy -y ${P}gle2e.yaml --replace master >rep.log 2>&1 || { cat rep.log; fail "deploy --replace master on GPULab"; }
rep_job=$(ddl --output json status ${P}gle2e | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_data"]["jobs"]["master"])')
[ -n "$rep_job" ] && [ "$rep_job" != "$e2e_job" ] || fail "no new job for master after --replace ($e2e_job -> '$rep_job')"
[ "$(cancel_puts)" = 1 ] && grep -q "^Cancelled $e2e_job " "$events" || { cat "$events"; fail "--replace did not cancel job $e2e_job"; }
grep -q "^Running $rep_job .*ddl-${P}gle2e-master$" "$events" || { cat "$events"; fail "the new job $rep_job is not running"; }
[ "$(ddl exec --cluster ${P}gle2e -- hostname | grep -c '^\[')" = 1 ] || fail "exec on the new job"
ok "deploy --replace master on GPULab: job $e2e_job cancelled, job $rep_job submitted and reached over SSH"
cp -a "$STATE/${P}gle2e" state-before-destroy
GPULAB_CERT="$WORK/alice.pem" ddl destroy -y ${P}gle2e >x.log 2>&1 || { cat x.log; fail "destroy"; }
[ "$(cancel_puts)" = 2 ] || { cat "$events"; fail "destroy sent PUT …/state/status CANCELLED for the job"; }
[ "$(grep -c '^Cancelled ' "$events")" = 2 ] || { cat "$events"; fail "destroy cancelled the job"; }
grep -q ' DELETE ' "$events" && { cat "$events"; fail "ddl sent a DELETE (GPULab documents none on jobs)"; }
# v3.0's page documents no DELETE on jobs (v4.0 has one, which ddl does not call).
[ "$(curl -s -o /dev/null -D - --cacert "$WORK/ca.pem" --cert "$WORK/alice.pem" -X DELETE "https://127.0.0.1:$port/api/gpulab/v3.0/jobs/$(awk '/^Queued /{print $2; exit}' "$events")" | tr -d '\r' | grep -E '^HTTP/|^Allow:' | tr '\n' ' ')" = "HTTP/1.1 405 Method Not Allowed Allow: GET " ] || fail "the stand-in did not refuse DELETE on a job with 405 and Allow: GET"
# The stand-in's worker takes the cancelled job's nodes down after destroy returns, as GPULab does.
wait_for 30 "the cancelled job's nodes to go: job nodes left after destroy" eval '! ip netns list | grep "^ddl-${P}gl"'
[ ! -e "$STATE/${P}gle2e" ] || fail "state of ${P}gle2e left"
ok "destroy cancelled the cluster's job (PUT state/status; DELETE is refused with 405); nothing left"
secret_sweep "GPULab client key" "$key_line" '/alice\.(key|pem)$' "$WORK"

# autostop on GPULab: the master's idle clock ends the job itself once idle past autostop.idle_minutes (no
# credential on the node): it ends the job's command (ddl's sshd, /etc/ddl/job.pid), the container exits and
# GPULab reports the job FINISHED; the job's log says why, and ddl's state catches up on the next command.
# The clock's decisions are made at once (its tick over ddl exec, the load limit lifted: this machine's load
# is not the cluster's); "idle for 2 minutes" is planted by moving the record's idle_since back.
t_idle=$SECONDS
write_spec ${P}glidle one-job "autostop: {idle_minutes: 1}"
GPULAB_CERT="$WORK/alice.pem" ddl deploy ${P}glidle.yaml >i.log 2>&1 || { cat i.log; fail "deploy with autostop"; }
idle_job=$(awk -v n="ddl-${P}glidle-master" '$1 == "Running" && $3 == n {print $2}' "$events" | tail -1)
# These job nodes share this machine's file system, so configure applies no idle_clock role there: its
# settings are rendered here by Ansible's template module from the role's template, its defaults and the
# cluster's rendered variables, and put on the master as the role puts them.
roles="$DDL_SOURCE_DIR/playbooks/roles"
ansible localhost -c local -m ansible.builtin.template -a "src=$roles/idle_clock/templates/idle.env.j2 dest=$WORK/idle.env" \
  -e "@$roles/idle_clock/defaults/main.yml" -e "@$STATE/${P}glidle/rendered/ansible/vars.json" -e ansible_user=root >ie.out 2>&1 ||
  { cat ie.out; fail "rendering the idle clock's settings"; }
grep -qx DDL_IDLE_END=gpulab "$WORK/idle.env" && grep -qx DDL_IDLE_MINUTES=1 "$WORK/idle.env" ||
  { cat "$WORK/idle.env"; fail "the idle clock's settings do not let it end the job"; }
ddl exec --cluster ${P}glidle -- "echo $(base64 -w0 "$WORK/idle.env") | base64 -d >/etc/ddl/idle.env" || fail "idle.env on the master"
rec=/var/lib/ddl/idle/${P}glidle.json # in this machine's /var/lib, which the job nodes share: an earlier run's
ddl exec --cluster ${P}glidle -- rm -f "$rec" || fail "removing an earlier run's record"
ddl exec --cluster ${P}glidle -- env DDL_IDLE_CPU_LOAD=1000 /opt/ddl/bin/ddl-idle tick >t1.out 2>&1 || { cat t1.out; fail "tick"; }
grep -q '"idle_since": "20' t1.out && grep -q '"source": {"[^"]*": "load"}' t1.out || { cat t1.out; fail "the cluster is not idle"; }
ddl exec --cluster ${P}glidle -- python3 -c "import json, time
p = '$rec'; r = json.load(open(p)); r['idle_since'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() - 120))
json.dump(r, open(p, 'w'))" || fail "planting idle_since"
# The tick ends the session it runs in: started on its own.
ddl exec --cluster ${P}glidle -- 'DDL_IDLE_CPU_LOAD=1000 setsid /opt/ddl/bin/ddl-idle tick >/dev/null 2>&1 </dev/null &' >/dev/null 2>&1 || true
for _ in $(seq 100); do [ "$(job_state "$idle_job")" = Finished ] && break; sleep 0.2; done
[ "$(job_state "$idle_job")" = Finished ] || { cat "$events"; fail "the idled job is $(job_state "$idle_job"), not Finished"; }
grep -q "^Cancelled $idle_job " "$events" && fail "the idled job was cancelled, not ended by its command"
api "https://127.0.0.1:$port/api/gpulab/v4.0/jobs/$idle_job/log" | grep -q "^ddl-idle: autostop ends the allocation at .*: idle since .*, past autostop.idle_minutes 1 (the job's command" ||
  fail "the job's log does not say why it ended"
GPULAB_CERT="$WORK/alice.pem" ddl status ${P}glidle >is.out 2>&1 || { cat is.out; fail "status of the ended cluster"; }
grep -q "^ended by autostop at .*: ddl-idle: autostop ends the allocation" is.out || { cat is.out; fail "status does not say autostop ended it"; }
grep -qi "fail\|do not answer" is.out && { cat is.out; fail "status of the ended cluster reports a failure"; }
ddl list >il.out || fail "list"
grep -Eq "^${P}glidle +gpulab .* ended by autostop .* ended$" il.out || { cat il.out; fail "list does not show the cluster ended by autostop"; }
GPULAB_CERT="$WORK/alice.pem" ddl gc --expired -y --prefix ${P}glidle >ig.out 2>&1 || { cat ig.out; fail "gc --expired of the ended cluster"; }
grep -q "gc: 1 destroyed, 0 failed" ig.out && grep -q "ended by autostop" ig.out || { cat ig.out; fail "gc --expired did not clean up the ended cluster"; }
[ ! -e "$STATE/${P}glidle" ] || fail "state of ${P}glidle left"
echo "autostop on GPULab: $((SECONDS - t_idle)) s"
ok "autostop on GPULab: the idle clock ends its job's command (FINISHED, its log says why); status, list show it ended by autostop; gc --expired cleans up"

# A cluster whose state folder is lost (a CI job's container gone): `ddl gc --spec` asks GPULab itself.
write_spec ${P}glleak one-job
GPULAB_CERT="$WORK/alice.pem" ddl deploy ${P}glleak.yaml >l.log 2>&1 || { cat l.log; fail "deploy of the cluster to leak"; }
leak_job=$(awk -v n="ddl-${P}glleak-master" '$1 == "Running" && $3 == n {print $2}' "$events" | tail -1)
[ -n "$leak_job" ] || { cat "$events"; fail "no running job for the cluster to leak"; }
gc_leak() { GPULAB_CERT="$WORK/alice.pem" "$DDL" --state-dir "$WORK/other-state" gc --older-than 0s --prefix ${P}glleak --target none --spec ${P}glleak.yaml "$@"; }
gc_leak --dry-run >g0.log 2>&1 || { cat g0.log; fail "gc --spec while the state folder exists"; }
expect_in g0.log "not touched: ${P}glleak (gpulab: its state is in $STATE/${P}glleak)" "a cluster with its state elsewhere was not left alone"
rm -rf "${STATE:?}/${P}glleak"
gc_leak --dry-run >g1.log 2>&1 || { cat g1.log; fail "gc --spec --dry-run"; }
grep -q "^would destroy ${P}glleak (found on target gpulab, .*GPULab job(s) $leak_job RUNNING; its state folder $STATE/${P}glleak is gone)" g1.log \
  || { cat g1.log; fail "gc --spec did not find the leaked job"; }
grep -q "^Cancelled $leak_job " "$events" && fail "--dry-run cancelled the job"
# gc --expired --spec reads the end GPULab itself keeps: maxDuration after the job started running.
GPULAB_CERT="$WORK/alice.pem" "$DDL" --state-dir "$WORK/other-state" gc --expired --spec ${P}glleak.yaml -y >gx.log 2>&1 ||
  { cat gx.log; fail "gc --expired --spec"; }
expect_in gx.log "^ddl gc: not yet: ${P}glleak (gpulab: its lifetime ends .* (in 23h 5[0-9]m))" "gc --expired --spec: GPULab's maxDuration"
expect_in gx.log "^gc: 0 destroyed, 0 failed" "gc --expired --spec destroyed a job before its maxDuration"
gc_leak -y >g2.log 2>&1 || { cat g2.log; fail "gc --spec -y"; }
expect_in g2.log "gc: 1 destroyed, 0 failed" "gc --spec did not destroy the leaked cluster"
expect_in "$events" "^Cancelled $leak_job " "the leaked job was not cancelled"
ok "gc --spec: a leaked cluster found on GPULab (state elsewhere left alone; state gone: its job cancelled)"

write_spec ${P}glauth one-job
rc=0; GPULAB_CERT="$WORK/mallory.pem" ddl deploy ${P}glauth.yaml >a.log 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a certificate of a non-user was accepted"
grep -q "GPULab answered HTTP 403 (user mallory is not allowed to use GPULab); the client certificate was not accepted" a.log \
  || { cat a.log; fail "403 message"; }
rc=0; GPULAB_CERT="$WORK/eve.pem" ddl deploy ${P}glauth.yaml >e.log 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a certificate from another CA was accepted"
expect_in e.log "the TLS connection failed: check that the client certificate" "handshake message"
queued=$(grep -c '^Queued ' "$events" || true)
rc=0; GPULAB_CERT="$WORK/bob.pem" ddl deploy ${P}glauth.yaml >b.log 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a login of the legacy wall2 authority was accepted"
expect_in b.log "a login PEM from the legacy wall2 authority ($WORK/bob.pem), which GPULab no longer supports: use an account from https://account.ilabt.imec.be/" "legacy login message"
[ "$(grep -c '^Queued ' "$events" || true)" = "$queued" ] || fail "a job was submitted with the legacy login"
grep -q "BEGIN\|PRIVATE" a.log e.log b.log && fail "key material in the output"
ok "refused certificates: 403, a failed handshake, a legacy wall2 login at pre-flight, each with what to check"
GPULAB_CERT="$WORK/alice.pem" ddl destroy -y ${P}glauth >/dev/null 2>&1 || fail "destroy after auth failure"

start_server die normal
IMAGE=$broken write_spec ${P}gldie one-job
rc=0; GPULAB_CERT="$WORK/alice.pem" ddl deploy ${P}gldie.yaml >f.log 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat f.log; fail "deploy with an image whose ENTRYPOINT cannot run should fail"; }
grep -q "GPULab job [0-9a-f-]* for node master ended before it was ready (status FAILED); the last 1 line(s) of its log:" f.log \
  && grep -q '| docker: Error response from daemon: .*exec: "/opt/nvidia/nvidia_entrypoint.sh": no such file or directory' f.log \
  || { cat f.log; fail "the failed job's status and log were not shown"; }
GPULAB_CERT="$WORK/alice.pem" ddl destroy -y ${P}gldie >/dev/null 2>&1 || fail "destroy after a dead job"
[ "$(cancel_puts)" = 1 ] || { cat "$events"; fail "a cancel (PUT …/state/status) for the recorded job"; }
grep -q '^Cancelled ' "$events" && { cat "$events"; fail "the failed job was taken for a live one"; }
ok "an image whose ENTRYPOINT cannot run: the job FAILED, deploy shows GPULab's log; destroy leaves nothing"

# Carol and Dave: alice's fellow members of the project. GET jobs' pages hold 4 jobs here, so every listing
# below (10 and 20 jobs) is read page by page.
start_server queue never-start --users alice,carol,dave --max-page-size 4
write_spec ${P}glq one-job
rc=0; GPULAB_CERT="$WORK/alice.pem" timeout 150 "$DDL" --state-dir "$STATE" deploy ${P}glq.yaml >q.log 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat q.log; fail "queued jobs should time out"; }
expect_in q.log "still not running: master (job .*, QUEUED: No worker has a free GPU" "queue message"
GPULAB_CERT="$WORK/alice.pem" ddl destroy -y ${P}glq >/dev/null 2>&1 || fail "destroy of queued jobs"
[ "$(cancel_puts)" = 1 ] || { cat "$events"; fail "queued job: cancel (PUT …/state/status) sent"; }
grep -q '^Cancelled ' "$events" || fail "queued job cancelled"
ok "jobs stuck in the queue time out with the scheduler's reason; destroy cancels them"
# SLICES AI's fair use: 10 simultaneous jobs per user. With 10 of alice's jobs queued, a cluster that needs
# one more is refused by plan and by deploy before anything is submitted.
for i in $(seq 10); do
  api -H 'Content-Type: application/json' --data @rendered-e2e/gpulab/master.json "https://127.0.0.1:$port/api/gpulab/v4.0/jobs" >/dev/null ||
    fail "queueing job $i"
done
write_spec ${P}glfair one-job
queued=$(grep -c '^Queued ' "$events")
rc=0; GPULAB_CERT="$WORK/alice.pem" ddl plan ${P}glfair.yaml >fp.log 2>&1 || rc=$?
[ "$rc" != 0 ] || { cat fp.log; fail "plan over the fair-use limit"; }
expect_in fp.log "fair use allows 10 simultaneous jobs per user .*you have 10 queued or running and this cluster needs 1" "fair-use message"
rc=0; GPULAB_CERT="$WORK/alice.pem" ddl deploy ${P}glfair.yaml >fd.log 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "fair use allows 10" fd.log || { cat fd.log; fail "deploy over the fair-use limit"; }
[ "$(grep -c '^Queued ' "$events")" = "$queued" ] || fail "a job was submitted over the fair-use limit"
ok "fair use: with 10 jobs queued, plan and deploy refuse an 11th before submitting, naming the limit"
# And 20 per project, every member's together: with alice's 10, one of dave's and 9 of carol's queued,
# carol's next job is within her own 10 but past the project's 20 (listed by project URN, page by page).
api --cert "$WORK/dave.pem" -H 'Content-Type: application/json' --data @rendered-e2e/gpulab/master.json \
  "https://127.0.0.1:$port/api/gpulab/v4.0/jobs" >/dev/null || fail "queueing dave's job"
for i in $(seq 9); do
  api --cert "$WORK/carol.pem" -H 'Content-Type: application/json' --data @rendered-e2e/gpulab/master.json \
    "https://127.0.0.1:$port/api/gpulab/v4.0/jobs" >/dev/null || fail "queueing carol's job $i"
done
queued=$(grep -c '^Queued ' "$events")
rc=0; GPULAB_CERT="$WORK/carol.pem" ddl plan ${P}glfair.yaml >fq.log 2>&1 || rc=$?
[ "$rc" != 0 ] || { cat fq.log; fail "plan over the project's fair-use limit"; }
expect_in fq.log "fair use allows 20 simultaneous jobs per project .*project ddltest has 20 queued or running (its members' together) and this cluster needs 1" "project fair-use message"
[ "$(grep -c '^Queued ' "$events")" = "$queued" ] || fail "a job was submitted over the project's limit"
ok "fair use per project: 20 of the members' jobs queued, plan refuses carol's next one (the lists read page by page)"

# GPULab's SSH proxy: the job's node is behind a jump host (made with it, admitting alice's login key) and
# the state names it (sshProxyHost/Port/Username); ddl goes through it with the login PEM, pinning both keys.
start_server proxy normal --ssh proxy --proxy-key "$(ssh-keygen -y -f alice.key)"
SSH_VIA=proxy write_spec ${P}glpx one-job
GPULAB_CERT="$WORK/alice.pem" ddl deploy ${P}glpx.yaml >p.log 2>&1 || { cat p.log; fail "deploy through GPULab's SSH proxy"; }
jump=$(python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["nodes"][0]; print(n["jump"], n["jump_key"], n["address"])' "$STATE/${P}glpx/state.json")
read -r jump_to jump_key node_addr <<<"$jump"
[[ "$jump_to" =~ ^root@[0-9.]+:22$ ]] && [ "$jump_key" = "$WORK/alice.pem" ] || fail "the node's jump: '$jump'"
expect_in p.log "reached through GPULab's SSH proxy $jump_to" "deploy did not say it goes through the proxy"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["state"]; assert r["sshHost"] == sys.argv[2], r' \
  <(api "https://127.0.0.1:$port/api/gpulab/v4.0/jobs/$(awk '/^Queued /{print $2; exit}' "$events")" | python3 -c 'import json,sys; print(json.dumps({"state": json.load(sys.stdin)["state"]["resources"]}))') "$node_addr" \
  || fail "the node's address is not the job's sshHost behind the proxy"
[ "$(wc -l <"$STATE/${P}glpx/known_hosts")" -ge 2 ] || fail "the proxy's and the node's host keys are not both pinned"
out=$(ddl exec --cluster ${P}glpx -- hostname) || fail "exec through the proxy"
grep -q '^\[master\].*job' <<<"$out" || { echo "$out"; fail "exec output through the proxy"; }
GPULAB_CERT="$WORK/alice.pem" ddl destroy -y ${P}glpx >/dev/null 2>&1 || fail "destroy of the proxied cluster"
ok "ssh_via proxy: the job's node reached only through GPULab's SSH proxy, with the login key; exec works"
