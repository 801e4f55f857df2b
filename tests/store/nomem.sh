#!/bin/sh
# Out of memory is no damage: an intact trace read with too little address
# space (ulimit -v) makes SQLite's page check fail with SQLITE_NOMEM; the
# command says it ran out of memory reading the file, exits 1, and never
# starts a recovery (no "damaged", no trace.recovered.db).
. "$srcdir/tests/lib.sh"
gen=$B/bench/gen_trace
[ -x "$gen" ] || skip "bench/gen_trace not built"
mkdir "$T/t"
"$gen" "$T/t/trace.db" --ranks 8 --steps 28000 > /dev/null 2>&1 || fail "gen_trace failed"
(ulimit -v 60000 && exec "$COLLSCOPE" report "$T/t") > /dev/null 2> "$T/err"
st=$?
expect_eq "report with too little memory: exit status (stderr: $(cat "$T/err"))" $st 1
grep -q "damaged" "$T/err" && fail "out of memory reported as damage: $(cat "$T/err")"
grep -q "^collscope: out of memory reading $T/t/trace.db " "$T/err" ||
  fail "the message does not name the resource and the file: $(cat "$T/err")"
expect_eq "one message" "$(wc -l < "$T/err")" 1
[ -e "$T/t/trace.recovered.db" ] && fail "a recovery was started"
expect_eq "the trace is intact" "$(q "$T/t/trace.db" "PRAGMA quick_check")" ok
pass
