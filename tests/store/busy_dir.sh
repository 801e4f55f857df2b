#!/bin/sh
# An output folder belongs to one collscope command at a time: while a run
# holds DIR/collscope.lock, a second `collscope run -o DIR` is refused (its
# job not started, the first run's logs left alone), naming the holder;
# ingest, import and merge into DIR are refused too, report says the run is
# in progress, and `run --wait` waits for the first run to end. The lock is
# never taken through a link.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
need_mpi openmpi
mpirun=$(mpirun_for openmpi)
mkfifo "$T/started" "$T/go" || fail "mkfifo"

# The first run's job: the ranks write their logs and end, then the job
# says so and waits for the test before it ends.
printf '"%s" -n 2 "%s" --steps 4 > /dev/null 2>&1 || exit 1\necho started > "%s"\nread x < "%s"\n' \
  "$mpirun" "$prog" "$T/started" "$T/go" > "$T/job.sh"
"$COLLSCOPE" run --mpi openmpi -o "$T/d" -- sh "$T/job.sh" > "$T/first.out" 2> "$T/first.err" &
first=$!
at_exit "kill $first 2> /dev/null"
read x < "$T/started"
expect_eq "the first run's logs" "$(ls "$T/d/logs" | grep -c '\.cslog$')" 2

"$COLLSCOPE" run --mpi openmpi -o "$T/d" -- "$mpirun" -n 2 "$prog" --steps 1 > /dev/null 2> "$T/second.err"
expect_eq "a second run into the folder: exit status" $? 1
grep -q "run: $T/d is in use by pid $first (.*collscope run --mpi openmpi -o $T/d -- sh $T/job.sh), started [0-9-]* [0-9:]* UTC" \
  "$T/second.err" || fail "the refusal does not name the holder: $(cat "$T/second.err")"
expect_eq "the first run's logs are still there" "$(ls "$T/d/logs" | grep -c '\.cslog$')" 2

"$COLLSCOPE" ingest "$T/d" > /dev/null 2> "$T/ingest.err"
expect_eq "ingest during the run: exit status" $? 1
grep -q "ingest: $T/d is in use by pid $first" "$T/ingest.err" || fail "ingest: $(cat "$T/ingest.err")"
"$COLLSCOPE" import -o "$T/d" "$S/tests/data/kineto" > /dev/null 2> "$T/import.err"
expect_eq "import during the run: exit status" $? 3
grep -q "import: $T/d is in use by pid $first" "$T/import.err" || fail "import: $(cat "$T/import.err")"
"$COLLSCOPE" report "$T/d" > "$T/report.out" 2> "$T/report.err"
expect_eq "report during the run: exit status" $? 1
grep -q "report: $T/d: a run is in progress there (pid $first " "$T/report.err" ||
  fail "report does not say the run is in progress: $(cat "$T/report.err")"
expect_eq "report during the run: one message" "$(wc -l < "$T/report.err")" 1

# --wait: this run starts once the first has ended and built its trace.
"$COLLSCOPE" run --wait --mpi openmpi -o "$T/d" -- "$mpirun" -n 2 "$prog" --steps 1 > /dev/null 2> "$T/wait.err" &
waiter=$!
at_exit "kill $waiter 2> /dev/null"
echo go > "$T/go"
wait $first
st=$?
expect_eq "the first run: exit status (stderr: $(cat "$T/first.err"))" $st 0
grep -q "collscope: 2 processes, [1-9][0-9]* spans -> $T/d/trace.db" "$T/first.err" ||
  fail "the first run did not build its own trace: $(cat "$T/first.err")"
wait $waiter
st=$?
expect_eq "the run with --wait: exit status (stderr: $(cat "$T/wait.err"))" $st 0
grep -q "run: $T/d is in use by pid $first .*; waiting for it to end (--wait)" "$T/wait.err" ||
  fail "--wait does not say what it waits for: $(cat "$T/wait.err")"
"$COLLSCOPE" report "$T/d" > /dev/null 2>&1 || fail "report after the runs failed"

# A link at the lock's name is refused, never followed.
mkdir "$T/l" && echo keep > "$T/target" && ln -s "$T/target" "$T/l/collscope.lock"
"$COLLSCOPE" ingest "$T/l" > /dev/null 2> "$T/l.err"
expect_eq "a link as the lock: exit status" $? 1
grep -q "collscope.lock: a symbolic link (refused)" "$T/l.err" || fail "a link as the lock: $(cat "$T/l.err")"
expect_eq "the link's target is untouched" "$(cat "$T/target")" keep
pass
