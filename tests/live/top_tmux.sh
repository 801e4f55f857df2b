#!/bin/sh
# collscope top's terminal view in tmux (80x24) on a 4-rank Open MPI job of
# tests/progs/live_steps whose rank 2 turns slow at step 150: the alarm and
# the marked row appear while the job runs; s sorts by straggler score
# (rank 2 first); q quits and the job runs on to its normal end. A second
# top stopped with SIGSTOP mid-job does not hold the job up: it ends, with
# its exit status and output as usual. docs/live.md.
. "${srcdir:-.}/tests/lib.sh"
. "$S/tests/tui/tuilib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$PROG" ] || skip "$PROG not built"

D="$T/job"
( "$COLLSCOPE" run -o "$D" -- timeout -s KILL 90 "$MPIRUN" -np 4 "$PROG" --steps 900 --slow-rank 2 --slow-from 150 \
    --slow-us 8000 >"$T/job.out" 2>&1; echo $? >"$T/job.rc" ) &
run=$!
at_exit "kill $run 2>/dev/null"
n=0
while [ ! -d "$D/logs" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done

tui_start 80 24 "'$COLLSCOPE' top '$D'"
wait_for '^ALARM rank 2 turned slow at step 1[4-6][0-9],' 30
screen >"$T/screen1"
grep -Eq '^ +2 .* SLOW$' "$T/screen1" || { cat "$T/screen1"; fail "rank 2's row is not marked SLOW"; }
grep -Eq '^ALARM rank [013] ' "$T/screen1" && { cat "$T/screen1"; fail "another rank is alarmed"; }
[ -s "$T/job.rc" ] && fail "the job ended before the view showed its alarm (make it longer)"
echo "ok: the view shows rank 2's alarm while the job runs"
keys s
wait_for 'sort: straggler' 5
# the first row under the table's header is rank 2's
row=$(screen | sed -n '/^ rank /{n;p;}')
echo "$row" | grep -Eq '^ +2 ' || { screen; fail "sorted by straggler score, the first row is not rank 2: $row"; }
echo "ok: s sorts rank 2 first"
keys q
wait_for '^\[rc=0\]' 10
kill -0 $run 2>/dev/null && [ ! -s "$T/job.rc" ] || fail "the job did not outlive the view"
echo "ok: q quits (exit 0) and the job runs on"

# a top stopped mid-read does not hold the job up
tui_start 80 24 "'$COLLSCOPE' top --interval 0.2 '$D'"
wait_for '^4 processes' 10
pid=$(pgrep -P "$($TM list-panes -t t -F '#{pane_pid}')" -x collscope | head -n 1)
[ -n "$pid" ] || fail "no collscope top process in the pane"
kill -STOP "$pid"
at_exit "kill -CONT $pid 2>/dev/null"
echo "ok: top ($pid) stopped"
n=0
while [ ! -s "$T/job.rc" ] && [ $n -lt 400 ]; do sleep 0.1; n=$((n + 1)); done
[ -s "$T/job.rc" ] || fail "the job did not end within 40 s of stopping top"
expect_eq "the job's exit status, top stopped" "$(cat "$T/job.rc")" 0
grep -q '^LIVE_STEPS steps=900 slow_rank=2 slow_from=150$' "$T/job.out" || fail "the job's output is not whole"
[ -s "$D/trace.db" ] || fail "no trace after the job"
kill -CONT "$pid"
wait_for '^4 processes \(4 ended\)' 10
keys q
wait_for '^\[rc=0\]' 10
pass
