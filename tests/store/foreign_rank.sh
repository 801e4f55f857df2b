#!/bin/sh
# A rank store that is not the one the job index records (another run's,
# copied over it) is never analysed as if it belonged: analyze and merge
# name it, leave it out, and exit 1.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
need_mpi openmpi
mpirun=$(mpirun_for openmpi)
for r in a b; do
  "$COLLSCOPE" run --no-merge -o "$T/$r" -- "$mpirun" -n 2 "$prog" --steps 4 > /dev/null 2>&1 || fail "run $r failed"
done
"$COLLSCOPE" analyze "$T/a" > /dev/null 2> "$T/ok.err" || fail "the job as written does not analyse: $(cat "$T/ok.err")"
a1=$(ls "$T"/a/ranks/rank-000001-*.db)
cp "$(ls "$T"/b/ranks/rank-000001-*.db)" "$a1"
"$COLLSCOPE" analyze "$T/a" > /dev/null 2> "$T/an.err"
st=$?
expect_eq "analyze with a foreign rank store: exit status (stderr: $(cat "$T/an.err"))" $st 1
grep -q "$a1 (holds rank 1 pid [0-9]*, but the job index records rank 1 pid [0-9]*: a rank store of another run" \
  "$T/an.err" || fail "the foreign rank store is not named: $(cat "$T/an.err")"
"$COLLSCOPE" merge "$T/a" > /dev/null 2> "$T/m.err"
st=$?
expect_eq "merge with a foreign rank store: exit status" $st 1
grep -q "$a1 (holds rank 1 pid" "$T/m.err" || fail "merge does not name it: $(cat "$T/m.err")"
expect_eq "the merged trace holds rank 0 only" "$(q "$T/a/trace.db" "SELECT group_concat(rank) FROM processes")" 0
pass
