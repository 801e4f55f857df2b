#!/bin/sh
# slowdown_bench.sh: what the slowdown attribution (analyzer/analysis/an_slowdown.c)
# adds to the analysis: `collscope analyze --force` of synthetic traces of
# three sizes (bench/gen_trace, 64 ranks, a persistent straggler) with the
# attribution and without it (COLLSCOPE_SLOWDOWN=0), measured in the same
# run; prints both times (CPU seconds, user + system: on a node shared with
# other work the wall time swings by more than the attribution takes), the
# ratio, and the attribution's CPU time per million spans it replayed (the
# replay's budget, CS_WF_BUDGET_SPANS, bounds them: above it the
# attribution's time stays flat). Not part of make check. Usage (from the
# build directory):
#   sh SRC/bench/slowdown_bench.sh [SIZES]      default "1000000 3000000 10000000"
# Target: at most 1.5x (the attribution adds at most 50 %).
set -u
B=${B:-$(pwd)}
GEN=$B/bench/gen_trace
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
SIZES=${1:-"1000000 3000000 10000000"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-sdbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
printf "%-10s %10s %12s %12s %8s %16s %s\n" spans replayed without_cpu_s with_cpu_s ratio attr_s_per_Mspan verdict
for n in $SIZES; do
  "$GEN" "$W/t.db" --ranks 64 --spans "$n" --persistent 7:5000 > /dev/null || exit 1
  COLLSCOPE_SLOWDOWN=0 /usr/bin/time -f "%U %S" -o "$W/t0" "$CS" analyze --force "$W/t.db" > /dev/null 2>"$W/e0" || exit 1
  /usr/bin/time -f "%U %S" -o "$W/t1" "$CS" analyze --force "$W/t.db" > /dev/null 2>"$W/e1" || exit 1
  a=$(awk '{ print $1 + $2 }' "$W/t0") b=$(awk '{ print $1 + $2 }' "$W/t1")
  # the spans the replay held: "what-if replay: steps 0-K of N (S spans; ...)":
  # about S * (K + 1) / N; else all
  r=$(sed -n 's/.*what-if replay: steps 0-\([0-9]*\) of \([0-9]*\) (\([0-9]*\) spans.*/\1 \2 \3/p' "$W/e1" |
    awk 'NR == 1 { printf "%.0f", $3 * ($1 + 1) / $2 }')
  r=${r:-$n}
  v=$(sqlite3 "$W/t.db" "SELECT value FROM meta WHERE key = 'slowdown_verdict'")
  printf "%-10s %10s %12.2f %12.2f %8.2f %16.3f %s\n" "$n" "$r" "$a" "$b" "$(echo "$b / $a" | bc -l)" \
    "$(echo "($b - $a) * 1000000 / $r" | bc -l)" "${v:-none}"
  rm -f "$W/t.db" "$W/t.db-wal" "$W/t.db-shm"
done
