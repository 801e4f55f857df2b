#!/bin/sh
# scale_bench.sh: a job kept as rank stores against its merged trace
# (bench/gen_trace, a persistent straggler): for each size, the same job
# written merged (one .db) and as rank stores with DIR/index.db
# (--rank-stores), then `collscope analyze --force` of each (CPU time,
# maximum resident memory), the time the unmerged form spends opening the
# job (its rank stores merged into a private file: `report` with the
# analysis taken from DIR/results.db), and whether the JSON reports agree
# but for the path. Not part of make check. Usage (from the build folder):
#   sh SRC/bench/scale_bench.sh [RANKS] [SIZES]   default 64 "1000000 10000000"
set -u
B=${B:-$(pwd)}
GEN=$B/bench/gen_trace
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
RANKS=${1:-64}
SIZES=${2:-"1000000 10000000"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-sbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
# t LABEL CMD...: the command's CPU seconds (user + system: steadier than
# the wall time on a shared machine) and max RSS in MB, into $secs $mb
t() {
  _l=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$W/time" "$@" > /dev/null 2> "$W/err" || { cat "$W/err"; echo "$_l failed"; exit 1; }
  read -r _wall _u _s kb < "$W/time"
  secs=$(echo "$_u + $_s" | bc)
  mb=$((kb / 1024))
}
printf "%-6s %-9s %-9s %8s %8s %10s %10s %10s %10s %9s\n" ranks spans form gen_cpu_s MB_disk an_cpu_s an_RSS_MB rep_cpu_s rep_RSS_MB identical
for n in $SIZES; do
  t gen "$GEN" "$W/m.db" --ranks "$RANKS" --spans "$n" --persistent 7:5000
  gm=$secs
  t gen "$GEN" "$W/job" --rank-stores --ranks "$RANKS" --spans "$n" --persistent 7:5000
  gj=$secs
  t analyze "$CS" analyze --force "$W/m.db"
  am=$secs amb=$mb
  t analyze "$CS" analyze --force "$W/job"
  aj=$secs ajb=$mb
  t report "$CS" report "$W/m.db" --format json -o "$W/m.json"
  rm_=$secs rmb=$mb
  t report "$CS" report "$W/job" --format json -o "$W/j.json"
  rj=$secs rjb=$mb
  same=$(/usr/bin/python3 -c "
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop('trace'); b.pop('trace')
print('yes' if a == b else 'NO')" "$W/m.json" "$W/j.json")
  dm=$(du -sm "$W/m.db" | cut -f1)
  dj=$(du -sm "$W/job" | cut -f1)
  printf "%-6s %-9s %-9s %8s %8s %10s %10s %10s %10s %9s\n" "$RANKS" "$n" merged "$gm" "$dm" "$am" "$amb" "$rm_" "$rmb" "$same"
  printf "%-6s %-9s %-9s %8s %8s %10s %10s %10s %10s %9s\n" "$RANKS" "$n" unmerged "$gj" "$dj" "$aj" "$ajb" "$rj" "$rjb" "$same"
  rm -rf "$W/m.db" "$W/m.db-wal" "$W/m.db-shm" "$W/job"
done
