#!/bin/sh
# Exact counts and matching sequence numbers, with each MPI implementation:
# a 4-rank trainer calling every wrapped function, with split, dup and
# create communicators. The launcher leaves no log of its own.
. "$srcdir/tests/lib.sh"
ran=0
for impl in openmpi mpich; do
  l=$(mpirun_for $impl)
  prog=$B/examples/mpi_trainer_${impl%%mpi}
  [ $impl = openmpi ] && prog=$B/examples/mpi_trainer_ompi
  [ -x "$l" ] && [ -x "$prog" ] || { echo "note: $impl not available"; continue; }
  out=$T/$impl
  "$COLLSCOPE" run -o "$out" -- "$l" -np 4 "$prog" --steps 4 --all-ops --split --nonblocking --halo \
    > "$T/$impl.out" 2> "$T/$impl.err" || { cat "$T/$impl.err"; fail "$impl: traced run failed"; }
  db=$out/trace.db
  check "$impl: trace.db exists" test -s "$db"
  expect_eq "$impl: one log per rank (the launcher wrote none)" "$(ls "$out/logs" | grep -c '\.cslog$')" 4
  expect_eq "$impl: ranks in the trace" "$(q "$db" "SELECT group_concat(rank) FROM (SELECT DISTINCT rank FROM spans ORDER BY rank)")" "0,1,2,3"
  expect_eq "$impl: the preload flavor" "$(q "$db" "SELECT DISTINCT mpi FROM processes")" "$impl"
  check_counts "$T/$impl.out" "$db"
  check_seqs "$db"
  # split (2 colors), dup of world, dup of split, create: at least 6 ids besides world and self.
  n=$(q "$db" "SELECT count(DISTINCT id) FROM comms WHERE how IN ('split','dup','create')")
  [ "$n" -ge 5 ] || fail "$impl: only $n derived communicators recorded"
  echo "ok: $impl: $n derived communicators"
  # Nonblocking starts are paired with their completion.
  open=$(q "$db" "SELECT count(*) FROM spans s WHERE s.req IS NOT NULL AND NOT EXISTS
                  (SELECT 1 FROM completions c WHERE c.rank = s.rank AND c.req = s.req)")
  expect_eq "$impl: nonblocking requests without a completion" "$open" 0
  # The spans view offers the documented columns.
  check "$impl: spans view columns" q "$db" "SELECT rank, op, comm, seq, bytes, begin_ns, end_ns, callsite FROM spans LIMIT 1"
  ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no MPI implementation with its trainer is built"
pass
