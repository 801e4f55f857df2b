# par_transport_mpi.inc.sh: par_transport_ompi.sh and _mpich.sh, with MPI
# (openmpi|mpich) and SUF (ompi|mpich) set. The MPI transport alone
# (test_par_mpi_SUF, par_mpi.c with a stand-in of the analysis) under that
# mpirun: 3 processes exchange 30 MB each way, and 1 MB in rounds of 1000
# bytes (COLLSCOPE_PAR_TEST_CHUNK: the splitting of messages over 2 GB);
# then on a 64-rank job of rank stores `collscope analyze -j 3 --via MPI`
# (collscope starts mpirun) and `mpirun -np 2 collscope analyze DIR`
# (collscope execs its MPI program) write DIR/results.db with the serial
# analysis's report; -j under mpirun is refused; a process killed
# (COLLSCOPE_PAR_TEST_KILL) ends the job with a message and no results.db.
need_mpi "$MPI"
case $SUF in ompi) _built=${CS_HAVE_OMPI:-yes} ;; *) _built=${CS_HAVE_MPICH:-yes} ;; esac
[ "$_built" != no ] || skip "collscope was configured without $MPI"
. "$S/tests/store/par_transport.inc.sh"
MPIRUN=$(mpirun_for "$MPI")
TPM=$B/tests/unit/test_par_mpi_$SUF
[ -x "$TPM" ] || fail "tests/unit/test_par_mpi_$SUF not built"
[ -x "$B/analyzer/collscope-analyze-$MPI" ] || fail "analyzer/collscope-analyze-$MPI not built"

for c in "30 0" "1 1000"; do
  set -- $c
  COLLSCOPE_PAR_TEST_MB=$1 COLLSCOPE_PAR_TEST_CHUNK=$2 "$MPIRUN" -np 3 "$TPM" x > "$T/tpm.out" 2>&1
  rc=$?
  cat "$T/tpm.out"
  expect_eq "$1 MB each way (chunk $2): exit status" "$rc" 0
  grep -q "^ok: gathered $((3 * ($1 * 1000000 / 3) + 21)) bytes from 3 processes$" "$T/tpm.out" || fail "the gather was not checked"
  grep -q "^ok: broadcast $(($1 * 1000000 + 3)) bytes to 2 processes, sent $((2 * ($1 * 1000000 + 11) + 16)) bytes$" "$T/tpm.out" ||
    fail "the broadcast or the root's byte count is wrong"
done

par_job via
COLLSCOPE_VERBOSE=1 "$COLLSCOPE" analyze -j 3 --via "$MPI" "$T/via" 2> "$T/via.err" ||
  { cat "$T/via.err"; fail "analyze -j 3 --via $MPI failed"; }
cat "$T/via.err"
grep -q "analysing $T/via with 3 processes under .*collscope-analyze-$MPI" "$T/via.err" || fail "-j 3: mpirun not named"
grep -q "analysing $T/via with 3 MPI processes" "$T/via.err" || fail "-j 3: the MPI program did not run"
par_same via "-j 3 --via $MPI"

# an MPI process that dies: the job ends, no results.db, nothing left
par_job kill
COLLSCOPE_PAR_TEST_KILL=1 "$COLLSCOPE" analyze -j 3 --via "$MPI" "$T/kill" > /dev/null 2> "$T/kill.err"
rc=$?
cat "$T/kill.err"
expect_eq "an MPI process killed: exit status" "$rc" 1
grep -q "^collscope: .*mpirun.* \(stopped (signal 9)\|ended with status\)" "$T/kill.err" || fail "an MPI process killed: no message"
[ ! -e "$T/kill/results.db" ] || fail "an MPI process killed: results.db written"
sleep 1
left=$(pgrep -f "collscope-analyze-$MPI.* $T/kill" || true)
[ -z "$left" ] || fail "an MPI process killed: processes left: $left"
echo "ok: an MPI process killed: one message, no results.db, no process left"

par_job under
COLLSCOPE_VERBOSE=1 "$MPIRUN" -np 2 "$COLLSCOPE" analyze "$T/under" > "$T/under.out" 2> "$T/under.err" ||
  { cat "$T/under.err"; fail "mpirun -np 2 collscope analyze failed"; }
cat "$T/under.err"
grep -q "analysing $T/under with 2 MPI processes (.*collscope-analyze-$MPI)" "$T/under.err" ||
  fail "collscope under mpirun did not become collscope-analyze-$MPI"
expect_eq "one analysis note under mpirun" "$(grep -c 'no parallel layout' "$T/under.err")" 1
par_same under "mpirun -np 2 collscope analyze"

"$MPIRUN" -np 2 "$COLLSCOPE" analyze -j 2 "$T/under" > /dev/null 2> "$T/jm.err"
[ $? != 0 ] || fail "-j under mpirun was accepted"
expect_eq "-j under mpirun: one message" "$(grep -c -- '-j 2 under mpirun' "$T/jm.err")" 1
pass
