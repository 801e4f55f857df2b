#!/bin/sh
# Apply mode's on-line guard (interpose/fuse/fuse_guard.h), 2 ranks, both
# MPI libraries, on guard_prog (64 nonblocking allreduces of 2 KiB a step,
# one Waitall), judged by the program's own timer and its own checks:
# - fusing made to lose (COLLSCOPE_TEST_GUARD_SLOW=fused:100000 stalls each
#   fused call 100 ms): the guard chooses unfused after its trial, the
#   program's median MPI time per step stays below half a stall (it would
#   be >= 100 ms a step with the guard off), fused windows are the trial's
#   and the checks' only;
# - fusing made to win (unfused:2000 stalls each call left unfused, 128 ms
#   a step): the guard chooses a fused setting, the median step stays
#   below half of that;
# (stalls large against the steps of MPICH's busy-polling ranks on a
# loaded machine, several ms, and against a fused step beside 8 busy
# loops: 36 ms, over the 32 ms bound when an unfused step stalled 64)
# - every run's values right and bit-identical to the untraced run; every
#   rank recorded the same decisions (the votes agree); the report names
#   the guard's choice.
CS_TEST_NAME=mpi-fuse_guard # (its work folder: /tmp/cs-mpi-fuse_guard.*)
. "$srcdir/tests/lib.sh"
STEPS=200
ran=0
unset COLLSCOPE_FUSE_GUARD COLLSCOPE_FUSE_BUFFER COLLSCOPE_FUSE_THRESHOLD

# field FILE RANK NAME: NAME=value on that rank's GUARD line
field() { grep -o "GUARD rank=$2 .*" "$1" | tr ' ' '\n' | sed -n "s/^$3=//p"; }

run_flavor() {
  flavor=$1 prog=$2
  l=$(mpirun_for "$flavor")
  [ -n "$l" ] && [ -x "$l" ] && [ -x "$prog" ] || { echo "note: $flavor not available"; return; }
  ran=$((ran + 1))
  d=$T/$flavor
  "$l" -np 2 "$prog" $STEPS 64 2048 200 > "$d.plain" 2>&1 || fail "$flavor: untraced run failed: $(cat "$d.plain")"
  want=$(field "$d.plain" 0 checksum)
  [ -n "$want" ] || fail "$flavor: no checksum: $(cat "$d.plain")"

  for side in fused unfused; do
    o=$d.$side
    COLLSCOPE_FUSE=1 COLLSCOPE_FUSE_BUFFER=256K COLLSCOPE_TEST_GUARD_SLOW=$side:$([ $side = fused ] && echo 100000 || echo 2000) \
      "$COLLSCOPE" run -o "$o" -- "$l" -np 2 "$prog" $STEPS 64 2048 200 > "$o.out" 2> "$o.err" ||
      fail "$flavor: run with $side calls slowed failed: $(cat "$o.out" "$o.err")"
    for r in 0 1; do
      expect_eq "$flavor/$side slowed: rank $r values" "$(field "$o.out" $r wrong)" 0
      expect_eq "$flavor/$side slowed: rank $r result bits" "$(field "$o.out" $r checksum)" "$want"
    done
    db=$o/trace.db
    # every rank took the same decisions from the same figures
    expect_eq "$flavor/$side slowed: decisions that differ between the ranks" \
      "$(q "$db" "SELECT count(*) FROM (SELECT window, setting, buffer FROM fuse_guard WHERE what = 'decision'
                 GROUP BY window, setting, buffer HAVING count(*) != 2)")" 0
    # (the same sums; each rank converts ticks to ns with its own clock rate)
    expect_eq "$flavor/$side slowed: window figures that differ between the ranks" \
      "$(q "$db" "SELECT count(*) FROM (SELECT window FROM fuse_guard WHERE what = 'window'
                 GROUP BY window, setting, calls HAVING count(*) != 2 OR max(time_ns) > 1.01 * min(time_ns))")" 0
    first=$(q "$db" "SELECT setting || ' ' || why FROM fuse_guard WHERE what = 'decision' AND rank = 0
                     ORDER BY window LIMIT 1")
    last=$(q "$db" "SELECT setting FROM fuse_guard WHERE what = 'decision' AND rank = 0 ORDER BY window DESC LIMIT 1")
    med=$(field "$o.out" 0 mpi_us_med)
    [ -n "$med" ] || fail "$flavor/$side slowed: no mpi_us_med"
    if [ $side = fused ]; then
      expect_eq "$flavor/fused slowed: the trial's decision" "$first" "0 unfused wins the trial"
      expect_eq "$flavor/fused slowed: the last decision" "$last" 0
      # fused windows: the trial's (2 or 3 settings x 3 rounds) and the checks'
      n=$(q "$db" "SELECT count(*) FROM fuse_guard WHERE what = 'window' AND rank = 0 AND setting != 0")
      all=$(q "$db" "SELECT count(*) FROM fuse_guard WHERE what = 'window' AND rank = 0")
      [ "$n" -le $((9 + all / 32 + 1)) ] || fail "$flavor/fused slowed: $n of $all windows ran fused"
      echo "ok: $flavor/fused slowed: $n of $all windows ran fused"
      awk -v m="$med" 'BEGIN { exit !(m < 50000) }' ||
        fail "$flavor/fused slowed: the program's median MPI time per step is $med us (a fused step stalls 100000 or more)"
      echo "ok: $flavor/fused slowed: the program's median MPI time per step $med us"
    else
      case $first in 0\ *) fail "$flavor/unfused slowed: the trial chose unfused ($first)" ;; esac
      [ "$last" != 0 ] || fail "$flavor/unfused slowed: ends unfused"
      echo "ok: $flavor/unfused slowed: the guard chose setting $first, keeps $last"
      awk -v m="$med" 'BEGIN { exit !(m < 64000) }' ||
        fail "$flavor/unfused slowed: the program's median MPI time per step is $med us (an unfused step stalls 128000)"
      echo "ok: $flavor/unfused slowed: the program's median MPI time per step $med us"
      "$COLLSCOPE" report "$o" > "$o.report" 2>&1 || fail "$flavor: report failed: $(cat "$o.report")"
      grep -q "Apply mode's guard" "$o.report" || fail "$flavor: the report does not show the guard: $(cat "$o.report")"
    fi
  done
}

run_flavor openmpi "$B/tests/mpi/guard_prog_ompi"
run_flavor mpich "$B/tests/mpi/guard_prog_mpich"
[ $ran -gt 0 ] || skip "no MPI implementation with its test program"
pass
