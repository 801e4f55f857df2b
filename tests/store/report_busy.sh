#!/bin/sh
# `collscope report` of a trace that a run is replacing says that a run is
# in progress, whether it is given the folder or its trace.db (which the
# run has removed by then), in one message; never "read-only here:
# analysing a private copy" nor "No such file or directory". So does a
# report that was reading the trace when a run (or an ingest: it holds the
# folder the same way) took the folder and removed it.
. "$srcdir/tests/lib.sh"
gen=$B/bench/gen_trace
[ -x "$gen" ] || skip "bench/gen_trace not built"
mkdir "$T/d"
"$gen" "$T/d/trace.db" --ranks 2 --steps 50 > /dev/null 2>&1 || fail "gen_trace failed"
"$COLLSCOPE" report "$T/d/trace.db" > /dev/null 2>&1 || fail "report before the run failed"
mkfifo "$T/go" || fail "mkfifo"
"$COLLSCOPE" run -o "$T/d" -- sh -c "echo started > '$T/started'; read x < '$T/go'" > /dev/null 2>&1 &
run=$!
at_exit "kill $run 2> /dev/null"
i=0
while [ ! -f "$T/started" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
[ -f "$T/started" ] || fail "the run's job never started"
[ -e "$T/d/trace.db" ] && fail "the run did not remove the trace it replaces"
for arg in "$T/d/trace.db" "$T/d" "$T/d/"; do
  "$COLLSCOPE" report "$arg" > "$T/out" 2> "$T/err"
  expect_eq "report $arg during the run: exit status" $? 1
  grep -q "^collscope: report: $T/d/*: a run is in progress there (pid $run " "$T/err" ||
    fail "report $arg does not say the run is in progress: $(cat "$T/err")"
  expect_eq "report $arg during the run: one message" "$(wc -l < "$T/err")" 1
  expect_eq "report $arg during the run: no report" "$(wc -c < "$T/out")" 0
done
echo go > "$T/go"
wait $run

# A report caught while it reads a trace not analysed yet, before it
# opens it for writing (its only descriptor of trace.db is read-only);
# then a command takes the folder (its lock, as run and ingest take it)
# and removes the trace, and the report goes on.
mkdir "$T/e"
"$gen" "$T/e/trace.db" --ranks 8 --steps 3000 > /dev/null 2>&1 || fail "gen_trace failed"
# fdflags PID: the open flags of PID's descriptors of trace.db
fdflags() {
  for fd in /proc/$1/fd/*; do
    case $(readlink "$fd" 2> /dev/null) in
      */e/trace.db) sed -n 's/^flags:[[:space:]]*//p' "/proc/$1/fdinfo/${fd##*/}" ;;
    esac
  done
}
caught=0
for try in 1 2 3 4 5 6 7 8 9 10; do
  "$COLLSCOPE" report "$T/e" > "$T/out" 2> "$T/err" &
  rep=$!
  while kill -0 $rep 2> /dev/null && [ -z "$(fdflags $rep)" ]; do :; done
  kill -STOP $rep 2> /dev/null || { wait $rep; continue; }
  fl=$(fdflags $rep)
  # O_ACCMODE of every descriptor 0: read-only, the write open not yet
  if [ -n "$fl" ] && [ -z "$(echo "$fl" | awk '{ if (int(substr($1, length($1))) % 4 != 0) print }')" ]; then
    caught=1
    break
  fi
  kill -KILL $rep
  wait $rep 2> /dev/null
done
[ $caught = 1 ] || skip "the report was never caught before it opened the trace for writing (10 tries)"
printf 'pid %d\nstart %d\ncommand collscope ingest %s\n' $$ "$(date +%s)" "$T/e" > "$T/e/collscope.lock"
flock -x "$T/e/collscope.lock" -c "echo held > '$T/held'; read x < '$T/go'" &
holder=$!
at_exit "kill $holder 2> /dev/null"
while [ ! -f "$T/held" ]; do sleep 0.01; done
rm "$T/e/trace.db"
kill -CONT $rep
wait $rep
st=$?
echo go > "$T/go"
wait $holder
cat "$T/err"
expect_eq "report of a trace removed while it was read: exit status" $st 1
grep -q "^collscope: report: $T/e: a run is in progress there (pid $$ (collscope ingest $T/e)" "$T/err" ||
  fail "the report does not say a run is in progress"
expect_eq "report of a trace removed while it was read: one message" "$(wc -l < "$T/err")" 1
pass
