#!/bin/sh
# collscope given a missing, foreign, truncated or corrupt file, or a schema
# version it does not know: a non-zero exit and one message naming the file
# and the problem, never a crash. Logs: a truncated log (as a dying disk
# would leave it) still gives up its complete spans; a foreign one is skipped.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
"$COLLSCOPE" run -o "$T/good" -- "$prog" --steps 20 > /dev/null 2>&1 || fail "cannot make a trace"
good=$T/good/trace.db
spans=$(q "$good" "SELECT count(*) FROM span")

# expect_refused NAME FILE PATTERN: report exits 1 with one line naming FILE and matching PATTERN.
expect_refused() {
  "$COLLSCOPE" report "$2" > "$T/r.out" 2> "$T/r.err"
  st=$?
  [ $st -eq 1 ] || fail "$1: exit status $st (want 1); stderr: $(cat "$T/r.err")"
  [ "$(wc -l < "$T/r.err")" -eq 1 ] || fail "$1: not one line: $(cat "$T/r.err")"
  grep -q "$2" "$T/r.err" || fail "$1: message does not name $2: $(cat "$T/r.err")"
  grep -qi "$3" "$T/r.err" || fail "$1: message does not say '$3': $(cat "$T/r.err")"
  echo "ok: $1: $(cat "$T/r.err")"
}

expect_refused "missing" "$T/nothere/trace.db" "no such file"
printf 'hello, not a database\n' > "$T/text.db"
expect_refused "a text file" "$T/text.db" "not a collscope trace"
sqlite3 "$T/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES(1);"
expect_refused "another SQLite database" "$T/other.db" "not a collscope trace"
head -c 4096 "$good" > "$T/trunc.db"
expect_refused "a truncated trace" "$T/trunc.db" "trace"
cp "$good" "$T/newer.db"
sqlite3 "$T/newer.db" "UPDATE meta SET value='99' WHERE key='schema_version'"
expect_refused "a newer schema version" "$T/newer.db" "schema version 99"
cp "$good" "$T/bogus.db"
sqlite3 "$T/bogus.db" "UPDATE meta SET value='x1' WHERE key='schema_version'"
expect_refused "a bogus schema version" "$T/bogus.db" "schema version"
# Corrupt pages in the middle: whatever SQLite notices, no crash.
cp "$good" "$T/corrupt.db"
size=$(stat -c %s "$T/corrupt.db")
dd if=/dev/urandom of="$T/corrupt.db" bs=1024 seek=$((size / 2048)) count=8 conv=notrunc 2>/dev/null
"$COLLSCOPE" report "$T/corrupt.db" > /dev/null 2> "$T/c.err"
st=$?
[ $st -lt 128 ] || fail "a corrupt trace crashed collscope (status $st)"
echo "ok: corrupt pages: status $st, $(head -c 200 "$T/c.err")"

# ingest: a foreign .cslog is skipped with a message; a truncated real log
# (half its chunks gone) still yields every span of the chunks that remain,
# and is named with what was lost (exit status 1).
mkdir -p "$T/mix"
cp -r "$T/good/logs" "$T/mix/"
printf 'garbage' > "$T/mix/logs/foreign-1.cslog"
"$COLLSCOPE" ingest "$T/mix" > "$T/i.out" 2> "$T/i.err"
expect_eq "ingest with a foreign log: exit status" $? 1
grep -q 'foreign-1.cslog' "$T/i.err" || fail "ingest does not name the foreign log: $(cat "$T/i.err")"
expect_eq "ingest with a foreign log: the good log's spans" "$(q "$T/mix/trace.db" "SELECT count(*) FROM span")" "$spans"
rm "$T/mix/logs/foreign-1.cslog"
log=$(ls "$T/mix/logs/"*.cslog)
truncate -s $((4096 + 64 * 100 + 17)) "$log"   # the header, 100 slots and a torn one
"$COLLSCOPE" ingest --force "$T/mix" > /dev/null 2> "$T/t.err"
expect_eq "ingest of a truncated log: exit status (it says what was lost)" $? 1
grep -q "$(basename "$log"): damaged log: [0-9]* spans recovered; cut short" "$T/t.err" ||
  fail "truncated log: no message naming it: $(cat "$T/t.err")"
kept=$(q "$T/mix/trace.db" "SELECT count(*) FROM span")
[ "$kept" -ge 80 ] && [ "$kept" -le 99 ] || fail "truncated log: $kept spans recovered from 100 slots"
echo "ok: truncated log: $kept spans recovered from its first 100 slots"
"$COLLSCOPE" ingest "$T/nothere" > /dev/null 2> "$T/n.err"
expect_eq "ingest of a missing folder: exit status" $? 1
grep -q "$T/nothere" "$T/n.err" || fail "ingest does not name the folder"
"$COLLSCOPE" report > /dev/null 2>&1
expect_eq "report without arguments: exit status" $? 2
"$COLLSCOPE" frobnicate > /dev/null 2> "$T/u.err"
expect_eq "unknown command: exit status" $? 2
pass
