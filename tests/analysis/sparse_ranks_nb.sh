#!/bin/sh
# Ranks stored sparsely, on a traced run with nonblocking collectives: the
# completions (rank, request) and call sites (rank, id) of ranks whose ids
# differ by multiples of 2^24 (0, 2^24, 2^25, 3*2^24) stay apart, so the
# analysis equals that of the same trace with ranks 0-3.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/analysis/sparse_ranks.inc.sh"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 not installed"
L=$(mpirun_for openmpi); P=$B/tests/progs/nbloop_ompi
if [ -z "$L" ] || [ ! -x "$L" ] || [ ! -x "$P" ]; then
  L=$(mpirun_for mpich); P=$B/tests/progs/nbloop_mpich
  [ -n "$L" ] && [ -x "$L" ] && [ -x "$P" ] || skip "no MPI implementation with tests/progs/nbloop is built"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$COLLSCOPE" run -o "$T/run" -- "$L" -np 4 "$P" --steps 40 --buckets 8 --markers --late-rank 2 --late-us 5000 \
  --late-every 1 >"$T/run.out" 2>&1 || { cat "$T/run.out"; fail "traced nbloop run failed"; }
n=$(q "$T/run/trace.db" "SELECT count(*) FROM completions c1 JOIN completions c2 ON c1.req = c2.req AND c1.rank < c2.rank")
[ "$n" -gt 0 ] 2>/dev/null || fail "no request id shared by two ranks in the trace: nothing to tell apart"
cp "$T/run/trace.db" "$T/plain.db"
cp "$T/run/trace.db" "$T/wide.db"
MAP="1:16777216 2:33554432 3:50331648"
renumber "$T/wide.db" "$MAP"
for d in plain wide; do
  "$COLLSCOPE" analyze --force "$T/$d.db" >/dev/null || fail "analyze $d failed"
  "$COLLSCOPE" report "$T/$d.db" --format json -o "$T/$d.json" || fail "report $d failed"
done
figures "$T/plain.json" "$MAP" >"$T/plain.fig" || fail "cannot read $T/plain.json"
figures "$T/wide.json" >"$T/wide.fig" || fail "cannot read $T/wide.json"
grep -v '^step ' "$T/wide.fig"
for r in 0 16777216 33554432 50331648; do
  for what in wait clock rank; do
    grep -q "^$what $r " "$T/wide.fig" || fail "rank $r: not in the report's $what table"
  done
done
diff "$T/plain.fig" "$T/wide.fig" || fail "ranks 0, 2^24, 2^25, 3*2^24: the analysis differs from ranks 0-3"
pass
