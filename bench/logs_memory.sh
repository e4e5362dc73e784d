#!/usr/bin/env bash
# A job's 1 GiB log read back: the reader's peak resident memory (/usr/bin/time -v, "Maximum resident set
# size") for the whole log, and the seconds until `logs -f | head -3` has its lines; each against its limit.
#
# Without --cluster it measures `ddl-run logs` on this machine (the master's side), with the queue in a
# temporary folder: a running job (sleep) whose rank-0.log is given 1 GiB of 100-byte lines. With
# --cluster C it measures `ddl logs` against a deployed cluster C, whose master writes the 1 GiB as a
# detached job's output first.
#
# Usage: bench/logs_memory.sh [--cluster C [--ddl DDL]] [--ddl-run DDL_RUN] [--mib N]
#        (default: src/runtime/tools/ddl-run, 1024 MiB; exit 1 above a limit)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ddl_run=$root/src/runtime/tools/ddl-run
ddl=
cluster=
mib=1024
while [ $# -gt 0 ]; do
  case $1 in
    --cluster) cluster=$2; shift 2 ;;
    --ddl) ddl=$2; shift 2 ;;
    --ddl-run) ddl_run=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    *) echo "usage: $0 [--cluster C [--ddl DDL]] [--ddl-run DDL_RUN] [--mib N]" >&2; exit 2 ;;
  esac
done
rss_limit_mib=100
first_limit_s=1
work=$(mktemp -d /tmp/ddl-logs-bench.XXXXXX)
job=

if [ -z "$cluster" ]; then
  export DDL_JOBS_DIR=$work/jobs
  mkdir -p "$work/wd" "$DDL_JOBS_DIR"
  echo "localhost slots=1" >"$work/hostfile"
  trap 'python3 "$ddl_run" cancel "$job" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  job=$(python3 "$ddl_run" --hostfile "$work/hostfile" --workdir "$work/wd" --name big -- sleep 600)
  log=$DDL_JOBS_DIR/$job/rank-0.log
  for _ in $(seq 50); do [ -e "$log" ] && break; sleep 0.1; done
  python3 - "$log" "$mib" <<'PY'
import sys
line = b"%s\n" % (b"0123456789" * 10)[:99]
block = line * 10486  # about 1 MiB
with open(sys.argv[1], "ab") as f:
    left = int(sys.argv[2]) << 20
    while left > 0:
        f.write(block[:left])
        left -= len(block)
PY
  reader=(python3 "$ddl_run" logs "$job")
  who="ddl-run logs (running job)"
else
  ddl=${ddl:-$(ls "$root"/build-dev/src/ddl "$root"/build/src/ddl 2>/dev/null | head -1)}
  trap 'rm -rf "$work"' EXIT
  # 100-byte lines, ${mib} MiB, as the job's output on rank 0 (python3 is on every node for Ansible).
  job=$("$ddl" run -d --cluster "$cluster" -np 1 --name big -- python3 -c '
import sys
line = b"0123456789" * 9 + b"012345678\n"
block = line * 10486
left = int(sys.argv[1]) << 20
while left > 0:
    sys.stdout.buffer.write(block[:left]); left -= len(block)
' "$mib")
  for _ in $(seq 600); do "$ddl" jobs "$cluster" | grep -q "^$job .*succeeded" && break; sleep 1; done
  reader=("$ddl" logs "$job")
  who="ddl logs (ended job, cluster $cluster)"
fi

/usr/bin/time -v -o "$work/time.txt" "${reader[@]}" >"$work/out"
lines=$(wc -l <"$work/out")
rss_kib=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$work/time.txt")
wall=$(awk '/Elapsed \(wall clock\)/ { print $NF }' "$work/time.txt")
rm -f "$work/out"
start=$(date +%s.%N)
{ "${reader[@]}" -f || true; } | head -3 >"$work/head"
first=$(echo "$(date +%s.%N) - $start" | bc)
echo "$who, ${mib} MiB log, $lines lines: peak RSS $((rss_kib / 1024)) MiB (limit $rss_limit_mib MiB), whole" \
  "log in $wall; logs -f | head -3: $(printf '%.2f' "$first") s (limit $first_limit_s s), first line: $(head -1 "$work/head")"
[ $((rss_kib / 1024)) -le $rss_limit_mib ] && [ "$(echo "$first <= $first_limit_s" | bc)" = 1 ]
