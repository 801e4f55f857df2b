#!/bin/sh
# A trace its reader cannot write (another user's, a read-only folder or
# mount): it is read in place, analysed in a private copy that is removed
# afterwards, and never changed; `collscope analyze`, whose point is to
# save, refuses with one message (readonly_setup in tests/lib.sh: how the
# folders are made read-only, root included).
. "$srcdir/tests/lib.sh"
gen=$B/bench/log_gen
[ -x "$gen" ] || skip "bench/log_gen not built"
command -v python3 > /dev/null || skip "python3 missing (makes a pending WAL)"
"$gen" -o "$T/t" -r 2 -n 3000 > /dev/null || fail "log_gen failed"
"$COLLSCOPE" ingest "$T/t" > /dev/null 2>&1 || fail "ingest failed"
readonly_setup
reader() { "$T/ro_run" "$@"; }

# ro DIR SRC: DIR holds a read-only copy of the trace SRC.
ro() { mkdir "$1" && cp "$2" "$1/trace.db" && chmod 444 "$1/trace.db" && chmod 555 "$1"; }

# Not analysed yet: report analyses a private copy.
ro "$T/ro_a" "$T/t/trace.db"
sum=$(md5sum < "$T/ro_a/trace.db")
reader "$COLLSCOPE" report "$T/ro_a/trace.db" > "$T/a.out" 2> "$T/a.err"
expect_eq "report of a read-only trace: exit status" $? 0
grep -q "read-only here: analysing a private copy" "$T/a.err" || fail "no note of the private copy: $(cat "$T/a.err")"
expect_eq "report of a read-only trace: one line on stderr" "$(wc -l < "$T/a.err")" 1
grep -q "^Steps" "$T/a.out" || fail "no report: $(head -n 5 "$T/a.out")"
expect_eq "the trace is unchanged" "$(md5sum < "$T/ro_a/trace.db")" "$sum"
expect_eq "nothing beside it" "$(ls -A "$T/ro_a")" "trace.db"
expect_eq "the private copy is gone" "$(ls -A "$T/scratch" | wc -l)" 0
# The same report as from a writable copy, naming the trace asked for.
mkdir "$T/w"
cp "$T/t/trace.db" "$T/w/trace.db"
"$COLLSCOPE" report "$T/w/trace.db" > "$T/w.out" 2> /dev/null || fail "report of a writable copy failed"
sed "s#$T/w/#$T/ro_a/#" "$T/w.out" > "$T/wa.out"
cmp -s "$T/a.out" "$T/wa.out" || fail "reports differ: $(diff "$T/a.out" "$T/wa.out" | head -n 10)"
echo "ok: the report is the writable copy's ($(wc -l < "$T/a.out") lines, naming $T/ro_a/trace.db)"

# analyze saves or fails.
reader "$COLLSCOPE" analyze "$T/ro_a/trace.db" > /dev/null 2> "$T/z.err"
expect_eq "analyze of a read-only trace: exit status" $? 1
expect_eq "analyze of a read-only trace: one line" "$(wc -l < "$T/z.err")" 1
grep -q "$T/ro_a/trace.db: read-only here" "$T/z.err" || fail "analyze does not say why: $(cat "$T/z.err")"

# Analysed already: read in place, no copy, no note, no side files.
ro "$T/ro_b" "$T/w/trace.db"
reader "$COLLSCOPE" report "$T/ro_b/trace.db" > "$T/b.out" 2> "$T/b.err"
expect_eq "report of an analysed read-only trace: exit status" $? 0
expect_eq "report of an analysed read-only trace: stderr" "$(cat "$T/b.err")" ""
sed "s#$T/w/#$T/ro_b/#" "$T/w.out" > "$T/wb.out"
cmp -s "$T/b.out" "$T/wb.out" || fail "in-place report differs: $(diff "$T/b.out" "$T/wb.out" | head -n 10)"
expect_eq "nothing beside the analysed one" "$(ls -A "$T/ro_b")" "trace.db"

# Changes still in a WAL (a writer that died): they cannot be read without
# writing, so the message says what to do.
mkdir "$T/ro_c"
cp "$T/t/trace.db" "$T/ro_c/trace.db"
python3 - "$T/ro_c/trace.db" << 'EOF'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("INSERT INTO meta VALUES('pending', '1')")
c.commit()
os._exit(0)  # no checkpoint: the row stays in the WAL
EOF
rm -f "$T/ro_c/trace.db-shm"
[ -s "$T/ro_c/trace.db-wal" ] || fail "no pending WAL was left"
chmod 444 "$T/ro_c/trace.db" "$T/ro_c/trace.db-wal" && chmod 555 "$T/ro_c"
reader "$COLLSCOPE" report "$T/ro_c/trace.db" > /dev/null 2> "$T/c.err"
expect_eq "read-only trace with a pending WAL: exit status" $? 1
expect_eq "read-only trace with a pending WAL: one line" "$(wc -l < "$T/c.err")" 1
grep -q "trace.db-wal: copy both files to a writable folder" "$T/c.err" || fail "pending WAL: $(cat "$T/c.err")"
chmod 755 "$T/ro_a" "$T/ro_b" "$T/ro_c"
pass
