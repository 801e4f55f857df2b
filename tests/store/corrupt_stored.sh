#!/bin/sh
# The report of a current stored analysis checks only the pages it reads
# (docs/security.md): damage in a table it reads, or in a span page it
# reads through an index (a rank's last call, the flagged calls), sends it
# the careful way (every page checked, the trace recovered, exit 1, the
# note); damage in a span page it does not read leaves the stored report
# as it was (byte for byte, exit 0, nothing written), and every command
# that reads the spans (analyze, export, the TUI) still finds it. A file
# cut short is never reported as if whole.
. "$srcdir/tests/lib.sh"
gen=$B/bench/log_gen
TUI=$B/tui/collscope-tui
[ -x "$gen" ] || skip "bench/log_gen not built"
command -v sqlite3 > /dev/null || skip "sqlite3 shell missing (finds the pages to damage)"
"$gen" -o "$T/t" -r 2 -n 20000 > /dev/null || fail "log_gen failed"
"$COLLSCOPE" ingest "$T/t" > /dev/null 2>&1 || fail "ingest failed"
q "$T/t/trace.db" "SELECT count(*) FROM dbstat" > /dev/null 2>&1 || skip "this sqlite3 shell has no dbstat table"
"$COLLSCOPE" analyze "$T/t/trace.db" > /dev/null 2>&1 || fail "analyze of the intact trace failed"
expect_eq "the flagged spans' index" "$(q "$T/t/trace.db" "SELECT count(*) FROM span INDEXED BY span_flagged
  WHERE (flags & 512) != 0 OR op = 3")" "$(q "$T/t/trace.db" "SELECT count(*) FROM span WHERE (flags & 512) != 0 OR
  op IN (SELECT id FROM ops WHERE kind = 'finalize')")"

# damage TABLE DIR which: DIR/trace.db, a copy of the analysed trace whose
# leaf page of TABLE number `which` (an SQL expression over n, the number
# of its leaf pages, counted from 0 in page order) is overwritten with
# 0xff; DIR/damaged.db a copy of it.
damage() {
  mkdir -p "$2"
  cp "$T/t/trace.db" "$2/trace.db"
  _ps=$(q "$2/trace.db" "PRAGMA page_size")
  _pg=$(q "$2/trace.db" "SELECT pageno FROM dbstat WHERE name = '$1' AND pagetype = 'leaf' ORDER BY pageno
        LIMIT 1 OFFSET (SELECT $3 FROM (SELECT count(*) AS n FROM dbstat WHERE name = '$1' AND pagetype = 'leaf'))")
  [ -n "$_pg" ] && [ "$_pg" -gt 1 ] || fail "no leaf page of $1"
  head -c "$_ps" /dev/zero | tr '\0' '\377' |
    dd of="$2/trace.db" bs="$_ps" seek=$((_pg - 1)) conv=notrunc 2> /dev/null || fail "dd failed"
  [ "$(q "$2/trace.db" "PRAGMA quick_check" 2>&1 | head -n 1)" != ok ] || fail "page $_pg of $1 is not damaged"
  cp "$2/trace.db" "$2/damaged.db"
}

# recovered WHAT DIR CMD...: CMD exits 1 with the one message naming
# DIR/trace.db as damaged and its copy; the damaged file is not written.
recovered() {
  _what=$1; _dir=$2; shift 2
  cp "$_dir/damaged.db" "$_dir/trace.db"
  rm -f "$_dir"/trace.recovered.db*
  "$@" > "$_dir/out" 2> "$_dir/err"
  _rc=$?
  [ $_rc = 1 ] || fail "$_what: exit status $_rc, want 1 (stderr: $(head -c 300 "$_dir/err"))"
  expect_eq "$_what: one message naming the damaged file" \
    "$(grep -c "^collscope: $_dir/trace.db: damaged (.*); analysing what could be read of it, copied into $_dir/trace.recovered.db" "$_dir/err")" 1
  cmp -s "$_dir/trace.db" "$_dir/damaged.db" || fail "$_what: the damaged file was modified"
  echo "ok: $_what: $(grep -m1 damaged "$_dir/err")"
}

# the intact trace's report, its folder's name taken out
"$COLLSCOPE" report "$T/t/trace.db" > "$T/intact.txt" 2> "$T/intact.err" || fail "report of the intact trace: $(cat "$T/intact.err")"
sed "s|$T/t/||g" "$T/intact.txt" > "$T/intact.cmp"

# 1. A span page in the middle, which the report does not read: the stored
# report, whole and unchanged, exit 0, nothing written beside the trace;
# analyze, export and the TUI read the spans and find the damage.
damage span "$T/mid" "n / 2"
"$COLLSCOPE" report "$T/mid/trace.db" > "$T/mid/out" 2> "$T/mid/err"
expect_eq "unread span page: report's exit status (stderr: $(head -c 300 "$T/mid/err"))" $? 0
sed "s|$T/mid/||g" "$T/mid/out" > "$T/mid/out.cmp"
cmp -s "$T/intact.cmp" "$T/mid/out.cmp" || fail "unread span page: the report differs from the intact trace's: $(diff "$T/intact.cmp" "$T/mid/out.cmp" | head -5)"
[ ! -e "$T/mid/trace.recovered.db" ] || fail "unread span page: the report made a recovered copy"
cmp -s "$T/mid/trace.db" "$T/mid/damaged.db" || fail "unread span page: the report wrote the trace"
echo "ok: unread span page: the stored report, unchanged"
recovered "unread span page: analyze" "$T/mid" "$COLLSCOPE" analyze "$T/mid/trace.db"
recovered "unread span page: export" "$T/mid" "$COLLSCOPE" export --format chrome -o "$T/mid/x.json" "$T/mid/trace.db"
if [ -x "$TUI" ]; then
  cp "$T/mid/damaged.db" "$T/mid/trace.db"
  "$TUI" --index "$T/mid/trace.db" > /dev/null 2> "$T/mid/err"
  expect_eq "unread span page: TUI index's exit status" $? 1
  grep -q "$T/mid/trace.db" "$T/mid/err" || fail "unread span page: TUI: $(head -c 300 "$T/mid/err")"
else
  echo "(collscope-tui not built: its index build is not checked)"
fi

# 2. The last span page, which holds the last rank's last call: the
# report reads it, finds it damaged and recovers the trace.
damage span "$T/last" "n - 1"
lastid=$(q "$T/t/trace.db" "SELECT id FROM span WHERE rank = 1 AND (flags & 512) = 0 ORDER BY begin_ns DESC LIMIT 1")
q "$T/last/trace.db" "SELECT * FROM span WHERE id = $lastid" > /dev/null 2>&1 &&
  fail "last span page: the page damaged does not hold rank 1's last call (span $lastid): the test needs another page"
recovered "span page the report reads (a rank's last call): report" "$T/last" "$COLLSCOPE" report "$T/last/trace.db"
grep -q "damaged trace $T/last/trace.db: this report is of what could be read of it" "$T/last/out" ||
  fail "last span page: no note in the report"

# 3. The index of the flagged spans (MPI_Finalize of each rank), which the
# report reads: the same.
damage span_flagged "$T/flag" "0"
recovered "the flagged spans' index: report" "$T/flag" "$COLLSCOPE" report "$T/flag/trace.db"

# 4. A page of a stored table the report reads (the steps).
damage steps "$T/steps" "n / 2"
recovered "a page of the stored steps: report" "$T/steps" "$COLLSCOPE" report "$T/steps/trace.db"
recovered "a page of the stored steps: report --format json" "$T/steps" "$COLLSCOPE" report --format json "$T/steps/trace.db"
grep -q "damaged trace $T/steps/trace.db" "$T/steps/out" || fail "steps: no note in the JSON report"

# 5. The file cut short in the middle of its spans: never the stored report
# of a whole trace.
mkdir -p "$T/cut"
sz=$(wc -c < "$T/t/trace.db")
head -c $((sz / 2)) "$T/t/trace.db" > "$T/cut/trace.db"
"$COLLSCOPE" report "$T/cut/trace.db" > "$T/cut/out" 2> "$T/cut/err"
rc=$?
[ $rc != 0 ] || fail "a file cut short: report exit status 0 (stderr: $(head -c 300 "$T/cut/err"))"
grep -q "$T/cut/trace.db" "$T/cut/err" || fail "a file cut short: the message does not name it: $(head -c 300 "$T/cut/err")"
echo "ok: a file cut short: report exits $rc: $(head -n 1 "$T/cut/err")"
pass
