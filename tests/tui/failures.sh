#!/bin/sh
# failures.sh: collscope-tui in tmux on the trace of a 4-rank job that hung
# (tests/progs/hang --mode skip: rank 1 skips an allreduce and waits in a
# receive; every rank then killed with SIGKILL): the calls that never
# returned are drawn as open-ended bars (>, bold) that run to the end of
# the trace, the legend names them, F jumps to the first culprit's call
# (its lane under the cursor, the finding on the status line) and cycles
# through the findings; a job that ended well draws none and F says so.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/hang_ompi"
[ -x "$PROG" ] || skip "$PROG not built"

# the hung job: wait until status sees it stuck, then kill every rank
"$COLLSCOPE" run -o "$T/hung" -- timeout -s KILL 60 "$MPIRUN" -np 4 --oversubscribe "$PROG" --mode skip \
  >"$T/hung.out" 2>&1 &
run=$!
n=0
until [ -d "$T/hung/logs" ] && "$COLLSCOPE" status "$T/hung" --after 1 >"$T/status" 2>&1; [ $? -eq 3 ]; do
  n=$((n + 1))
  [ $n -lt 120 ] || { cat "$T/status" >&2; kill_ranks "$T/hung"; fail "the job never hung"; }
  sleep 0.25
done
grep -q 'rank 1 never entered' "$T/status" || { cat "$T/status" >&2; kill_ranks "$T/hung"; fail "status: $(cat "$T/status")"; }
sleep 1
kill_ranks "$T/hung"
wait $run
[ -f "$T/hung/trace.db" ] || fail "no trace of the hung job: $(cat "$T/hung.out")"
nfly=$(q "$T/hung/trace.db" "SELECT COUNT(*) FROM spans WHERE (flags & 512) != 0")
[ "$nfly" -ge 4 ] || fail "the trace keeps $nfly calls in flight, want 4"
echo "ok: a hung job's trace with $nfly calls that never returned"

tui_start 120 30 "env LANG=C TERM=xterm '$TUI' '$T/hung'"
wait_for 'rank 3'
wait_for 'the job failed \([0-9]+ findings?, the first: [a-z_]+\): F jumps to its first culprit'
screen | grep -q '> never returned' || fail "the legend names no call that never returned"
# every rank died in a call: its lane ends in the open-ended bar, which
# starts where the call began and runs to the right edge
for r in 0 1 2 3; do
  l=$(screen | grep -E "^[ >]rank $r " | head -n 1)
  printf '%s\n' "$l" | grep -Eq '[^>]>{20,}$' || fail "rank $r: no open-ended bar to the end: '$l'"
done
echo "ok: each rank's call that never returned is drawn open-ended to the end of the trace"
keys F
wait_for 'failure 1 of [0-9]+: rank [12]: '
cur=$(screen | grep -E '^>rank [0-9]+' | head -n 1)
lane=$(screen | grep -o 'failure 1 of [0-9]*: rank [0-9]*' | grep -o '[0-9]*$')
case $cur in ">rank $lane "*) ;; *) fail "F: the cursor is not on the culprit's lane (rank $lane): '$cur'" ;; esac
echo "ok: F put the cursor on the first culprit's lane (rank $lane)"
keys F
wait_for 'failure 2 of [0-9]+: rank [0-9]+: '
# the missing rank is named among the findings
found=0
i=0
while [ $i -lt 8 ]; do
  screen | grep -Eq 'rank 1: missing_rank: seq 3 of MPI_COMM_WORLD' && { found=1; break; }
  keys F
  sleep 0.3
  i=$((i + 1))
done
[ $found = 1 ] || fail "F never reached the missing rank finding (rank 1)"
echo "ok: F cycles through the findings, the missing rank (rank 1) among them"
keys '?'
wait_for 'F    next failure of the job'
keys q
wait_for '\[rc=0\]'

# UTF-8: the bar is drawn with a double angle
tui_start 120 30 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/hung'"
wait_for 'rank 3'
screen | grep -E '^[ >]rank 1 ' | grep -q '»»»»»' || fail "UTF-8: no open-ended bar: $(screen | grep 'rank 1 ')"
echo "ok: UTF-8 draws the open-ended bar with a double angle"
keys q
wait_for '\[rc=0\]'

# a job that ended well: no open-ended bar, no legend entry, F says so
"$COLLSCOPE" run -o "$T/none" -- "$MPIRUN" -np 4 --oversubscribe "$PROG" --mode none >"$T/none.out" 2>&1 ||
  fail "the job that ends well failed: $(cat "$T/none.out")"
tui_start 120 30 "env LANG=C TERM=xterm '$TUI' '$T/none'"
wait_for 'rank 3'
screen | grep -q 'never returned' && fail "a job that ended well shows calls that never returned"
screen | grep -E '^[ >]rank [0-9] ' | grep -q '>>' && fail "a job that ended well has open-ended bars"
keys F
wait_for 'no failure: no call in flight at the end, no process died'
keys q
wait_for '\[rc=0\]'
echo "ok: a job that ended well: no open-ended bars; F says there is no failure"
pass
