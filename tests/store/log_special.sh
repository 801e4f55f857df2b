#!/bin/sh
# Files in logs/ that are not regular files (a FIFO, a socket-less name, a
# symbolic link to a file outside): ingest never opens them in a blocking
# way, skips each with a message naming it, keeps the real logs, and exits 1.
. "$srcdir/tests/lib.sh"
gen=$B/bench/log_gen
[ -x "$gen" ] || skip "log_gen not built"
"$gen" -o "$T/d" -r 2 -n 100 > /dev/null || fail "cannot write logs"
"$COLLSCOPE" ingest "$T/d" > /dev/null 2>&1 || fail "the good logs do not ingest"
spans=$(q "$T/d/trace.db" "SELECT count(*) FROM span")
mkfifo "$T/d/logs/fifo-1.cslog" || skip "cannot make a FIFO here"
cp "$(ls "$T"/d/logs/*.cslog | grep -v fifo | head -1)" "$T/outside.cslog"
ln -s "$T/outside.cslog" "$T/d/logs/link-2.cslog"
timeout 60 "$COLLSCOPE" ingest --force "$T/d" > "$T/i.out" 2> "$T/i.err"
st=$?
[ $st -ne 124 ] || fail "ingest blocked on a FIFO in logs/"
expect_eq "non-regular files in logs/: exit status (stderr: $(cat "$T/i.err"))" $st 1
grep -q 'fifo-1.cslog: not a regular file' "$T/i.err" || fail "the FIFO is not named: $(cat "$T/i.err")"
grep -q 'link-2.cslog: not a regular file' "$T/i.err" || fail "the link is not named: $(cat "$T/i.err")"
expect_eq "the real logs' spans" "$(q "$T/d/trace.db" "SELECT count(*) FROM span")" "$spans"
pass
