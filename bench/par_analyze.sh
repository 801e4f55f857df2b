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
# and prints the wall time, the speed-up over K=1, the largest process's
# peak private memory (RssAnon: what it allocated, sampled every 250 ms)
# and peak resident memory (VmHWM: with the store pages it keeps
# mapped, at most COLLSCOPE_MAPPED_MB), each against K=1's, each
# process's private, proportional (Pss: a page mapped by n processes
# counts 1/n) and resident peaks and CPU, and the bytes the processes
# exchanged (COLLSCOPE_PAR_STATS); with
# --check, that both analyses wrote the same tables; with COLLSCOPE_AN_TIMES
# set, each run's pass times as well. The job is read just before each
# run, so that every run finds it in the page cache. Not part of make
# check. Usage (from the build folder):
#   sh SRC/bench/par_analyze.sh [--ranks N] [--keep DIR] [--ceiling] [--check] SPANS...
#   default: --ranks 1024 2000000 8000000 32000000
set -u
B=${B:-$(pwd)}
GEN=$B/bench/gen_trace
CS=$B/analyzer/collscope
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
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
printf "%-6s %-10s %-3s %8s %7s %8s %6s %8s %6s  %s\n" ranks spans K wall_s speedup priv_MB /K1 peak_MB /K1 \
  "per process: private / pss / peak MB, cpu s, bytes sent/received"
# run K JOB: analyse JOB with K processes (K=1: the one-process analysis),
# its statistics in $W/eK; prints the line of the table
run() {
  # each run finds the job in the page cache: read it just before (the
  # first would otherwise read it from the disk alone, and past about
  # 50 M spans the files a run writes evict the job before the next run)
  cat "$2/index.db" "$2"/ranks/* > /dev/null
  sync
  t0=$(now)
  if [ "$1" = 1 ]; then
    COLLSCOPE_PAR_STATS=1 "$CS" analyze --force "$2" > /dev/null 2> "$W/e$1" || { cat "$W/e$1"; exit 1; }
  else
    COLLSCOPE_PAR_STATS=1 "$CS" analyze --force -j "$1" --via workers "$2" > /dev/null 2> "$W/e$1" ||
      { cat "$W/e$1"; exit 1; }
  fi
  t1=$(now)
  awk -v r="$RANKS" -v n="$n" -v k="$1" -v w="$(echo "$t1 - $t0" | bc)" -v ref="${REF:-}" '
    /^collscope: process [0-9]+: peak memory/ {
      p = $3; sub(":", "", p); hwm = $6; priv = $9; pss = $12; cpu = $15; sent = $18; recv = $21
      if (hwm > maxhwm) maxhwm = hwm
      if (priv > maxpriv) maxpriv = priv
      line = line sprintf("%s%s: %d / %d / %d MB, %.1f s, %d/%d B", line ? "; " : "", p, priv / 1024, pss / 1024,
        hwm / 1024, cpu, sent, recv)
      bytes += sent
    }
    END {
      split(ref, R, " ")  # K=1 wall, private, peak
      if (ref == "") { R[1] = w; R[2] = maxpriv; R[3] = maxhwm }
      printf "%-6d %-10d %-3d %8.2f %7.2f %8d %6.2f %8d %6.2f  %s\n", r, n, k, w, R[1] / w, maxpriv / 1024,
        maxpriv / R[2], maxhwm / 1024, maxhwm / R[3], line
      if (k > 1)
        printf "%-6s %-10s %-3s %8s %7s %8s %6s %8s %6s  exchanged in all: %.1f MB\n", "", "", "", "", "", "", "", "",
          "", bytes / 1e6
      printf "%s %d %d\n", w, maxpriv, maxhwm > "/dev/stderr"
    }' "$W/e$1" 2> "$W/ref$1"
  [ -n "${COLLSCOPE_AN_TIMES:-}" ] && grep -E '^collscope: (pass|process [0-9]+: (its part|the waits))' "$W/e$1" | sed "s/^/       K=$1 /"
  return 0
}
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
  REF="" run 1 "$job"
  REF=$(cat "$W/ref1")
  w1=${REF%% *}
  [ "$CHECK" = 1 ] && sum1=$(tables "$job")
  REF=$REF run 2 "$job"
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
