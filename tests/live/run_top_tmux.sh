#!/bin/sh
# collscope run --top (docs/live.md) in tmux (80x24): a 4-rank Open MPI
# job of tests/progs/live_steps that exits with status 3 and writes a line
# on stdout and one on stderr. The view shows the job's four ranks and
# where its output goes (DIR/job.out, DIR/job.err), never the output
# itself; q leaves the view while the job runs on; run then ends with the
# job's exit status (3), the output files hold what the program wrote,
# the trace is built and the terminal is restored. A job that ends while
# the view is open: the view says so, and q builds the trace. Without a terminal,
# --top says so in one line and runs as without it (the output on
# stdout). A job.out that is a symbolic link is left alone (and its target
# untouched): said, and the job runs without the view.
. "${srcdir:-.}/tests/lib.sh"
. "$S/tests/tui/tuilib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$PROG" ] || skip "$PROG not built"

D="$T/job"
tui_start 80 24 "'$COLLSCOPE' run -o '$D' --top -- timeout -s KILL 90 '$MPIRUN' -np 4 '$PROG' --steps 1500 --exit 3"
wait_for "^job running; its output: $D/job\\.out, job\\.err" 30
wait_for '^4 processes \(0 ended\)' 20
wait_for '^ +3 +[0-9]+ ' 10
screen >"$T/screen1"
for r in 0 1 2; do grep -Eq "^ +$r +[0-9]+ " "$T/screen1" || { cat "$T/screen1"; fail "rank $r is not shown"; }; done
grep -q 'LIVE_STEPS' "$T/screen1" && { cat "$T/screen1"; fail "the job's output reached the terminal"; }
grep -q 'q leave the view' "$T/screen1" || { cat "$T/screen1"; fail "the status line does not say what q does"; }
echo "ok: the view shows the 4 ranks and where the output goes"
keys q
wait_for 'the view is closed; the job runs on' 10
screen | grep -q '^\[rc=' && fail "run ended with the view: the job did not run on"
[ -s "$D/trace.db" ] && fail "the trace was built before the job's end"
echo "ok: q left the view and the job runs on"
wait_for '^\[rc=[0-9]+\]' 90
wait_for '^\[tty -?icanon\]' 10 # printed after rc: a loaded machine shows them apart
screen >"$T/screen2"
grep -q '^\[rc=3\]' "$T/screen2" || { cat "$T/screen2"; fail "run's exit status is not the job's (3)"; }
grep -q '^\[tty icanon\]' "$T/screen2" || { cat "$T/screen2"; fail "the terminal was not restored"; }
grep -q 'LIVE_STEPS' "$T/screen2" && { cat "$T/screen2"; fail "the job's output reached the terminal"; }
echo "ok: run exits with the job's status, the terminal restored"
expect_eq "job.out" "$(cat "$D/job.out")" "LIVE_STEPS steps=1500 slow_rank=-1 slow_from=-1"
grep -qx 'LIVE_STEPS_ERR exit=3' "$D/job.err" || fail "job.err lacks the program's line: $(cat "$D/job.err")"
[ -L "$D/job.out" ] && fail "job.out is a link"
[ -s "$D/trace.db" ] || fail "no trace.db"
expect_eq "rank 3's steps in the trace" "$(q "$D/trace.db" "SELECT COUNT(*) FROM spans WHERE rank = 3 AND op = 'MPI_Pcontrol'")" 1500
echo "ok: the output files hold the program's lines; the trace is built"

# ---- a job that ends while the view is open: said; q builds the trace ----
D2="$T/short"
tui_start 80 24 "'$COLLSCOPE' run -o '$D2' --top -- timeout -s KILL 60 '$MPIRUN' -np 2 '$PROG' --steps 20"
wait_for '^job ended \(exit status 0\); q builds the trace' 60
wait_for '^2 processes \(2 ended\)' 10
[ -e "$D2/trace.db" ] && fail "the trace was built while the view was open"
keys q
wait_for '^\[rc=0\]' 30
[ -s "$D2/trace.db" ] || fail "no trace.db after q"
screen | grep -q 'the job runs on' && fail "run said the ended job runs on"
echo "ok: a job that ended under the view is said to have ended; q builds its trace"

# ---- without a terminal: said in one line, run as without --top ----
rc=0
"$COLLSCOPE" run -o "$T/nt" --top -- timeout -s KILL 60 "$MPIRUN" -np 2 "$PROG" --steps 20 </dev/null >"$T/nt.out" 2>"$T/nt.err" || rc=$?
expect_eq "run --top without a terminal exits" "$rc" 0
expect_eq "lines about --top" "$(grep -c -- '--top' "$T/nt.err")" 1
grep -q -- '--top needs a terminal' "$T/nt.err" || fail "no line says --top needs a terminal: $(cat "$T/nt.err")"
grep -qx 'LIVE_STEPS steps=20 slow_rank=-1 slow_from=-1' "$T/nt.out" || fail "the job's output is not on stdout"
[ -e "$T/nt/job.out" ] && fail "job.out made without the view"
[ -s "$T/nt/trace.db" ] || fail "no trace.db without a terminal"
echo "ok: without a terminal, one line says so and the job runs as without --top"

# ---- a job.out that is a link: left alone, said, no view ----
mkdir "$T/sl"
echo keep >"$T/victim"
ln -s "$T/victim" "$T/sl/job.out"
tui_start 80 24 "'$COLLSCOPE' run -o '$T/sl' --top -- timeout -s KILL 60 '$MPIRUN' -np 2 '$PROG' --steps 20"
wait_for '^\[rc=[0-9]+\]' 60
$TM capture-pane -p -J -t t >"$T/screen3" # wrapped lines joined
grep -q 'job.out exists and is not a job output of ours (a symbolic link): left alone' "$T/screen3" ||
  { cat "$T/screen3"; fail "the link was not refused with a message"; }
grep -q '^\[rc=0\]' "$T/screen3" || { cat "$T/screen3"; fail "the job did not run"; }
grep -q '^LIVE_STEPS steps=20' "$T/screen3" || { cat "$T/screen3"; fail "the job's output did not go to the terminal"; }
expect_eq "the link's target" "$(cat "$T/victim")" keep
[ -L "$T/sl/job.out" ] || fail "the link was removed"
[ -e "$T/sl/job.err" ] && fail "job.err was made though the view was refused"
echo "ok: a job.out link is left alone, its target untouched, and the job runs without the view"
pass
