#!/bin/sh
# Logs of two runs in one folder are never merged: each log carries its
# run's id (collscope run makes a fresh one); ingest says the folder holds
# more than one run, keeps the run of the newest log, names each log it
# leaves out, and exits 1. Logs of one run ingest as before. Without
# collscope run, the launcher's job id is the run id.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
need_mpi openmpi
mpirun=$(mpirun_for openmpi)
"$COLLSCOPE" run --no-ingest -o "$T/a" -- "$mpirun" -n 2 "$prog" --steps 3 > /dev/null 2>&1 || fail "first run failed"
sleep 1
"$COLLSCOPE" run --no-ingest -o "$T/b" -- "$mpirun" -n 2 "$prog" --steps 5 > /dev/null 2>&1 || fail "second run failed"
"$COLLSCOPE" ingest "$T/b" > /dev/null 2> "$T/b.err" || fail "one run does not ingest: $(cat "$T/b.err")"
want=$(q "$T/b/trace.db" "SELECT count(*) FROM span")
mkdir -p "$T/mix/logs"
cp "$T"/a/logs/*.cslog "$T"/b/logs/*.cslog "$T/mix/logs/"
"$COLLSCOPE" ingest "$T/mix" > "$T/m.out" 2> "$T/m.err"
st=$?
expect_eq "logs of two runs: exit status (stderr: $(cat "$T/m.err"))" $st 1
grep -q 'holds logs of more than one run; keeping run [0-9a-f]* (that of the newest log)' "$T/m.err" ||
  fail "ingest does not say so: $(cat "$T/m.err")"
for l in "$T"/a/logs/*.cslog; do
  grep -q "skipping $T/mix/logs/$(basename "$l"): of run" "$T/m.err" || fail "$(basename "$l") is not named"
done
expect_eq "each rank once" "$(q "$T/mix/trace.db" "SELECT count(*) FROM processes")" 2
expect_eq "the newest run's spans" "$(q "$T/mix/trace.db" "SELECT count(*) FROM span")" "$want"

# Without collscope run, the preload takes the launcher's job id: two
# mpirun launches are two runs, the ranks of one launch one run.
preload=$COLLSCOPE_LIBDIR/collscope-openmpi.so
for r in 1 2; do
  COLLSCOPE_DIR=$T/bare COLLSCOPE_EXIT_CONVERT=0 "$mpirun" -n 2 -x LD_PRELOAD="$preload" -x COLLSCOPE_DIR \
    -x COLLSCOPE_EXIT_CONVERT "$prog" --steps 2 > /dev/null 2>&1 || fail "bare launch $r failed"
  sleep 1
done
"$COLLSCOPE" ingest "$T/bare" > /dev/null 2> "$T/bare.err"
expect_eq "two bare launches: exit status" $? 1
grep -q 'more than one run; keeping run pmix:\|more than one run; keeping run ompi:' "$T/bare.err" ||
  fail "two bare launches are not told apart: $(cat "$T/bare.err")"
expect_eq "two bare launches: logs left out" "$(grep -c 'skipping .*: of run' "$T/bare.err")" 2
expect_eq "two bare launches: each rank once" "$(q "$T/bare/trace.db" "SELECT count(*) FROM processes")" 2
pass
