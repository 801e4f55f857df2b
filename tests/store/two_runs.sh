#!/bin/sh
# Logs of two runs in one folder are never merged: each log carries its
# run's id (collscope run makes a fresh one); ingest says the folder holds
# more than one run, keeps the run of the newest log, names each log it
# leaves out, and exits 1. Logs of one run ingest as before.
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
pass
