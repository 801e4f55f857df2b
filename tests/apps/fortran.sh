#!/bin/sh
# Fortran (use mpi, Open MPI): examples/fortran_ring.f90 on 4 ranks. Open MPI's
# Fortran bindings call PMPI_* directly; the trace must still hold, under the
# MPI_* names, exactly the calls the program counted on every rank.
. "$srcdir/tests/lib.sh"
. "$S/tests/apps/apps.sh"
need_mpi openmpi
FC=${MPIFC_OMPI:-$(command -v mpif90.openmpi)}
[ -n "$FC" ] && [ "$FC" != no ] && [ -x "$FC" ] || skip "mpif90.openmpi not installed"
MPIRUN=$(mpirun_for openmpi)
cd "$T" || fail "cannot enter $T"

check "compile fortran_ring.f90" "$FC" -O2 -o fortran_ring "$S/examples/fortran_ring.f90"
check "untraced Fortran run" run_to untraced.out "$MPIRUN" -np 4 ./fortran_ring 25
traced_to "$T/trace" traced.out "$MPIRUN" -np 4 ./fortran_ring 25
num='[0-9][0-9.E+-]*'
want=$(printed_value untraced.out 'ring result' "$num")
[ -n "$want" ] || fail "untraced run printed no result (see $T/untraced.out)"
expect_eq "traced ring result" "$(printed_value traced.out 'ring result' "$num")" "$want"
expect_counts_match traced.out "$T/trace/trace.db" 4 MPI_Send MPI_Recv MPI_Allreduce MPI_Barrier
pass
