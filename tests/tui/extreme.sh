#!/bin/sh
# collscope-tui on traces with extreme times: a begin of INT64_MIN is
# refused at once with one message (it used to make the drawing loop spin,
# deaf to q and signals); times at the edge of what a reader accepts
# (+-2^61 ns, negative durations) draw, zoom and answer q within 2 s, and a
# second run answers SIGTERM within 2 s with the terminal restored.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"
GEN="$B/bench/tui_gen"
"$GEN" "$T/good.db" --spans 4000 --ranks 4 >/dev/null || fail "tui_gen"
cp "$T/good.db" "$T/min.db"
q "$T/min.db" "UPDATE span SET begin_ns = -9223372036854775808 WHERE id = (SELECT min(id) FROM span);
  UPDATE span SET end_ns = 9223372036854775807 WHERE id = (SELECT max(id) FROM span);" || fail "sqlite3"
cp "$T/good.db" "$T/edge.db"
q "$T/edge.db" "UPDATE span SET begin_ns = -2305843009213693952 WHERE id = (SELECT min(id) FROM span);
  UPDATE span SET end_ns = 2305843009213693952 WHERE id = (SELECT max(id) FROM span);
  UPDATE span SET end_ns = begin_ns - 5000 WHERE id % 17 = 0;" || fail "sqlite3"

tui_start 120 40 "env LANG=C.UTF-8 TERM=xterm '$TUI' '$T/min.db'"
wait_for 'min.db: damaged trace.*not a time' 2
wait_for '\[rc=1\]' 2

tui_start 120 40 "env LANG=C.UTF-8 TERM=xterm '$TUI' '$T/edge.db'"
wait_for 'rank 3' 5
for k in End Home; do keys "$k"; done
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do keys +; done
keys Right Right End Left Home
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do keys -; done
keys q
wait_for '\[rc=0\]' 2
wait_for '\[tty icanon\]'

tui_start 120 40 "env LANG=C.UTF-8 TERM=xterm '$TUI' '$T/edge.db'"
wait_for 'rank 3' 5
for i in 1 2 3 4 5 6 7 8 9 10; do keys +; done
pid=$(tui_pid)
[ -n "$pid" ] || fail "no collscope-tui process"
kill -TERM "$pid"
wait_for 'stopped by signal 15' 2
wait_for '\[rc=143\]' 2
wait_for '\[tty icanon\]'
pass
