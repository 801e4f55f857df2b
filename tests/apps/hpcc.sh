#!/bin/sh
# HPCC (Debian's /usr/bin/hpcc, Open MPI) on 2 ranks with a tiny problem
# (tests/apps/hpccinf.txt), untraced then traced: the results HPCC prints
# that do not depend on timing must be identical, and the trace must hold
# MPI calls from both ranks.
. "$srcdir/tests/lib.sh"
. "$S/tests/apps/apps.sh"
need_mpi openmpi
HPCC=${HPCC:-/usr/bin/hpcc}
[ -x "$HPCC" ] || skip "HPCC ($HPCC) not installed"
MPIRUN=$(mpirun_for openmpi)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

# Deterministic results of hpccoutf.txt: the HPL parameters, residual checks
# and verdicts, the PTRANS rows less their times and rates (PTRANS prints a
# CPU row only when it measured CPU time), and the summary values that are
# not timings or rates.
results() {
  awk '$1 == "WALL" { print $1, $2, $3, $4, $5, $6, $7, $9 }' "$1"
  grep -E '^(N|NB|P|Q) +:|\|\|Ax-b\|\||tests completed and|^(Success|CommWorldProcs|HPL_N|HPL_NB|HPL_nprow|HPL_npcol|HPL_RnormI|HPL_Anorm1|HPL_AnormI|HPL_Xnorm1|HPL_XnormI|HPL_BnormI|DGEMM_N|PTRANS_residual|PTRANS_n|PTRANS_nb|MPIRandomAccess_N|MPIRandomAccess_Errors|MPIRandomAccess_LCG_Errors|STREAM_VectorSize|FFT_N|MPIFFT_N)=' "$1"
  printf 'FAILED lines: %s\n' "$(grep -c FAILED "$1")"
}

for d in untraced traced; do
  mkdir -p "$T/$d" && cp "$S/tests/apps/hpccinf.txt" "$T/$d/" || fail "cannot set up $T/$d"
done
cd "$T/untraced" || fail "cannot enter $T/untraced"
check "untraced HPCC run" run_to run.out "$MPIRUN" -np 2 "$HPCC"
cd "$T/traced" || fail "cannot enter $T/traced"
traced_to "$T/trace" run.out "$MPIRUN" -np 2 "$HPCC"
cd "$T" || fail "cannot enter $T"

results untraced/hpccoutf.txt >untraced.results
results traced/hpccoutf.txt >traced.results
grep -q '^Success=1' untraced.results || fail "untraced HPCC did not succeed (see $T/untraced/hpccoutf.txt)"
grep -q 'PASSED' untraced.results || fail "untraced HPCC printed no HPL residual check"
check "HPCC results identical traced and untraced ($(wc -l <untraced.results) lines)" \
  cmp untraced.results traced.results

db="$T/trace/trace.db"
expect_eq "ranks with MPI spans" "$(traced_ranks "$db" "op LIKE 'MPI\\_%' ESCAPE '\\'")" "0,1"
expect_eq "ranks with collectives (MPI_Bcast, MPI_Allreduce)" \
  "$(traced_ranks "$db" "op IN ('MPI_Bcast','MPI_Allreduce')")" "0,1"
expect_eq "ranks with point-to-point calls" \
  "$(traced_ranks "$db" "op IN ('MPI_Send','MPI_Recv','MPI_Isend','MPI_Irecv','MPI_Sendrecv')")" "0,1"
pass
