#!/bin/sh
# Crash safety: a rank killed with SIGKILL, one that calls abort() and one
# that segfaults, mid-run (rank 1, at step 3 of 6, after the step's
# MPI_Pcontrol marker and before its gradient allreduce). After `collscope
# ingest`, every span the rank completed before dying is in trace.db:
# exactly the count it printed just before it died, its last span is that
# step's marker, it has the markers of steps 0-3 and the gradient
# allreduces of steps 0-2, and nothing after (no MPI_Finalize). The traced
# job fails as the untraced one does.
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
    db=$out/trace.db
    expect_eq "$impl $mode: last span of rank 1" \
      "$(q "$db" "SELECT op FROM spans WHERE rank = 1 ORDER BY begin_ns DESC LIMIT 1")" MPI_Pcontrol
    expect_eq "$impl $mode: step markers of rank 1 (steps 0-3)" \
      "$(q "$db" "SELECT count(*) FROM spans WHERE rank = 1 AND op = 'MPI_Pcontrol'")" 4
    expect_eq "$impl $mode: rank 1's MPI_Init, MPI_Bcast, MPI_Finalize" \
      "$(q "$db" "SELECT sum(op = 'MPI_Init') || ' ' || sum(op = 'MPI_Bcast') || ' ' || sum(op = 'MPI_Finalize') FROM spans WHERE rank = 1")" "1 1 0"
    # The gradient allreduces of one step (between the first two markers),
    # three steps of them; none after the last marker.
    per=$(q "$db" "WITH m AS (SELECT begin_ns b FROM spans WHERE rank = 1 AND op = 'MPI_Pcontrol' ORDER BY begin_ns LIMIT 2)
                   SELECT count(*) FROM spans WHERE rank = 1 AND op = 'MPI_Allreduce'
                   AND begin_ns > (SELECT min(b) FROM m) AND begin_ns < (SELECT max(b) FROM m)")
    [ "$per" -gt 0 ] || fail "$impl $mode: no gradient allreduce in rank 1's step 0"
    expect_eq "$impl $mode: gradient allreduces of rank 1 (3 steps of $per)" \
      "$(q "$db" "SELECT count(*) FROM spans WHERE rank = 1 AND op = 'MPI_Allreduce'")" $((3 * per))
    expect_eq "$impl $mode: rank 1 spans after its last marker" \
      "$(q "$db" "SELECT count(*) FROM spans WHERE rank = 1 AND begin_ns > (SELECT max(begin_ns) FROM spans WHERE rank = 1 AND op = 'MPI_Pcontrol')")" 0
    echo "ok: $impl $mode: exit status $traced, untraced $plain"
  done
  ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no MPI implementation with its trainer is built"
pass
