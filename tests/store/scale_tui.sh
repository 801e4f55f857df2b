#!/bin/sh
# collscope-tui on a job kept as rank stores and an index (tui_gen
# --rank-stores, 8 ranks, no merged trace.db): one lane per rank, the
# analysis keys say it is not analysed; A analyses it in process, the
# screen shows the analysis and DIR/results.db holds it; opened again,
# the TUI takes the analysis from results.db (analysis: yes at once).
. "$srcdir/tests/lib.sh"
. "$S/tests/tui/tuilib.sh"
"$B/bench/tui_gen" "$T/job" --rank-stores --spans 4000 --ranks 8 --straggler 2 > /dev/null || fail "tui_gen --rank-stores"
[ -s "$T/job/index.db" ] && [ ! -e "$T/job/trace.db" ] || fail "tui_gen --rank-stores wrote no index, or a trace.db"
tui_start 120 40 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/job'"
wait_for 'rank 7'
for r in 0 1 2 3 4 5 6; do screen | grep -q "rank $r" || fail "lane of rank $r missing"; done
echo "ok: one lane per rank"
keys w
wait_for 'not analysed yet'
keys A
wait_for 'analysis: yes' 60
keys w
wait_for 'worst #1 of'
keys q
wait_for '\[rc=0\]'
[ -s "$T/job/results.db" ] || fail "A left no DIR/results.db"
n=$(q "$T/job/results.db" "SELECT count(*) FROM instances")
[ "${n:-0}" -gt 0 ] || fail "results.db holds no instances"
echo "ok: A analysed the job in process; results.db holds $n instances"
[ ! -e "$T/job/trace.db" ] || fail "the TUI wrote a trace.db"
tui_start 120 40 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/job'"
wait_for 'analysis: yes'
keys q
wait_for '\[rc=0\]'
pass
