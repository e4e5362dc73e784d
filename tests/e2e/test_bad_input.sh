#!/usr/bin/env bash
# Garbage in every CLI flag and spec value: empty, huge, negative, out of range, non-UTF-8 and path
# traversal (`../../etc`). Each case must exit 2 with a message on stderr that names what is wrong
# (an `error:` line with file:line:col for specs), must not crash or hang, and must write nothing: the
# scratch folder the commands run in (and every parent ../../ can reach inside it) is compared before
# and after. Huge CLI values are 100 KiB (Linux refuses a single argument over 128 KiB); huge spec
# values 1 MiB.
source "$(dirname "$0")/lib.sh"
LOGS="$WORK/logs"; mkdir -p "$LOGS"
SCRATCH="$WORK/scratch"; RUN="$SCRATCH/a/b/c"; mkdir -p "$RUN"
S="$RUN/st"                          # the state folder the commands get
cd "$RUN"
# A real, deployed-looking cluster is not needed: commands must refuse garbage before using one.
printf 'apiVersion: ddl/v1\nname: fltb\ntarget: local\n' >good.yaml
snapshot() { (cd "$SCRATCH" && find . -printf '%p %s %T@\n' | sort); }
before=$(snapshot)

HUGE=$(head -c 100000 /dev/zero | tr '\0' a)
HUGENUM=$(head -c 100000 /dev/zero | tr '\0' 9)
BAD8=$'\xff\xfe'
cases=0 failed=0
# expect RC ARGS...: runs ddl ARGS with a 20 s limit, checks the exit code and that stderr says something.
expect() {
  local want=$1; shift
  cases=$((cases + 1))
  local rc=0
  timeout 20 "$DDL" "$@" </dev/null >"$LOGS/out" 2>"$LOGS/err" || rc=$?
  local shown; shown=$(printf '%q ' "$@" | cut -c1-120)
  if [ "$rc" != "$want" ]; then
    echo "FAIL: ddl $shown: exit $rc, expected $want; stderr: $(head -c 300 "$LOGS/err")" >&2
    failed=$((failed + 1)); return
  fi
  if [ "$want" = 2 ] && [ ! -s "$LOGS/err" ]; then
    echo "FAIL: ddl $shown: exit 2 without a message" >&2; failed=$((failed + 1)); return
  fi
  if grep -q "fatal\|terminate called\|Sanitizer\|what():" "$LOGS/err"; then
    echo "FAIL: ddl $shown: crashed: $(head -c 300 "$LOGS/err")" >&2; failed=$((failed + 1))
  fi
}
G=(--state-dir "$S")

# Global flags.
for v in "" "$HUGE" "$BAD8/x" "/dev/null" "/proc/version/x"; do expect 2 --state-dir "$v" status fltb; done
expect 2 --output "" status; expect 2 --output "$HUGE" status; expect 2 --output "$BAD8" status
expect 2 --nonsense; expect 2; expect 2 "$BAD8"; expect 2 "$HUGE"

# Cluster and node names: empty, huge, traversal, non-UTF-8, option-like.
for v in "" "$HUGE" "../../etc" "../fltb" "/etc/passwd" "$BAD8" "-1" "FLTB" "fltb/../../x"; do
  [ -z "$v" ] && continue   # an empty ref means "the only cluster", tried below with none present
  for cmd in status destroy; do expect 2 "${G[@]}" $cmd "$v"; done
  expect 2 "${G[@]}" hostfile --cluster "$v"
  expect 2 "${G[@]}" exec --cluster "$v" -- true
  expect 2 "${G[@]}" ssh --cluster "$v" master
  expect 2 "${G[@]}" tunnel --cluster "$v" jupyter
  expect 2 "${G[@]}" run --cluster "$v" -- true
  expect 2 "${G[@]}" bench allreduce --cluster "$v"
done
for v in "" "$HUGE" "../../etc" "$BAD8"; do
  expect 2 init --name "$v" -o x.yaml
  expect 2 "${G[@]}" exec --cluster fltb --nodes "$v" -- true
  expect 2 "${G[@]}" ssh --cluster fltb "$v"
  expect 2 "${G[@]}" tunnel --cluster fltb --node "$v" jupyter
done

# Spec files: missing, empty path, a folder, a device, huge, traversal.
head -c 1100000 /dev/zero | tr '\0' '#' >"$LOGS/huge.yaml"
for f in "" "$HUGE.yaml" "../../etc" "/etc" "/dev/zero" "$LOGS/huge.yaml" "nope.yaml" "$BAD8.yaml"; do
  for cmd in validate render deploy smoke-test; do expect 2 "${G[@]}" $cmd "$f"; done
done

# Numbers: negative, zero where it makes no sense, huge, not a number.
for v in "-1" "0" "$HUGENUM" "abc" "" "1e3" "$BAD8"; do
  expect 2 "${G[@]}" deploy good.yaml --ssh-timeout "$v"
  expect 2 "${G[@]}" smoke-test good.yaml --ssh-timeout "$v"
  expect 2 "${G[@]}" exec --cluster fltb --timeout "$v" -- true
  expect 2 "${G[@]}" run --cluster fltb --np "$v" -- true
  expect 2 "${G[@]}" run --cluster fltb --port "$v" -- true
  expect 2 "${G[@]}" run --cluster fltb --startup-timeout "$v" -- true
  expect 2 "${G[@]}" tunnel --cluster fltb --local-port "$v" jupyter
  expect 2 "${G[@]}" bench allreduce --cluster fltb --iters "$v"
  expect 2 "${G[@]}" bench allreduce --cluster fltb --link-gbit "$v"
  expect 2 "${G[@]}" bench allreduce --cluster fltb --sizes "$v"
  expect 2 "${G[@]}" bench train --cluster fltb --steps "$v"
  expect 2 "${G[@]}" bench train --cluster fltb --batch "$v"
  expect 2 "${G[@]}" bench train --cluster fltb --nodes "$v"
  expect 2 "${G[@]}" gc --older-than "$v"
done
expect 2 "${G[@]}" run --cluster fltb --port 70000 -- true
expect 2 "${G[@]}" bench allreduce --cluster fltb --warmup -1
expect 2 "${G[@]}" bench train --cluster fltb --warmup -1
expect 2 "${G[@]}" gc --older-than "99999999999999999d"

# Words from a fixed set, and free-form values.
for v in "" "$HUGE" "$BAD8" "../../etc"; do
  expect 2 "${G[@]}" deploy good.yaml --only "$v"
  expect 2 "${G[@]}" hostfile --cluster fltb --format "$v"
  expect 2 init --target "$v" -o x.yaml
  expect 2 "${G[@]}" tunnel --cluster fltb "$v"
  expect 2 "${G[@]}" bench allreduce --cluster fltb --format "$v"
  expect 2 "${G[@]}" bench train --cluster fltb --model-profile "$v"
  expect 2 "${G[@]}" bench train --cluster fltb --bandwidths "$v"
  expect 2 "${G[@]}" run --cluster fltb -x "$v" -- true
  expect 2 "${G[@]}" run --cluster fltb --iface "$v" -- true
  expect 2 "${G[@]}" smoke-test good.yaml --notify "$v"
done

# --public-key takes one OpenSSH public key line: a private key, a binary or an empty file is bad input
# that names the problem; the matching .pub is accepted. In a folder of its own: the scratch
# folder must stay untouched by bad input.
K="$WORK/pubkey"; mkdir -p "$K"
"$DDL" init --target openstack -o "$K/os.yaml" >/dev/null || fail "init --target openstack"
ssh-keygen -q -t ed25519 -N '' -C e2e -f "$K/key" >/dev/null
for v in "$K/key" /bin/true /dev/null; do expect 2 "${G[@]}" render "$K/os.yaml" --out "$K/out" --public-key "$v"; done
expect 2 "${G[@]}" render "$K/os.yaml" --out "$K/out" --public-key "$K/key"
expect_in "$LOGS/err" "holds a private key" "a private key given as --public-key"
[ ! -e "$K/out" ] || fail "render wrote files with a refused --public-key"
expect 0 "${G[@]}" render "$K/os.yaml" --out "$K/out" --public-key "$K/key.pub"
grep -qF "$(cut -d' ' -f2 "$K/key.pub")" "$K/out/openstack/terraform/terraform.tfvars.json" ||
  fail "the public key is not in the rendered tfvars"
grep -rq "PRIVATE" "$K/out" && fail "a private key reached the rendered files"

# Messages for CLI mistakes: help as a command, a FIFO or a folder as the spec (no hang), the spec on
# stdin, a non-number where seconds are wanted, the state folder given as a file.
expect 0 help
expect_in "$LOGS/out" "^  deploy" "ddl help does not list deploy"
expect_in "$LOGS/out" "Exit codes: 0 done" "ddl help does not give the exit codes"
expect 0 help deploy
expect_in "$LOGS/out" "--force-configure" "ddl help deploy does not list --force-configure"
expect 2 help no-such-command
expect 0 help bench allreduce
expect_in "$LOGS/out" "--sizes" "ddl help bench allreduce does not show the sub-command's options"
expect 2 help bench no-such
# Completion from the command table: a command from its prefix, a deploy flag, the spec file.
"$DDL" completion bash >"$K/ddl.bash" || fail "ddl completion bash"
complete_words() { (cd "$K" && bash -c 'source ./ddl.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ddl; echo "${COMPREPLY[*]}"' _ "$@"); }
[ "$(complete_words ddl dep)" = deploy ] || fail "completion of 'ddl dep': $(complete_words ddl dep)"
[ "$(complete_words ddl deploy --force)" = --force-configure ] || fail "completion of 'ddl deploy --force'"
[ "$(complete_words ddl deploy os.y)" = os.yaml ] || fail "completion of a spec file"
# Whole output to a file first: `ddl … | head` under pipefail fails whenever ddl writes after head has gone.
"$DDL" completion zsh >"$K/ddl.zsh" || fail "ddl completion zsh"
head -2 "$K/ddl.zsh" | grep -q "bashcompinit" || { head -5 "$K/ddl.zsh"; fail "ddl completion zsh: no bashcompinit at its top"; }
# ... and the clusters of the state folder named on the line, and the values of options with choices.
mkdir -p "$K/cst/alpha" "$K/cst/beta" && echo '{}' >"$K/cst/alpha/state.json" && echo '{}' >"$K/cst/beta/state.json"
[ "$(complete_words ddl --state-dir cst status al)" = alpha ] || fail "completion of a cluster name: $(complete_words ddl --state-dir cst status al)"
[ "$(complete_words ddl --state-dir cst run --cluster b)" = beta ] || fail "completion of --cluster"
[ "$(complete_words ddl --output j)" = json ] || fail "completion of --output's value"
[ "$(complete_words ddl deploy os.yaml --only pro)" = "provision probe" ] || fail "completion of --only: $(complete_words ddl deploy os.yaml --only pro)"
[ "$(complete_words ddl hostfile --format m)" = mpich ] || fail "completion of hostfile --format"
# A mistyped command: exit 2, the nearest commands named.
expect 2 deplyo good.yaml
expect_in "$LOGS/err" '"deplyo" is not a ddl command' "mistyped command"
expect_in "$LOGS/err" "did you mean deploy?" "mistyped command: no suggestion"
expect 2 --state-dir "$K/cst" stauts
expect_in "$LOGS/err" "did you mean status?" "mistyped command after a global option"
# Under --output json a failure is also a JSON object on stdout, with its exit code.
expect 2 --state-dir "$K/cst" --output json status no-such
python3 -c 'import json,sys; e = json.load(open(sys.argv[1]))["error"]
assert e["exit_code"] == 2 and e["command"] == "status" and "no-such" in e["message"], e' "$LOGS/out" ||
  fail "--output json error: $(cat "$LOGS/out")"
# A cluster that is not deployed yet (only rendered): every command that needs its nodes exits 2, naming deploy.
"$DDL" --state-dir "$K/nd" deploy --only render "$RUN/good.yaml" >"$LOGS/nd.log" 2>&1 || { cat "$LOGS/nd.log"; fail "deploy --only render"; }
for c in "hostfile --cluster fltb" "run --cluster fltb -- true" "bench allreduce --cluster fltb" "bench train --cluster fltb"; do
  # shellcheck disable=SC2086
  expect 2 --state-dir "$K/nd" $c
  grep -q "cluster fltb is not deployed yet" "$LOGS/err" && grep -q "run \`ddl deploy\` first" "$LOGS/err" ||
    fail "ddl $c on a cluster not deployed: $(cat "$LOGS/err")"
done
"$DDL" --state-dir "$K/nd" destroy -y fltb >"$LOGS/nd.log" 2>&1 || { cat "$LOGS/nd.log"; fail "destroy of a rendered-only cluster"; }
expect 2 completion fish
mkfifo "$K/fifo.yaml"
expect 2 validate "$K/fifo.yaml"
expect_in "$LOGS/err" "is not a regular file" "a FIFO as the spec"
expect 2 validate "$K"
"$DDL" validate - <"$K/os.yaml" >"$LOGS/out" 2>&1 || fail "ddl validate - (stdin): $(cat "$LOGS/out")"
expect 2 "${G[@]}" deploy "$K/os.yaml" --ssh-timeout abc
expect_in "$LOGS/err" "must be a whole number of seconds" "--ssh-timeout abc"
expect 2 --state-dir "$K/os.yaml" status
expect_in "$LOGS/err" "is not a folder" "--state-dir naming a file"

# Output paths: empty is bad input; an unwritable one is a runtime failure (exit 1) that writes nothing.
expect 2 "${G[@]}" render good.yaml --out ""
expect 2 init -o ""
expect 2 "${G[@]}" hostfile --cluster fltb -o ""
expect 2 "${G[@]}" bench train --cluster fltb --out ""
expect 2 "${G[@]}" smoke-test good.yaml --junit ""
# smoke-test takes the spec to deploy, or --cluster for a deployed one: not both, not neither.
expect 2 "${G[@]}" smoke-test
expect_in "$LOGS/err" "or --cluster NAME to check a deployed cluster" "smoke-test without a spec"
expect 2 "${G[@]}" smoke-test good.yaml --cluster fltb
expect 2 "${G[@]}" smoke-test --cluster fltb --keep-on-failure
expect 2 "${G[@]}" smoke-test --cluster no-such-cluster
expect_in "$LOGS/err" 'no cluster "no-such-cluster"' "smoke-test --cluster naming no cluster"
for v in "/nonexistent-ddl/x" "$BAD8/x" "$HUGE/x" "/proc/version/x"; do expect 1 init -o "$v"; done

# Spec values: each key gets each kind of garbage; `ddl validate` must answer exit 2 with a located error.
BIG=$(head -c 1000000 /dev/zero | tr '\0' a)
BIGNUM=$(head -c 1000000 /dev/zero | tr '\0' 7)
spec_case() { # key-path (a.b) value [base target section]
  local key=$1 val=$2 base=${3:-local}
  local top=${key%%.*} rest=${key#*.}
  {
    printf 'apiVersion: ddl/v1\n'
    [ "$key" = name ] || printf 'name: fltb\n'
    [ "$key" = target ] || printf 'target: %s\n' "$base"
    case $base in
      ssh) [ "$top" = ssh ] || printf 'ssh:\n  hosts:\n    - {name: a, address: 192.0.2.1}\n' ;;
    esac
    if [ "$top" = "$key" ]; then printf '%s: "%s"\n' "$key" "$val"
    elif [ "${rest#*.}" = "$rest" ]; then printf '%s:\n  %s: "%s"\n' "$top" "$rest" "$val"
    else printf '%s:\n  %s:\n    %s: "%s"\n' "$top" "${rest%%.*}" "${rest#*.}" "$val"; fi
  } >"$LOGS/spec-case.yaml"
  cases=$((cases + 1))
  local rc=0
  (cd "$LOGS" && timeout 20 "$DDL" validate spec-case.yaml >"$LOGS/out" 2>"$LOGS/err") || rc=$?
  if [ $rc != 2 ] || ! grep -q "^spec-case.yaml:[0-9]*:[0-9]*: error: " "$LOGS/err"; then
    echo "FAIL: spec $key = $(printf '%q' "${val:0:40}") (${#val} bytes): exit $rc: $(head -c 300 "$LOGS/err")" >&2
    failed=$((failed + 1))
  fi
}
for key in name target local.nodes local.subnet local.bandwidth local.nodes_as local.bastion \
           runtime.backend runtime.interface runtime.slots_per_node runtime.master_port hostfile.format \
           services.nfs.export services.nfs.mount services.jupyter.port services.jupyter.enabled \
           access.user gpu.driver_branch; do
  for val in "" "$BIG" "-1" "$BAD8" "../../etc" "$BIGNUM"; do
    # An empty access.user or gpu.driver_branch, like an omitted key, means the default.
    case "$key:$val" in access.user:|gpu.driver_branch:) continue ;; esac
    # Linux accepts "-1" as an interface name.
    case "$key:$val" in runtime.interface:-1) continue ;; esac
    spec_case "$key" "$val"
  done
done
for val in "" "$BIG" "-1" "$BAD8" "../../etc"; do
  spec_case ssh.hosts "$val" ssh
done

after=$(snapshot)
if [ "$before" != "$after" ]; then
  diff <(echo "$before") <(echo "$after") | head -20 >&2
  fail "bad input wrote files"
fi
[ ! -e /nonexistent-ddl ] || fail "a file was written under /nonexistent-ddl"
[ ! -e "$S" ] || fail "state folder created by bad input"
[ $failed = 0 ] || fail "$failed of $cases bad-input cases misbehaved"
ok "$cases bad-input cases: all exit 2 with a message, nothing written"
