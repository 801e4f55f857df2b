#!/bin/sh
# live_bench.sh: what `collscope top` (analyzer/live) costs to follow a
# job's logs, on synthetic logs of bench/log_gen (data-parallel steps of 9
# spans and 4 completions, no step markers: the step proxy is used).
#   bench/live_bench.sh [BUILD] [RANKS...]     (default: build, 64 1024)
# For each rank count: the first refresh (every record read: the follower's
# read rate in records/s on one core, which bounds the calls per second of
# a whole job it keeps up with at one refresh a second), a refresh with
# nothing new, and drawing the frame and the metrics; then a follower at
# one refresh a second while 64 writers append. The baseline in the
# same run: the bytes of the logs read by cat (the page cache's rate).
# With LIVE_BENCH_BEFORE=PROG (a live_bench built from another commit),
# PROG and this build's live_bench read the same logs alternately, 3
# times each, before the following part (skipped then: LIVE_BENCH_FOLLOW=0
# skips it too).
# Figures: bench/README.md. Not part of make check.
set -eu
B=${1:-build}
shift || true
[ $# -gt 0 ] || set -- 64 1024
D=$(mktemp -d /tmp/live-bench.XXXXXX)
trap 'rm -rf "$D"' EXIT
for r in "$@"; do
  # about 64 MiB of records in all, at most 1 M spans a rank
  n=$((1000000 / r * 4))
  [ $n -le 1000000 ] || n=1000000
  rm -rf "$D/job" && mkdir -p "$D/job/logs"
  "$B/bench/log_gen" -o "$D/job" -r "$r" -n "$n" >/dev/null
  echo "== $r ranks x $n spans"
  s=$(date +%s.%N)
  cat "$D"/job/logs/*.cslog >/dev/null
  e=$(date +%s.%N)
  echo "baseline: cat of the logs: $(du -sm "$D/job/logs" | cut -f1) MiB in $(echo "$e - $s" | bc) s"
  if [ -n "${LIVE_BENCH_BEFORE:-}" ]; then
    for i in 1 2 3; do
      echo "-- before ($LIVE_BENCH_BEFORE):"
      "$LIVE_BENCH_BEFORE" "$D/job" 20 | head -2
      echo "-- this build:"
      "$B/bench/live_bench" "$D/job" 20 | head -2
    done
  else
    "$B/bench/live_bench" "$D/job" 20
  fi
done
[ -z "${LIVE_BENCH_BEFORE:-}" ] && [ "${LIVE_BENCH_FOLLOW:-1}" != 0 ] || exit 0
# following while 64 writers append as fast as they can (on the same
# cores: the writers and the follower compete for them)
rm -rf "$D/job" && mkdir -p "$D/job/logs"
echo "== following 64 ranks x 200000 spans while they are written, a refresh a second"
"$B/bench/log_gen" -o "$D/job" -r 64 -n 200000 >/dev/null &
"$B/bench/live_bench" --follow "$D/job" 1
wait
