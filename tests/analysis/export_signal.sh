#!/bin/sh
# SIGTERM during `collscope export -o FILE` removes the new file being
# written (FILE.tmpXXXXXX) and ends the command by the signal; FILE is
# left as it was.
. "$srcdir/tests/lib.sh"
gen=$B/bench/gen_trace
[ -x "$gen" ] || skip "bench/gen_trace not built"
mkdir "$T/t"
"$gen" "$T/t/trace.db" --ranks 8 --steps 5000 > /dev/null 2>&1 || fail "gen_trace failed"
"$COLLSCOPE" analyze "$T/t" > /dev/null 2>&1 || fail "analyze failed"
echo old > "$T/out.json"
"$COLLSCOPE" export "$T/t" --format chrome -o "$T/out.json" > /dev/null 2>&1 &
pid=$!
at_exit "kill $pid 2> /dev/null"
# the signal once the new file is being written (a wait for the file, not
# a timing: the export writes ~100 MB, about a second)
i=0
while [ -z "$(ls "$T" | grep '^out.json.tmp')" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
[ $i -lt 3000 ] || fail "the export never started its file"
kill -TERM $pid
wait $pid
st=$?
expect_eq "export ended by SIGTERM: exit status" $st 143
expect_eq "no new file left" "$(ls "$T" | grep -c '^out.json.tmp')" 0
expect_eq "the old file is kept" "$(cat "$T/out.json")" old
pass
