#!/bin/sh
# PAPI counter deltas are recorded where the machine has hardware counters.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
command -v papi_avail >/dev/null || skip "papi_avail not installed"
papi_avail -a 2>/dev/null | grep -q 'PAPI_TOT_CYC' || skip "no hardware counters on this machine (papi_avail lists no PAPI_TOT_CYC)"
COLLSCOPE_PAPI=PAPI_TOT_CYC "$COLLSCOPE" run -o "$T/p" -- "$prog" --steps 3 > "$T/p.out" 2>&1 || fail "run failed"
n=$(q "$T/p/trace.db" "SELECT count(*) FROM counters WHERE event='PAPI_TOT_CYC' AND value > 0")
[ "$n" -gt 0 ] || fail "no PAPI_TOT_CYC values recorded"
echo "ok: $n counter values"
pass
