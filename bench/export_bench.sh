#!/bin/sh
# export_bench.sh: `collscope export` of synthetic traces (bench/gen_trace,
# 8 ranks, a persistent straggler, analysed first and timed apart) in each
# format: wall time, CPU time (user + system: the machine may be shared),
# maximum resident memory, spans/s, events/s and MB/s written, and a linear
# extrapolation to 10 M spans. Not part of make check. Usage (from the
# build directory):
#   sh SRC/bench/export_bench.sh [SIZES] [FORMATS]   default "1000000" "chrome perfetto"
# Target (issue): 10 M spans in < 30 s, for chrome and for perfetto. The
# figures and what they mean: docs/interop.md.
set -u
B=${B:-$(pwd)}
GEN=$B/bench/gen_trace
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
SIZES=${1:-"1000000"}
FORMATS=${2:-"chrome perfetto"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-ebench.XXXXXX")
trap 'rm -rf "$W"' EXIT
printf "%-9s %-9s %7s %7s %9s %7s %8s %10s %10s %8s %8s %12s\n" spans format gen_s anal_s export_s cpu_s rss_MB \
  spans/s events/s MB MB/s 10M_spans_s
for n in $SIZES; do
  g0=$(date +%s.%N)
  "$GEN" "$W/trace.db" --ranks 8 --spans "$n" --persistent 3:2000 > /dev/null || exit 1
  g1=$(date +%s.%N)
  "$CS" analyze "$W/trace.db" > /dev/null 2>&1 || exit 1
  g2=$(date +%s.%N)
  for fmt in $FORMATS; do
    /usr/bin/time -f "%e %U %S %M" -o "$W/time" "$CS" export "$W/trace.db" --format "$fmt" -o "$W/out" 2> "$W/err" ||
      { cat "$W/err"; exit 1; }
    read -r secs user sys kb < "$W/time"
    spans=$(sed -n 's/.*: \([0-9]*\) spans, .*/\1/p' "$W/err")
    events=$(sed -n 's/.*(\([0-9]*\) events).*/\1/p' "$W/err")
    bytes=$(stat -c %s "$W/out")
    printf "%-9s %-9s %7.1f %7.1f %9.2f %7.2f %8.0f %10.0f %10.0f %8.0f %8.1f %12.0f\n" "$spans" "$fmt" \
      "$(echo "$g1 - $g0" | bc)" "$(echo "$g2 - $g1" | bc)" "$secs" "$(echo "$user + $sys" | bc)" \
      "$(echo "$kb / 1024" | bc)" "$(echo "$spans / $secs" | bc -l)" "$(echo "$events / $secs" | bc -l)" \
      "$(echo "$bytes / 1048576" | bc -l)" "$(echo "$bytes / 1048576 / $secs" | bc -l)" \
      "$(echo "$secs * 10000000 / $spans" | bc -l)"
    rm -f "$W/out"
  done
  rm -f "$W"/trace.db*
done
