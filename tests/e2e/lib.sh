# Shared helpers for the e2e scripts. Each test works in its own temp folder and state dir and
# destroys what it made, also when it fails.
set -euo pipefail
: "${DDL:?DDL must point at the ddl binary}"
# shellcheck source=../support/expect.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)/expect.sh"
WORK=$(mktemp -d /tmp/ddl-e2e.XXXXXX)
STATE="$WORK/state"
# The state folders ddl records as deployed from (`ddl list --all`): this suite's own record.
export XDG_STATE_HOME="$WORK/xdg-state"
cd "$WORK"
CLUSTERS=()

cleanup() {
  local rc=$?
  set +e # everything below runs, whatever fails
  if [ -n "${SECRET_WATCH_PID:-}" ]; then kill "$SECRET_WATCH_PID" 2>/dev/null || true; fi
  for c in "${CLUSTERS[@]}"; do "$DDL" --state-dir "$STATE" destroy -y "$c" >/dev/null 2>&1; done
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

# wait_for SECONDS WHAT COMMAND...: runs COMMAND (a program, a function, or `eval 'a | b'`) until it
# succeeds, every WAIT_EVERY seconds (0.1); fails naming WHAT, with the last try's output, once SECONDS have
# passed. For state that a daemon or a background process makes (a record, a port, a file, a job's state):
# how long that takes depends on the machine, so a check waits for the state itself, never a fixed time.
wait_for() {
  local limit=$1 what=$2 out="$WORK/.wait_for.out" every=${WAIT_EVERY:-0.1} deadline; shift 2
  deadline=$((SECONDS + limit))
  until "$@" >"$out" 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail "waited $limit s for $what (last try: $*: $(tail -c 400 "$out" | tr '\n' ' '))"
    fi
    sleep "$every"
  done
}

# job_in_state ID STATE [CLUSTER]: true when `ddl jobs` lists job ID in STATE; prints the list (which
# wait_for shows when it gives up).
job_in_state() {
  local out
  out=$("$DDL" --state-dir "$STATE" jobs ${3:+"$3"} 2>&1) || true
  printf '%s\n' "$out"
  grep -q "^$1 .*$2" <<<"$out"
}

# gone PID: true once no process PID runs (none, or a zombie whose parent has not reaped it yet).
gone() { [ ! -e "/proc/$1" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]; }

# listening PORT: true once something accepts TCP connections on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ddl_on_tty PROMPT ANSWER ARGS...: runs `ddl ARGS...` on a pseudo-terminal, waits for PROMPT (a piece of
# the question), types ANSWER; prints ddl's exit status on stdout and what the terminal showed on stderr.
ddl_on_tty() {
  python3 - "$DDL" "$STATE" "$@" <<'PY'
import os, pty, sys, time
ddl, state, prompt, answer = sys.argv[1:5]
pid, fd = pty.fork()
if pid == 0:
    os.execv(ddl, [ddl, "--state-dir", state] + sys.argv[5:])
seen = b""
deadline = time.time() + 300
try:
    while prompt.encode() not in seen and time.time() < deadline:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        seen += chunk
    os.write(fd, answer.encode() + b"\n")
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        seen += chunk
except OSError:
    pass
_, status = os.waitpid(pid, 0)
sys.stderr.write(seen.decode(errors="replace"))
print(os.waitstatus_to_exitcode(status))
PY
}

# The tag in the names of cluster NAME's host links (LocalPlan's stable_hash, 24 bits in hex).
link_tag() {
  python3 - "$1" <<'PY'
import sys
h = 2166136261
for c in sys.argv[1].encode():
    h ^= c; h = (h * 16777619) & 0xffffffff
print("%06x" % (h & 0xffffff))
PY
}

# assert_gone NAME [TAG]: nothing of cluster NAME is left on the machine (its links: TAG, default the tag of
# its name; a cluster whose tag was salted on a collision passes its own).
assert_gone() {
  local name=$1 tag=${2:-}
  if ip netns list | grep -q "^ddl-$name-"; then fail "namespaces of $name left: $(ip netns list | grep "ddl-$name-")"; fi
  if pgrep -f "$STATE/$name/" >/dev/null; then fail "processes of $name left: $(pgrep -af "$STATE/$name/")"; fi
  if [ -e "$STATE/$name" ]; then fail "state folder of $name left"; fi
  if command -v podman >/dev/null && [ -n "$(podman ps -a --filter "label=ddl.cluster=$name" --format '{{.Names}}')" ]; then
    fail "containers of $name left"
  fi
  [ -n "$tag" ] || tag=$(link_tag "$name")
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
  # Ansible's own strategy: with one task per node, mitogen's per-node bootstrap costs more than it saves
  # (2-node deploy 6.8 s against 4.2 s). The suites that apply the real roles run mitogen.
  export DDL_ANSIBLE_STRATEGY=linear
}

# Planted-secret sweep. secret_watch starts a background watcher that, every 20 ms until
# secret_sweep, records the argv (/proc/*/cmdline) of every process on the machine, and the environment
# of every process that is not the ddl binary itself (ddl's own environment holds what the user put there;
# its children must not inherit secrets they do not need). Only distinct values are kept, in
# $WORK/.secret-watch/ (0700), so a secret that is only known after the run (the generated Jupyter token)
# can be looked for afterwards.
secret_watch() {
  local dir="$WORK/.secret-watch"
  mkdir -p "$dir" && chmod 700 "$dir" && rm -f "$dir/stop" "$dir/done"
  /usr/bin/python3 - "$dir" "$(readlink -f "$DDL")" <<'PY' &
import os, sys, time
out, ddl_exe = sys.argv[1], sys.argv[2]
me, shell = str(os.getpid()), os.getppid()
argvs, envs, seen, snapshots, samples = set(), set(), set(), 0, 0
# Until secret_sweep asks it to stop, or the test's shell is gone (a failing test must not leave it behind).
while not os.path.exists(out + "/stop") and os.getppid() == shell:
    snapshots += 1
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read()
            argvs.add(argv.replace(b"\0", b" "))
            samples += 1
            # A program's environment is fixed at exec: read it once per (pid, argv).
            if (pid, argv) not in seen:
                seen.add((pid, argv))
                if os.readlink(f"/proc/{pid}/exe") != ddl_exe:
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        # "== argv" heads each record so that a failure can name the process.
                        envs.add(b"== " + argv.replace(b"\0", b" ")[:300] + b"\n" + f.read().replace(b"\0", b"\n"))
        except OSError:
            pass  # the process ended while we looked
    time.sleep(0.02)
for name, values in (("argv", argvs), ("environ", envs)):
    with open(f"{out}/{name}", "wb") as f:
        f.write(b"\n".join(sorted(values)) + b"\n")
with open(out + "/done", "w") as f:
    f.write(f"{snapshots} {samples} {len(argvs)}\n")
PY
  SECRET_WATCH_PID=$!
}

# secret_sweep NAME SECRET ALLOWED_RE PATH...: stops the watcher (if one runs) and fails if SECRET was in any
# argv or child environment it saw, or in any file under PATH... (state folders, rendered files, logs,
# JUnit, captured stdout/stderr) whose path does not match ALLOWED_RE (an extended regex; '^$' allows
# none). Every allowed file that holds it must be mode 0600. Prints the figures for docs/reliability.md.
secret_sweep() {
  local name=$1 secret=$2 allowed=$3; shift 3
  local dir="$WORK/.secret-watch" figures="no process watch"
  [ ${#secret} -ge 8 ] || fail "secret_sweep $name: a secret of ${#secret} characters would match by chance"
  if [ -n "${SECRET_WATCH_PID:-}" ]; then
    touch "$dir/stop"
    for _ in $(seq 200); do [ -e "$dir/done" ] && break; sleep 0.05; done
    [ -e "$dir/done" ] || fail "secret_sweep $name: the process watcher did not finish"
    wait "$SECRET_WATCH_PID" 2>/dev/null || true
    SECRET_WATCH_PID=""
    local snapshots samples distinct
    read -r snapshots samples distinct <"$dir/done"
    [ "$snapshots" -ge 1 ] || fail "secret_sweep $name: no process snapshot taken"
    if grep -qF -- "$secret" "$dir/argv"; then
      fail "secret_sweep $name: the secret was in a process's argv: $(grep -F -- "$secret" "$dir/argv" | head -3 | cut -c1-300)"
    fi
    if grep -qF -- "$secret" "$dir/environ"; then
      fail "secret_sweep $name: processes other than ddl had the secret in their environment: $(awk -v s="$secret" '/^== /{h=substr($0, 4)} index($0, s){print h}' "$dir/environ" | sort -u | head -5 | tr '\n' ';')"
    fi
    figures="$snapshots process snapshots ($samples argv samples, $distinct distinct)"
  fi
  local files hits=() f
  files=$(find "$@" -type f 2>/dev/null | grep -v '/\.secret-watch/' | wc -l)
  [ "$files" -ge 1 ] || fail "secret_sweep $name: nothing to search in $*"
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    if [[ "$f" =~ $allowed ]]; then
      [ "$(stat -c %a "$f")" = 600 ] || fail "secret_sweep $name: $f holds the secret and is mode $(stat -c %a "$f"), not 600"
    else
      hits+=("$f")
    fi
  done < <(grep -rlF --exclude-dir=.secret-watch -- "$secret" "$@" 2>/dev/null || true)
  [ ${#hits[@]} = 0 ] || fail "secret_sweep $name: the secret was written to: ${hits[*]}"
  ok "secret sweep ($name): 0 hits in $files files and $figures"
}

# The example trainer's output in $1 (`ddl run ... mlp_trainer --steps 15 --checksum` over $2 ranks):
# every replica's steps identical to rank 0's and the loss lower at the end; sets first and last.
check_trainer() {
  local out=$1 ranks=$2 r
  for ((r = 1; r < ranks; r++)); do
    diff <(grep '^\[0\] step' "$out" | sed 's/^\[0\] //') <(grep "^\[$r\] step" "$out" | sed "s/^\[$r\] //") >/dev/null \
      || fail "replica $r diverged from rank 0"
  done
  first=$(grep '^\[0\] step 0 ' "$out" | awk '{print $5}'); last=$(grep '^\[0\] step 14 ' "$out" | awk '{print $5}')
  python3 -c "import sys; sys.exit(0 if float('$last') < float('$first') else 1)" || fail "loss did not decrease ($first -> $last)"
}

# mpi_from_master CLUSTER KIND FILE NP LOG PROGRAM...: runs Open MPI's mpirun (KIND openmpi) or MPICH's
# mpiexec (KIND mpich) on the master with hostfile FILE and NP ranks of PROGRAM, its output in LOG; fails
# when the launch fails.
mpi_from_master() {
  local cluster=$1 kind=$2 file=$3 np=$4 log=$5 cmd attempt; shift 5
  case "$kind" in
    openmpi) cmd="mpirun.openmpi --allow-run-as-root --hostfile $file -np $np --mca btl tcp,self --mca oob_tcp_if_include eth0 $*" ;;
    mpich) cmd="mpiexec.mpich -f $file -n $np $*" ;;
    *) fail "mpi_from_master: unknown kind $kind" ;;
  esac
  for attempt in 1 2; do
    "$DDL" --state-dir "$STATE" exec --cluster "$cluster" --nodes master -- "$cmd" >"$log" 2>&1 && return 0
    # MPICH's Hydra now and then loses its own control socket while relaying a short job's output
    # ("HYDU_sock_write ... Bad file descriptor", then HYD_pmci_wait_for_completion; pmodels/mpich#1455):
    # a second try tells that apart from a hostfile it cannot use, which fails every time.
    if [ "$kind" = mpich ] && [ $attempt = 1 ] && grep -q "HYD_pmci_wait_for_completion" "$log"; then
      echo "note: Hydra lost its control socket on the first try; trying once more"
      continue
    fi
    cat "$log"; fail "$kind launcher with $file on $cluster"
  done
}

# launch_from_master CLUSTER KIND FILE NP "EXPECTED NODES": NP ranks of `hostname` through mpi_from_master;
# fails unless the sorted host names are EXPECTED (space-separated, with a trailing space).
launch_from_master() {
  local cluster=$1 kind=$2 file=$3 np=$4 expected=$5 log
  log="launch-$kind-$(basename "$file").log"
  mpi_from_master "$cluster" "$kind" "$file" "$np" "$log" hostname
  # Open MPI's rsh launcher may warn that setpgid lost a race with its child's exec ("[host:pid] plm:rsh:
  # Warning: setpgid(...) failed in parent"): harmless, and not a rank's output.
  [ "$(sed 's/^\[[^]]*\] //' "$log" | grep -v '^\[[^]]*:[0-9]*\] plm:rsh: Warning: setpgid' | sort | tr '\n' ' ')" = "$expected" ] ||
    { cat "$log"; fail "$kind ranks with $file"; }
}

# allreduce_from_master CLUSTER KIND FILE NP: the bundled ddl-allreduce-test on NP ranks through
# mpi_from_master, the runtime reading the launcher's own variables and the master from node.env; fails
# unless they ran as ONE job of NP ranks (one header, from rank 0, saying NP ranks: N jobs of one would
# print N headers of "1 ranks") and every result was exact.
allreduce_from_master() {
  local cluster=$1 kind=$2 file=$3 np=$4 log
  log="allreduce-$kind-$(basename "$file").log"
  mpi_from_master "$cluster" "$kind" "$file" "$np" "$log" /opt/ddl/bin/ddl-allreduce-test -b 4 -e 1M -f 16 -n 2 -w 1
  [ "$(grep -c 'ddl-allreduce-test: [0-9]* ranks' "$log")" = 1 ] && grep -q "# ddl-allreduce-test: $np ranks," "$log" ||
    { cat "$log"; fail "$kind with $file did not run one job of $np ranks"; }
  [ "$(grep -c '# all results exact' "$log")" = 1 ] || { cat "$log"; fail "$kind with $file: results not exact"; }
}
