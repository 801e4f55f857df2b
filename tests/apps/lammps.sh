#!/bin/sh
# LAMMPS (Debian's /usr/bin/lmp, built with Open MPI): a Lennard-Jones melt
# on 4 ranks, untraced then traced. The thermo output must be identical and
# the trace must hold collectives and point-to-point calls from all 4 ranks.
. "$srcdir/tests/lib.sh"
. "$S/tests/apps/apps.sh"
need_mpi openmpi
LMP=${LMP:-/usr/bin/lmp}
[ -x "$LMP" ] || skip "LAMMPS ($LMP) not installed"
MPIRUN=$(mpirun_for openmpi)
export OMP_NUM_THREADS=1
cd "$T" || fail "cannot enter $T"
lmp_args="-in $S/tests/apps/lj-melt.in -log none -nocite"

# The thermo table: from its "Step ..." header to the line before "Loop time".
thermo() { awk '/^Loop time/ { on = 0 } on { print } /^Step / { on = 1; print }' "$1"; }

check "untraced LAMMPS run" run_to untraced.out "$MPIRUN" -np 4 "$LMP" $lmp_args
traced_to "$T/trace" traced.out "$MPIRUN" -np 4 "$LMP" $lmp_args
thermo untraced.out >untraced.thermo
thermo traced.out >traced.thermo
rows=$(grep -c '^ *[0-9]' untraced.thermo)
[ "$rows" -ge 5 ] || fail "untraced run printed $rows thermo rows (see $T/untraced.out)"
check "thermo output identical traced and untraced ($rows rows)" cmp untraced.thermo traced.thermo

db="$T/trace/trace.db"
expect_eq "ranks with MPI_Allreduce" "$(traced_ranks "$db" "op='MPI_Allreduce'")" "0,1,2,3"
expect_eq "ranks with point-to-point calls" \
  "$(traced_ranks "$db" "op IN ('MPI_Send','MPI_Isend','MPI_Irecv','MPI_Recv','MPI_Sendrecv')")" \
  "0,1,2,3"
# Every rank joins every MPI_COMM_WORLD collective: equal counts on all ranks.
expect_eq "distinct per-rank MPI_Allreduce counts" \
  "$(q "$db" "SELECT count(DISTINCT n) FROM (SELECT count(*) n FROM spans WHERE op='MPI_Allreduce' GROUP BY rank)")" 1
pass
