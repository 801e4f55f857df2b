#!/bin/sh
# gpu_slowdown_bench.sh: the speed of the slowdown attribution on the GPU
# graph (analyzer/analysis/an_gpu_graph.c): Kineto traces of Megatron-style
# jobs (tests/import/gpu_pipe_gen.py, one slow worker) of a few sizes,
# imported, then `collscope analyze --force` with the attribution and
# without it (COLLSCOPE_SLOWDOWN=0), measured in the same run (CPU
# seconds, user + system). Prints the GPU ops of the graph, the replays
# the attribution made, the attribution's CPU time, and its speed in ops
# a second (graph ops x replays / that time; the floor in bench/README.md:
# 1 M ops a second a core). Not part of make check. Usage (from the build
# directory):
#   sh SRC/bench/gpu_slowdown_bench.sh [SIZES]   SIZES: DPxPPxMICROxSTEPS, default "4x4x8x8 8x8x16x8"
set -u
B=${B:-$(pwd)}
S=${S:-$(cd "$(dirname "$0")/.." && pwd)}
CS=$B/analyzer/collscope
PY=${PYTHON3:-python3}
[ -x "$CS" ] || { echo "build first: $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
SIZES=${1:-"4x4x8x8 8x8x16x8"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-gsdbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
printf "%-12s %6s %9s %8s %12s %12s %10s %12s %s\n" size ranks gpu_ops replays without_cpu_s with_cpu_s attr_s ops_per_s verdict
for sz in $SIZES; do
  set -- $(echo "$sz" | tr x ' ')
  rm -rf "$W/t" "$W/t.out"
  $PY "$S/tests/import/gpu_pipe_gen.py" "$W/t" --dp "$1" --pp "$2" --micro "$3" --steps "$4" --slow-rank 0 || exit 1
  "$CS" import -o "$W/t.out" "$W/t" > /dev/null || exit 1
  COLLSCOPE_SLOWDOWN=0 /usr/bin/time -f "%U %S" -o "$W/t0" "$CS" analyze --force "$W/t.out" > /dev/null 2>&1 || exit 1
  /usr/bin/time -f "%U %S" -o "$W/t1" "$CS" analyze --force "$W/t.out" > /dev/null 2>&1 || exit 1
  a=$(awk '{ print $1 + $2 }' "$W/t0") b=$(awk '{ print $1 + $2 }' "$W/t1")
  m() { sqlite3 "$W/t.out/trace.db" "SELECT value FROM meta WHERE key = '$1'"; }
  ops=$(m slowdown_gpu_ops) rp=$(m slowdown_replays) v=$(m slowdown_verdict)
  d=$(echo "$b - $a" | bc -l)
  printf "%-12s %6d %9s %8s %12.2f %12.2f %10.3f %12.0f %s\n" "$sz" $(($1 * $2)) "${ops:-0}" "${rp:-0}" "$a" "$b" "$d" \
    "$(echo "if ($d > 0.001) ${ops:-0} * ${rp:-0} / $d else 0" | bc -l)" "${v:-none}"
done
