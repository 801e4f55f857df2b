#!/bin/sh
# Numeric settings of the preload that are not numbers (abc, NaN, inf),
# negative, or too large to use give one warning and the default: no span is
# dropped. "later spans are dropped" is said only when spans are. A clock
# that is neither tsc nor monotonic gives one warning and the default clock.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
need_mpi openmpi
mpirun=$(mpirun_for openmpi)
"$COLLSCOPE" run -o "$T/ref" -- "$mpirun" -n 2 "$prog" --steps 5 > /dev/null 2>&1 || fail "reference run failed"
want=$(q "$T/ref/trace.db" "SELECT count(*) FROM span")
for v in abc nan inf -1 0 99999999999999999999 17592186044417 1e3; do
  COLLSCOPE_LOG_MAX_MB=$v "$COLLSCOPE" run -o "$T/o" -- "$mpirun" -n 2 "$prog" --steps 5 > /dev/null 2> "$T/e.err" ||
    fail "COLLSCOPE_LOG_MAX_MB=$v: the run failed: $(cat "$T/e.err")"
  expect_eq "COLLSCOPE_LOG_MAX_MB=$v: one warning ($(grep LOG_MAX "$T/e.err"))" \
    "$(grep -c "COLLSCOPE_LOG_MAX_MB=$v is not a positive whole number of MiB; using 16384" "$T/e.err")" 1
  expect_eq "COLLSCOPE_LOG_MAX_MB=$v: spans dropped" "$(q "$T/o/trace.db" "SELECT sum(dropped) FROM processes")" 0
  expect_eq "COLLSCOPE_LOG_MAX_MB=$v: spans" "$(q "$T/o/trace.db" "SELECT count(*) FROM span")" "$want"
  ! grep -q 'dropped and counted' "$T/e.err" || fail "COLLSCOPE_LOG_MAX_MB=$v: a drop message with no drop"
done
dflt_clock=$(q "$T/ref/trace.db" "SELECT group_concat(DISTINCT clock) FROM processes")
for v in bogus tsc- ''; do
  COLLSCOPE_CLOCK=$v "$COLLSCOPE" run -o "$T/k" -- "$mpirun" -n 2 "$prog" --steps 5 > /dev/null 2> "$T/k.err" ||
    fail "COLLSCOPE_CLOCK=$v: the run failed: $(cat "$T/k.err")"
  if [ -n "$v" ]; then
    expect_eq "COLLSCOPE_CLOCK=$v: one warning ($(grep CLOCK "$T/k.err"))" \
      "$(grep -c "COLLSCOPE_CLOCK=$v is not tsc or monotonic; using the default" "$T/k.err")" 1
  else
    expect_eq "COLLSCOPE_CLOCK unset: no warning" "$(grep -c COLLSCOPE_CLOCK "$T/k.err")" 0
  fi
  expect_eq "COLLSCOPE_CLOCK=$v: the default clock" \
    "$(q "$T/k/trace.db" "SELECT group_concat(DISTINCT clock) FROM processes")" "$dflt_clock"
  expect_eq "COLLSCOPE_CLOCK=$v: spans" "$(q "$T/k/trace.db" "SELECT count(*) FROM span")" "$want"
done
for v in monotonic tsc; do
  COLLSCOPE_CLOCK=$v "$COLLSCOPE" run -o "$T/k" -- "$mpirun" -n 2 "$prog" --steps 2 > /dev/null 2> "$T/k.err" ||
    fail "COLLSCOPE_CLOCK=$v: the run failed: $(cat "$T/k.err")"
  expect_eq "COLLSCOPE_CLOCK=$v: no warning" "$(grep -c COLLSCOPE_CLOCK "$T/k.err")" 0
  expect_eq "COLLSCOPE_CLOCK=$v: the clock" \
    "$(q "$T/k/trace.db" "SELECT group_concat(DISTINCT clock) FROM processes")" "$v"
done
COLLSCOPE_TEST_ENOSPC_AFTER=abc "$COLLSCOPE" run -o "$T/o" -- "$mpirun" -n 2 "$prog" --steps 2 > /dev/null 2> "$T/t.err"
expect_eq "COLLSCOPE_TEST_ENOSPC_AFTER=abc: one warning" \
  "$(grep -c 'COLLSCOPE_TEST_ENOSPC_AFTER=abc is not a number of segments' "$T/t.err")" 1
# A disk that fills after the first segment, which this run does not fill:
# the segments readied ahead fail, but no span is dropped and none is said to be.
COLLSCOPE_TEST_ENOSPC_AFTER=1 "$COLLSCOPE" run -o "$T/s" -- "$mpirun" -n 2 "$prog" --steps 5 > /dev/null 2> "$T/s.err" ||
  fail "the run on a nearly full disk failed: $(cat "$T/s.err")"
expect_eq "a full disk, no span lost: dropped" "$(q "$T/s/trace.db" "SELECT sum(dropped) FROM processes")" 0
! grep -q 'dropped and counted' "$T/s.err" || fail "a drop message with no drop: $(cat "$T/s.err")"
# A cap that is reached: the message, once, and drops counted.
COLLSCOPE_LOG_MAX_MB=1 COLLSCOPE_PREFAULT=0 "$COLLSCOPE" run -o "$T/c" -- "$mpirun" -n 2 "$prog" --steps 3000 \
  > /dev/null 2> "$T/c.err" || fail "the capped run failed: $(cat "$T/c.err")"
d=$(q "$T/c/trace.db" "SELECT sum(dropped) FROM processes")
if [ "$d" -gt 0 ]; then
  expect_eq "a cap reached: one message" "$(grep -c 'later spans are dropped and counted' "$T/c.err")" 1
else
  expect_eq "a cap not reached: no message" "$(grep -c 'later spans are dropped' "$T/c.err")" 0
fi
pass
