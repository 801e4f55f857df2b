#!/bin/sh
# par_analyze.sh: the parallel analysis against the serial one on the same
# job, measured in the same run. For each size (spans), a synthetic job of
# RANKS ranks with a persistent straggler is written as rank stores and
# DIR/index.db (bench/gen_trace --rank-stores; kept under KEEP and reused
# when --keep is given), then analysed:
#   K=1  `collscope analyze --force DIR` (the serial analysis)
#   K=2  `collscope analyze --force -j 2 --via workers DIR`
#   2x1  (with --ceiling) two serial analyses of two copies at once: what
#        this machine gives two processes that share nothing
# and prints the wall time, the speed-up over K=1, the peak resident memory
# of the largest process (mapped store pages included) against K=1's, each
# process's peak and CPU, and the bytes the processes exchanged; with
# --check, that both analyses wrote the same tables; with COLLSCOPE_AN_TIMES
# set, each run's pass times as well. Not part of make
# check. Usage (from the build folder):
#   sh SRC/bench/par_analyze.sh [--ranks N] [--keep DIR] [--ceiling] [--check] SPANS...
#   default: --ranks 1024 2000000 8000000 32000000
set -u
B=${B:-$(pwd)}
GEN=$B/bench/gen_trace
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
RANKS=1024 KEEP="" CEILING=0 CHECK=0
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) RANKS=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    --ceiling) CEILING=1; shift ;;
    --check) CHECK=1; shift ;;
    *) break ;;
  esac
done
SIZES=${*:-"2000000 8000000 32000000"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-parbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
now() { date +%s.%N; }
TABLES="instances waits steps rank_stats stragglers p2p tails models proposals layout slowdown clocks"
tables() { for t in $TABLES; do sqlite3 "$1/results.db" "SELECT * FROM $t" | md5sum; done | md5sum | cut -c1-12; }
printf "%-6s %-10s %-4s %8s %7s %9s %7s  %s\n" ranks spans K wall_s speedup peak_MB mem/K1 "per process (peak MB, cpu s, bytes sent/received)"
for n in $SIZES; do
  job=$W/job
  if [ -n "$KEEP" ]; then
    job=$KEEP/job-$RANKS-$n
    mkdir -p "$KEEP"
  fi
  if [ ! -s "$job/index.db" ]; then
    rm -rf "$job"
    "$GEN" "$job" --rank-stores --ranks "$RANKS" --spans "$n" --persistent 7:5000 > "$W/gen" 2>&1 || { cat "$W/gen"; exit 1; }
  fi
  # K=1
  sync
  t0=$(now)
  /usr/bin/time -f "%M %U %S" -o "$W/t1" "$CS" analyze --force "$job" > /dev/null 2> "$W/e1" || { cat "$W/e1"; exit 1; }
  t1=$(now)
  read -r kb1 u1 s1 < "$W/t1"
  w1=$(echo "$t1 - $t0" | bc)
  [ "$CHECK" = 1 ] && sum1=$(tables "$job")
  [ -n "${COLLSCOPE_AN_TIMES:-}" ] && grep -E '^collscope: (pass|process [0-9]+: its part)' "$W/e1" | sed 's/^/       K=1 /'
  printf "%-6d %-10d %-4s %8.2f %7s %9d %7s  0: %d MB, %.1f s\n" "$RANKS" "$n" 1 "$w1" "1.00" $((kb1 / 1024)) "1.00" \
    $((kb1 / 1024)) "$(echo "$u1 + $s1" | bc)"
  # K=2
  sync
  t0=$(now)
  COLLSCOPE_PAR_STATS=1 "$CS" analyze --force -j 2 --via workers "$job" > /dev/null 2> "$W/e2" || { cat "$W/e2"; exit 1; }
  t1=$(now)
  w2=$(echo "$t1 - $t0" | bc)
  awk -v r="$RANKS" -v n="$n" -v w1="$w1" -v w2="$w2" -v kb1="$kb1" '
    /^collscope: process [0-9]+: peak memory/ {
      p = $3; sub(":", "", p); kb = $6; cpu = $9; sent = $12; recv = $15
      if (kb > max) max = kb
      line = line sprintf("%s%s: %d MB, %.1f s, %d/%d B", line ? "; " : "", p, kb / 1024, cpu, sent, recv)
      bytes += sent
    }
    END {
      printf "%-6d %-10d %-4s %8.2f %7.2f %9d %7.2f  %s\n", r, n, 2, w2, w1 / w2, max / 1024, max / kb1, line
      printf "%-6s %-10s %-4s %8s %7s %9s %7s  exchanged in all: %.1f MB\n", "", "", "", "", "", "", "", bytes / 1e6
    }' "$W/e2"
  [ -n "${COLLSCOPE_AN_TIMES:-}" ] && grep -E '^collscope: (pass|process [0-9]+: its part)' "$W/e2" | sed 's/^/       K=2 /'
  if [ "$CHECK" = 1 ]; then
    sum2=$(tables "$job")
    [ "$sum1" = "$sum2" ] && echo "       K=1 and K=2 wrote the same tables ($sum1)" ||
      echo "       K=1 and K=2 tables DIFFER: $sum1 / $sum2"
  fi
  if [ "$CEILING" = 1 ]; then
    rm -rf "$W/copy"
    cp -a "$job" "$W/copy"
    sync
    t0=$(now)
    "$CS" analyze --force "$job" > /dev/null 2>&1 &
    "$CS" analyze --force "$W/copy" > /dev/null 2>&1
    wait
    t1=$(now)
    wc=$(echo "$t1 - $t0" | bc)
    printf "%-6d %-10d %-4s %8.2f %7.2f  (two serial analyses at once: the work of 2 in %.2f s, %.2f x one)\n" \
      "$RANKS" "$n" 2x1 "$wc" "$(echo "2 * $w1 / $wc" | bc -l)" "$wc" "$(echo "2 * $w1 / $wc" | bc -l)"
    rm -rf "$W/copy"
  fi
  [ -z "$KEEP" ] && rm -rf "$W/job"
done
