#!/bin/sh
# export_bench.sh: `collscope export --format chrome` (and otf2, on the
# line after each, where the build has it) of synthetic traces
# (bench/gen_trace, 8 ranks, a persistent straggler, analysed first and
# timed apart): wall time, maximum resident memory, spans/s, events/s and
# MB/s of JSON written, and a linear extrapolation to 10 M spans. Not part
# of make check. Usage (from the build directory):
#   sh SRC/bench/export_bench.sh [SIZES]      default "1000000"
# Target (issue): 10 M spans in < 30 s. The figures and what they mean:
# docs/interop.md.
set -u
B=${B:-$(pwd)}
GEN=$B/bench/gen_trace
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
SIZES=${1:-"1000000"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-ebench.XXXXXX")
trap 'rm -rf "$W"' EXIT
printf "%-9s %8s %8s %9s %8s %10s %10s %8s %9s %12s\n" spans gen_s anal_s export_s rss_MB spans/s events/s MB MB/s 10M_spans_s
for n in $SIZES; do
  g0=$(date +%s.%N)
  "$GEN" "$W/trace.db" --ranks 8 --spans "$n" --persistent 3:2000 > /dev/null || exit 1
  g1=$(date +%s.%N)
  "$CS" analyze "$W/trace.db" > /dev/null 2>&1 || exit 1
  g2=$(date +%s.%N)
  /usr/bin/time -f "%e %M" -o "$W/time" "$CS" export "$W/trace.db" -o "$W/t.json" 2> "$W/err" || { cat "$W/err"; exit 1; }
  read -r secs kb < "$W/time"
  spans=$(sed -n 's/.*: \([0-9]*\) spans, .*/\1/p' "$W/err")
  events=$(sed -n 's/.*(\([0-9]*\) events).*/\1/p' "$W/err")
  bytes=$(stat -c %s "$W/t.json")
  printf "%-9s %8.1f %8.1f %9.2f %8.0f %10.0f %10.0f %8.0f %9.1f %12.0f\n" "$spans" "$(echo "$g1 - $g0" | bc)" \
    "$(echo "$g2 - $g1" | bc)" "$secs" "$(echo "$kb / 1024" | bc)" "$(echo "$spans / $secs" | bc -l)" \
    "$(echo "$events / $secs" | bc -l)" "$(echo "$bytes / 1048576" | bc -l)" "$(echo "$bytes / 1048576 / $secs" | bc -l)" \
    "$(echo "$secs * 10000000 / $spans" | bc -l)"
  # The OTF2 archive of the same trace, where this build has it.
  if /usr/bin/time -f "%e %M" -o "$W/time" "$CS" export "$W/trace.db" --format otf2 -o "$W/otf2" 2> "$W/err"; then
    read -r secs kb < "$W/time"
    events=$(sed -n 's/.*spans, \([0-9]*\) events.*/\1/p' "$W/err")
    bytes=$(du -sb "$W/otf2" | cut -f1)
    printf "%-9s %8s %8s %9.2f %8.0f %10.0f %10.0f %8.0f %9.1f %12.0f\n" "otf2" "" "" "$secs" "$(echo "$kb / 1024" | bc)" \
      "$(echo "$spans / $secs" | bc -l)" "$(echo "$events / $secs" | bc -l)" "$(echo "$bytes / 1048576" | bc -l)" \
      "$(echo "$bytes / 1048576 / $secs" | bc -l)" "$(echo "$secs * 10000000 / $spans" | bc -l)"
  elif grep -q "without OTF2" "$W/err"; then
    echo "otf2: not in this build"
  else
    cat "$W/err"
    exit 1
  fi
  rm -rf "$W"/trace.db* "$W/t.json" "$W/otf2"
done
