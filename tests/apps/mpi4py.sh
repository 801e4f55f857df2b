#!/bin/sh
# mpi4py (Debian's python3-mpi4py, Open MPI) on 4 ranks: examples/mpi4py_allreduce.py
# untraced then traced. Same checksum both times, and the trace holds on
# every rank exactly as many MPI_Allreduce (and MPI_Barrier) calls as the
# script made. mpi4py loads libmpi with RTLD_LOCAL, which the tool must handle.
. "$srcdir/tests/lib.sh"
. "$S/tests/apps/apps.sh"
need_mpi openmpi
PY=/usr/bin/python3       # not the pyenv python on PATH: it lacks Debian's modules
[ -x "$PY" ] || skip "$PY not installed"
"$PY" -c 'import mpi4py, numpy' 2>/dev/null || skip "python3-mpi4py or python3-numpy not installed"
MPIRUN=$(mpirun_for openmpi)
cd "$T" || fail "cannot enter $T"
script="$S/examples/mpi4py_allreduce.py"

check "untraced mpi4py run" run_to untraced.out "$MPIRUN" -np 4 "$PY" "$script" 12
traced_to "$T/trace" traced.out "$MPIRUN" -np 4 "$PY" "$script" 12
num='[0-9][0-9.e+-]*'
sum=$(printed_value untraced.out checksum "$num")
[ -n "$sum" ] || fail "untraced run printed no checksum (see $T/untraced.out)"
expect_eq "traced checksum" "$(printed_value traced.out checksum "$num")" "$sum"
expect_counts_match traced.out "$T/trace/trace.db" 4 MPI_Allreduce MPI_Barrier
pass
