#!/usr/bin/env bash
# The README's demo (scripts/demo.sh) and its "Your first hour" block as a new user runs them: each line as written (its comment cut), in a
# copy of the repository's tracked files, with ddl on PATH and a new user's HOME (the state goes to ~/.ddl). Two lines get what a terminal would have given: `ddl destroy` its -y (no terminal to answer the
# question on), and the queued job's `ddl logs ID -f` (the line's comment) is run with the printed id.
source "$(dirname "$0")/lib.sh"
readme="$DDL_SOURCE_DIR/README.md"
mkdir repo
git -C "$DDL_SOURCE_DIR" ls-files -z | (cd "$DDL_SOURCE_DIR" && xargs -0 tar cf - 2>/dev/null) | tar xf - -C repo ||
  fail "copying the repository's tracked files"
mkdir -p bin home && ln -s "$DDL" bin/ddl
# A new user's home: no DDL_STATE_DIR, no ./.ddl, so the clusters' state goes to ~/.ddl.
unset DDL_STATE_DIR
export PATH="$WORK/bin:$PATH" HOME="$WORK/home"
STATE="$HOME/.ddl"
unset -f ddl # the line's `ddl` is the program on PATH, with no --state-dir
CLUSTERS+=(local-demo my-cluster)
# The first sh block after the heading, one command per line.
python3 - "$readme" >block.txt <<'PY'
import re, sys
text = open(sys.argv[1]).read()
after = text.split("## Your first hour", 1)[1]
block = re.search(r"```sh\n(.*?)```", after, re.S).group(1)
for line in block.splitlines():
    line = re.sub(r"\s+#\s.*$", "", line).strip()
    if line:
        print(line)
PY
[ "$(grep -c '^ddl ' block.txt)" -ge 8 ] || { cat block.txt; fail "the README's first-hour block has fewer commands than expected"; }
cd repo
# The quick start's first command, the demo, as the README writes it, on the build this test runs (its own
# demo-preset build would take ~10 minutes here; DDL_BUILD_DIR uses the given build as it is).
t0=$SECONDS
DDL_BUILD_DIR="$DDL_BINARY_DIR" ./scripts/demo.sh >"$WORK/demo.log" 2>&1 </dev/null ||
  { cat "$WORK/demo.log"; fail "scripts/demo.sh"; }
echo "  $((SECONDS - t0)) s  ./scripts/demo.sh"
python3 - "$WORK/demo.log" <<'PY' || { cat "$WORK/demo.log"; fail "the demo's output"; }
import re, sys
text = open(sys.argv[1]).read()
for needed in ("== hostfile", "== every node", "== allreduce across every slot", "busbw"):
    assert needed in text, f"no {needed!r}"
losses = [float(x) for x in re.findall(r"^\[0\] step \d+ loss ([0-9.]+)", text, re.M)]
assert len(losses) == 5 and losses[-1] < losses[0], f"the loss did not fall over 5 shown steps: {losses}"
assert re.search(r"^.*destroyed", text, re.M | re.I), "the demo's cluster was not destroyed"
PY
[ ! -e "$HOME/.ddl/local-demo/state.json" ] || fail "the demo left its cluster's state behind"
ok "scripts/demo.sh as the README writes it: 4 nodes, the hostfile, the MLP's loss falling, the allreduce table, destroyed"
n=0
while IFS= read -r line <&3; do
  n=$((n + 1))
  case "$line" in "ddl destroy "*) line="$line -y" ;; esac
  t0=$SECONDS
  rc=0
  eval "$line" >"$WORK/step$n.log" 2>&1 </dev/null || rc=$?
  [ "$rc" = 0 ] || { cat "$WORK/step$n.log"; fail "README line $n: '$line' exited $rc"; }
  echo "  $((SECONDS - t0)) s  $line"
  case "$line" in
  "ddl run -d "*)
    id=$(grep -Eo '^[0-9]+$' "$WORK/step$n.log" | tail -1)
    [ -n "$id" ] || { cat "$WORK/step$n.log"; fail "run -d printed no job id"; }
    grep -q "ddl logs $id -f" "$WORK/step$n.log" || { cat "$WORK/step$n.log"; fail "run -d did not name \`ddl logs $id -f\`"; }
    timeout 600 ddl logs "$id" -f --cluster local-demo >"$WORK/job.log" 2>&1 || { cat "$WORK/job.log"; fail "ddl logs $id -f"; }
    wait_for 60 "the queued job $id to finish" job_in_state "$id" succeeded local-demo
    ;;
  esac
done 3<"$WORK/block.txt"
cd "$WORK"
grep -qi "loss" step6.log || { cat step6.log; fail "mlp_trainer printed no loss"; }
grep -q "^.*step [0-9]* loss .* (world size 4)" step7.log || { cat step7.log; fail "PyTorch DDP with the hook printed no loss on 4 ranks"; }
grep -q "gradients through libddlcomm" step7.log || { cat step7.log; fail "the ddl hook was not used"; }
grep -q "step [0-9]* loss .* (world size 4)" job.log || { cat job.log; fail "the queued job's log (ddl logs -f) shows no training"; }
grep -q "busbw\|GB/s" step9.log || { cat step9.log; fail "bench allreduce printed no table"; }
expect_in "$XDG_STATE_HOME/ddl/state-folders" "^$HOME/.ddl\$" "the README's deploy did not keep its state in ~/.ddl"
ok "every line of the README's first hour ran as written ($n commands), the state in ~/.ddl"
