#!/bin/sh
# Call sites are told apart when the preload answers them from its cache
# (interpose/callsite.c: keyed by where the wrapper is called from, checked
# against the stack's return addresses): one MPI_Barrier line reached from
# different callers at the same stack depth, one or two frames up, and
# from recursion of varying depth. Every span's stack, from the barrier's
# function to main, must be the one the program says it called it along;
# on both MPI implementations, as singletons.
. "$srcdir/tests/lib.sh"
ran=0
for impl in ompi mpich; do
  prog=$B/tests/mpi/callsite_prog_$impl
  [ -x "$prog" ] || { echo "note: $prog not built"; continue; }
  out=$T/$impl
  "$COLLSCOPE" run -o "$out" -- "$prog" 40 > "$T/$impl.want" 2> "$T/$impl.err" || { cat "$T/$impl.err"; fail "$impl: traced run failed"; }
  db=$out/trace.db
  check "$impl: trace.db exists" test -s "$db"
  # 8 stacks at least (two callers, two outer callers, 4 depths), and the
  # program's lines calling them may add more.
  n=$(q "$db" "SELECT count(*) FROM callsites WHERE rank = 0")
  [ "$n" -ge 8 ] || fail "$impl: only $n call sites captured"
  echo "ok: $impl: $n call sites"
  q "$db" "SELECT (SELECT group_concat(func, ' ') FROM (SELECT func FROM frames f
             WHERE f.rank = s.rank AND f.callsite = s.callsite_id
               AND f.level <= (SELECT min(level) FROM frames g WHERE g.rank = s.rank AND g.callsite = s.callsite_id AND g.func = 'main')
             ORDER BY level))
           FROM spans s WHERE s.op = 'MPI_Barrier' ORDER BY s.begin_ns" > "$T/$impl.got"
  expect_eq "$impl: barriers traced" "$(wc -l < "$T/$impl.got")" 160
  diff "$T/$impl.want" "$T/$impl.got" > "$T/$impl.diff" || { head -n 10 "$T/$impl.diff"; fail "$impl: a span has another stack than the one it was called along"; }
  echo "ok: $impl: every barrier's stack is the one it was called along"
  ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no MPI implementation built"
pass
