#!/bin/sh
# report_bench.sh: `collscope report` of a stored analysis (issue 34: under
# 0.5 s at 1.44 M spans): a synthetic trace (bench/gen_trace, 16 ranks,
# STEPS steps of 6 calls a rank), analysed once, then reported RUNS times;
# prints each run's wall and CPU seconds and maximum resident memory, and
# the median of each. With BASE=DIR (the build folder of another
# collscope, say of main) the same is measured for that build on its own
# copy of the trace (made by its own gen_trace: the schemas may differ),
# the runs interleaved, and the ratios of the medians printed; the two
# builds' reports are compared byte for byte (the trace's path taken out).
# Not part of make check. Usage (from the build directory):
#   [BASE=/path/to/other/build] sh SRC/bench/report_bench.sh [STEPS] [RUNS]
# defaults 15000 steps (1.44 M spans), 5 runs.
set -u
B=${B:-$(pwd)}
STEPS=${1:-15000}
RUNS=${2:-5}
BASE=${BASE:-}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-rbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
builds="new"
[ -n "$BASE" ] && builds="base new"
for v in $builds; do
  d=$B
  [ $v = base ] && d=$BASE
  [ -x "$d/bench/gen_trace" ] && [ -x "$d/analyzer/collscope" ] || { echo "build first: $d"; exit 1; }
  mkdir -p "$W/$v"
  "$d/bench/gen_trace" "$W/$v/t.db" --ranks 16 --steps "$STEPS" > /dev/null || exit 1
  "$d/analyzer/collscope" analyze "$W/$v/t.db" > /dev/null 2>&1 || exit 1
  "$d/analyzer/collscope" report "$W/$v/t.db" > /dev/null 2>&1 || exit 1 # a first read: an upgrade, the page cache
done
spans=$(sqlite3 "$W/new/t.db" "SELECT count(*) FROM span")
mb=$(($(wc -c < "$W/new/t.db") / 1048576))
echo "report of a stored analysis: $spans spans, 16 ranks, $mb MB file; $RUNS runs"
printf "%-5s %4s %8s %8s %8s\n" build run wall_s cpu_s rss_MB
i=1
while [ $i -le "$RUNS" ]; do
  for v in $builds; do
    d=$B
    [ $v = base ] && d=$BASE
    /usr/bin/time -f "%e %U %S %M" -o "$W/$v/time" "$d/analyzer/collscope" report "$W/$v/t.db" > "$W/$v/out" || exit 1
    read -r e u s kb < "$W/$v/time"
    echo "$e $(echo "$u + $s" | bc) $((kb / 1024))" >> "$W/$v/runs"
    printf "%-5s %4d %8.2f %8.2f %8d\n" $v $i "$e" "$(echo "$u + $s" | bc)" $((kb / 1024))
  done
  i=$((i + 1))
done
# med FILE COLUMN: the median of a column
med() { sort -n -k"$2" "$1" | awk -v c="$2" '{ a[NR] = $c } END { print a[int((NR + 1) / 2)] }'; }
for v in $builds; do
  printf "%-5s  med %8.2f %8.2f %8d\n" $v "$(med "$W/$v/runs" 1)" "$(med "$W/$v/runs" 2)" "$(med "$W/$v/runs" 3)"
done
if [ -n "$BASE" ]; then
  for c in 1 2 3; do
    eval "r$c=\$(echo \"scale=3; \$(med \"$W/base/runs\" $c) / (\$(med \"$W/new/runs\" $c) + 0.0005)\" | bc)"
  done
  echo "base / new (medians): wall $r1, cpu $r2, resident $r3"
  sed "s|$W/base/||g" "$W/base/out" > "$W/base.cmp"
  sed "s|$W/new/||g" "$W/new/out" > "$W/new.cmp"
  if cmp -s "$W/base.cmp" "$W/new.cmp"; then echo "reports: identical"; else echo "reports: DIFFERENT"; fi
fi
