#!/bin/sh
# One process started with no launcher (an MPI singleton) is traced too, and
# PAPI counters that the machine lacks give one warning, not a failure.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
"$COLLSCOPE" run -o "$T/one" -- "$prog" --steps 3 > "$T/one.out" 2> "$T/one.err" ||
  { cat "$T/one.err"; fail "singleton run failed"; }
check_counts "$T/one.out" "$T/one/trace.db"
expect_eq "the singleton is rank 0" "$(q "$T/one/trace.db" "SELECT group_concat(DISTINCT rank) FROM spans")" 0

COLLSCOPE_PAPI=PAPI_TOT_CYC,PAPI_TOT_INS "$COLLSCOPE" run -o "$T/papi" -- "$prog" --steps 3 \
  > "$T/papi.out" 2> "$T/papi.err" || fail "run with COLLSCOPE_PAPI failed"
grep -v '^step time' "$T/one.out" > "$T/one.cmp"
grep -v '^step time' "$T/papi.out" | diff "$T/one.cmp" - || fail "COLLSCOPE_PAPI changed the program's output"
if [ "$(q "$T/papi/trace.db" "SELECT count(*) FROM counters")" -gt 0 ]; then
  echo "ok: this machine has counters; $(q "$T/papi/trace.db" "SELECT count(*) FROM counters") values recorded"
else
  expect_eq "missing counters: one warning" "$(grep -c '^collscope: PAPI' "$T/papi.err")" 1
  q "$T/papi/trace.db" "SELECT note FROM processes" | grep -q papi || fail "the trace does not say why there are no counters"
  echo "ok: no counters here: one warning, the note '$(q "$T/papi/trace.db" "SELECT note FROM processes")'"
fi
pass
