#!/bin/sh
# scale_phases.sh: what each phase of the analysis costs per span, per
# rank and per instance, and how it grows (the figures docs/scale.md
# projects from). For each case (RANKS:SPANS), a synthetic job with a
# persistent straggler is written as rank stores and DIR/index.db
# (bench/gen_trace --rank-stores), then `collscope analyze` runs once with
# COLLSCOPE_AN_TIMES=1: the job opened (its rank stores merged into a
# private file), each pass's CPU seconds, the whole run's CPU seconds and
# peak resident memory (mapped store pages count in it), and per-span
# figures. Not part of make check. Usage (from the build folder):
#   sh SRC/bench/scale_phases.sh [CASES]
#   default "1024:500000 1024:2000000 1024:8000000 8192:400000"
set -u
B=${B:-$(pwd)}
GEN=$B/bench/gen_trace
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
CASES=${1:-"1024:500000 1024:2000000 1024:8000000 8192:400000"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-phases.XXXXXX")
trap 'rm -rf "$W"' EXIT
PASSES="pair align steps match p2p layout verdicts tail whatif"
printf "%-6s %-9s %7s %7s %7s %6s" ranks spans inst disk_MB cpu_s RSS_MB
printf " %7s" open $PASSES
printf "   (seconds; below: us per span)\n"
for c in $CASES; do
  r=${c%%:*} n=${c#*:}
  "$GEN" "$W/job" --rank-stores --ranks "$r" --spans "$n" --persistent 7:5000 > "$W/gen" 2>&1 || { cat "$W/gen"; exit 1; }
  spans=$(sed -n 's/^[^:]*: \([0-9]*\) spans.*/\1/p' "$W/gen")
  /usr/bin/time -f "%U %S %M" -o "$W/time" env COLLSCOPE_AN_TIMES=1 "$CS" analyze "$W/job" > /dev/null 2> "$W/err" ||
    { cat "$W/err"; echo "analyze failed"; exit 1; }
  read -r u s kb < "$W/time"
  inst=$(sqlite3 "$W/job/results.db" "SELECT value FROM meta WHERE key = 'analysis_instances'" 2> /dev/null || echo 0)
  disk=$(du -sm "$W/job/ranks" | cut -f1)
  awk -v r="$r" -v n="$spans" -v inst="${inst:-0}" -v disk="$disk" -v cpu="$(echo "$u + $s" | bc)" -v kb="$kb" \
      -v passes="$PASSES" '
    /^collscope: pass / { t[$3] = $(NF - 1); sum += $(NF - 1) }
    END {
      np = split(passes, p, " ")
      open = cpu - sum
      printf "%-6d %-9d %7d %7d %7.2f %6d %7.2f", r, n, inst, disk, cpu, kb / 1024, open
      for (i = 1; i <= np; i++) printf " %7.3f", t[p[i]]
      printf "\n%-6s %-9s %7s %7s %7.2f %6s %7.3f", "", "us/span", "", "", 1e6 * cpu / n, "", 1e6 * open / n
      for (i = 1; i <= np; i++) printf " %7.3f", 1e6 * t[p[i]] / n
      printf "\n"
    }' "$W/err"
  rm -rf "$W/job"
done
