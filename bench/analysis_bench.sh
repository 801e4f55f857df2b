#!/bin/sh
# analysis_bench.sh: the cross-rank analysis on synthetic traces of three
# sizes (bench/gen_trace, 64 ranks, a persistent straggler): wall time and
# maximum resident memory of `collscope analyze --force`, and the time per
# million spans (linear in spans when that stays flat); then the CPU time
# of `collscope report` of the stored analysis, with its per-op and per-rank
# figures as the analysis kept them and, the baseline, computed from the
# spans again (the tables group_stats and rank_busy dropped from a copy),
# and their ratio. Not part of make check. Usage (from the build directory):
#   sh SRC/bench/analysis_bench.sh [SIZES]      default "1000000 3000000 10000000"
# Target: 64 ranks, 10 M spans in <= 20 s and <= 2 GB on 2 cores.
set -u
B=${B:-$(pwd)}
GEN=$B/bench/gen_trace
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
SIZES=${1:-"1000000 3000000 10000000"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-abench.XXXXXX")
trap 'rm -rf "$W"' EXIT
printf "%-10s %10s %10s %10s %12s %10s %10s %10s %6s\n" spans gen_s analyze_s maxrss_MB s_per_Mspan verdicts \
  report_cpu spans_cpu ratio
for n in $SIZES; do
  g0=$(date +%s.%N)
  "$GEN" "$W/t.db" --ranks 64 --spans "$n" --persistent 7:5000 > /dev/null || exit 1
  g1=$(date +%s.%N)
  /usr/bin/time -f "%e %M" -o "$W/time" "$CS" analyze --force "$W/t.db" > /dev/null || exit 1
  read -r secs kb < "$W/time"
  nv=$(sqlite3 "$W/t.db" "SELECT group_concat(kind || ' ' || rank) FROM stragglers")
  # the report of the stored analysis, then of a copy without the kept
  # figures (computed from the spans, as before analysis 15)
  /usr/bin/time -f "%U %S" -o "$W/rtime" "$CS" report "$W/t.db" > /dev/null || exit 1
  cp "$W/t.db" "$W/u.db"
  sqlite3 "$W/u.db" "DELETE FROM group_stats; DROP TABLE group_stats; DROP TABLE rank_busy" || exit 1
  /usr/bin/time -f "%U %S" -o "$W/utime" "$CS" report "$W/u.db" > /dev/null || exit 1
  rc=$(awk '{print $1 + $2}' "$W/rtime") uc=$(awk '{print $1 + $2}' "$W/utime")
  printf "%-10s %10.1f %10.2f %10.0f %12.2f %10s %10.2f %10.2f %6.2f\n" "$n" "$(echo "$g1 - $g0" | bc)" "$secs" \
    "$(echo "$kb / 1024" | bc)" "$(echo "$secs * 1000000 / $n" | bc -l)" "$nv" "$rc" "$uc" "$(echo "$uc / $rc" | bc -l)"
  rm -f "$W/t.db" "$W/t.db-wal" "$W/t.db-shm" "$W/u.db"
done
