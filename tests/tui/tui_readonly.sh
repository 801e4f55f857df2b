#!/bin/sh
# tui_readonly.sh: collscope-tui on a trace in a folder it cannot write (even
# as root: readonly_setup in tests/lib.sh). It opens in place, draws every
# rank, says the timeline index could not be saved, and leaves nothing
# beside the trace.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"
GEN="$B/bench/tui_gen"
readonly_setup
"$GEN" "$T/w.db" --spans 4000 --ranks 4 > /dev/null || fail "tui_gen"
mkdir "$T/ro_a"
cp "$T/w.db" "$T/ro_a/trace.db"
chmod 444 "$T/ro_a/trace.db" && chmod 555 "$T/ro_a"
sum=$(md5sum < "$T/ro_a/trace.db")
tui_start 120 30 "env LANG=C.UTF-8 TERM=xterm '$T/ro_run' '$TUI' '$T/ro_a/trace.db'"
wait_for 'rank 3'
wait_for '4 lanes, 4000 spans'
wait_for 'no timeline index .*cannot write'
keys q
wait_for '\[rc=0\]'
expect_eq "the trace is unchanged" "$(md5sum < "$T/ro_a/trace.db")" "$sum"
expect_eq "nothing beside it" "$(ls -A "$T/ro_a")" "trace.db"
chmod 755 "$T/ro_a"
pass
