#!/bin/sh
# import_bench.sh: `collscope import` of generated PyTorch profiler traces
# (bench/kineto_gen: an NCCL-style job, 8 ranks, MB megabytes of JSON per
# rank): wall time, MB/s of JSON read, CPU seconds (all processes) and MB
# of JSON per CPU second (what the wall figure would approach on idle
# cores), and the maximum resident memory of the import (its largest
# process: the command or one reader; mapped pages of the stores count). Not part of
# make check. Usage (from the build directory):
#   sh SRC/bench/import_bench.sh [MB_PER_RANK...] [--gzip]   default 100
# Target (issue): 1 GB per rank at 100 MB/s or more, under 1 GB of memory.
# The figures and what they mean: docs/interop.md (Import).
set -u
B=${B:-$(pwd)}
GEN=$B/bench/kineto_gen
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
GZ=
SIZES=
for a in "$@"; do
  case $a in
    --gzip) GZ=--gzip ;;
    *) SIZES="$SIZES $a" ;;
  esac
done
SIZES=${SIZES:-100}
RANKS=${RANKS:-8}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-ibench.XXXXXX")
trap 'rm -rf "$W"' EXIT
printf "%-8s %6s %10s %8s %9s %8s %7s %11s %8s %10s\n" MB/rank ranks JSON_MB gen_s import_s MB/s cpu_s MB/cpu_s rss_MB spans
for mb in $SIZES; do
  g0=$(date +%s.%N)
  bytes=$("$GEN" "$W/in" --ranks "$RANKS" --mb "$mb" $GZ) || exit 1
  g1=$(date +%s.%N)
  /usr/bin/time -f "%e %M %U %S" -o "$W/time" "$CS" import -o "$W/out" "$W/in" > "$W/out.txt" 2>&1 || { cat "$W/out.txt"; exit 1; }
  read -r secs kb us ss < "$W/time"
  cpu=$(echo "$us + $ss" | bc)
  spans=$(sed -n 's/.*), \([0-9]*\) spans: .*/\1/p' "$W/out.txt")
  printf "%-8s %6s %10.0f %8.1f %9.2f %8.1f %7.2f %11.1f %8.0f %10s\n" "$mb" "$RANKS" "$(echo "$bytes / 1000000" | bc -l)" \
    "$(echo "$g1 - $g0" | bc)" "$secs" "$(echo "$bytes / 1000000 / $secs" | bc -l)" "$cpu" \
    "$(echo "$bytes / 1000000 / $cpu" | bc -l)" "$(echo "$kb / 1024" | bc)" "$spans"
  rm -rf "$W/in" "$W/out"
done
