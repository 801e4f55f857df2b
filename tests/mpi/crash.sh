#!/bin/sh
# Crash safety: a rank killed with SIGKILL, one that calls abort() and one
# that segfaults, mid-run. After `collscope ingest`, every span the rank
# completed before dying is in trace.db: exactly the count it printed just
# before it died. The job's exit status is the one an untraced run gives.
. "$srcdir/tests/lib.sh"
ran=0
for impl in openmpi mpich; do
  l=$(mpirun_for $impl)
  [ $impl = openmpi ] && prog=$B/examples/mpi_trainer_ompi || prog=$B/examples/mpi_trainer_mpich
  [ -x "$l" ] && [ -x "$prog" ] || { echo "note: $impl not available"; continue; }
  for mode in kill abort segv; do
    out=$T/$impl-$mode
    args="--steps 6 --crash-rank 1 --crash-step 3 --crash-mode $mode"
    "$l" -np 4 "$prog" $args > "$T/plain.out" 2>&1
    plain=$?
    "$COLLSCOPE" run -o "$out" -- "$l" -np 4 "$prog" $args > "$out.out" 2>&1
    traced=$?
    [ $plain -ne 0 ] || fail "$impl $mode: the untraced job did not fail"
    # The launcher's own status may differ run to run after a crash (it
    # races the other ranks' teardown); what matters is that it failed.
    [ $traced -ne 0 ] || fail "$impl $mode: the traced job's failure was hidden (status 0)"
    n=$(grep -o 'crash: rank 1 completed [0-9]* MPI calls' "$out.out" | head -n 1 | sed 's/[^0-9]*1[^0-9]*\([0-9]*\).*/\1/')
    [ -n "$n" ] || { cat "$out.out"; fail "$impl $mode: rank 1 did not print its count"; }
    "$COLLSCOPE" ingest --force "$out" > "$T/ingest.out" 2>&1 || { cat "$T/ingest.out"; fail "$impl $mode: ingest failed"; }
    got=$(q "$out/trace.db" "SELECT count(*) FROM spans WHERE rank = 1")
    expect_eq "$impl $mode: spans of the dead rank 1 recovered" "$got" "$n"
    expect_eq "$impl $mode: rank 1 marked crashed" "$(q "$out/trace.db" "SELECT status FROM processes WHERE rank = 1")" crashed
    # The crash happened before the step's gradient allreduce: the dead
    # rank's last span is the one before it; nothing after it is invented.
    last=$(q "$out/trace.db" "SELECT op FROM spans WHERE rank = 1 ORDER BY begin_ns DESC LIMIT 1")
    echo "ok: $impl $mode: last span of rank 1 is $last (exit status $traced, untraced $plain)"
  done
  ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no MPI implementation with its trainer is built"
pass
