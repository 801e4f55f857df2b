#!/bin/sh
# A trace with a damaged page, as a bad disk or a torn copy would leave it:
# `collscope report` and `collscope analyze` analyse what SQLite can still
# read of it, copied into trace.recovered.db beside it; one message names
# the damaged file and says what was kept and lost; the report (every
# format) has a note saying so; the exit status is 1; the damaged file is
# never written. The TUI's index build refuses it (exit 1, naming the
# file). Cases: a page in the middle of the spans (the rows before and
# after it are kept, exactly the page's rows are lost), the processes page,
# a page of a stored analysis table (recomputed), and a planted link where
# the recovered copy would go (never followed: a private copy instead).
. "$srcdir/tests/lib.sh"
gen=$B/bench/log_gen
TUI=$B/tui/collscope-tui
[ -x "$gen" ] || skip "bench/log_gen not built"
command -v sqlite3 > /dev/null || skip "sqlite3 shell missing (finds the pages to damage)"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
"$gen" -o "$T/t" -r 2 -n 5000 > /dev/null || fail "log_gen failed"
"$COLLSCOPE" ingest "$T/t" > /dev/null 2>&1 || fail "ingest failed"
q "$T/t/trace.db" "SELECT count(*) FROM dbstat" > /dev/null 2>&1 || skip "this sqlite3 shell has no dbstat table"
cp "$T/t/trace.db" "$T/analysed.db"
"$COLLSCOPE" analyze "$T/analysed.db" > /dev/null 2>&1 || fail "analyze of the intact trace failed"

# damage SRC TABLE DIR [first|last]: DIR/trace.db, a copy of SRC whose
# middle (or first, or last) leaf page of TABLE (by page number) is
# overwritten with 0xff; DIR/damaged.db a copy of it, DIR/page.cells the
# number of rows that page held.
damage() {
  mkdir -p "$3"
  cp "$1" "$3/trace.db"
  _ps=$(q "$3/trace.db" "PRAGMA page_size")
  case ${4:-mid} in
  first) _at=0 ;;
  last) _at="(SELECT count(*) - 1 FROM dbstat WHERE name = '$2' AND pagetype = 'leaf')" ;;
  *) _at="(SELECT count(*) / 2 FROM dbstat WHERE name = '$2' AND pagetype = 'leaf')" ;;
  esac
  _pg=$(q "$3/trace.db" "SELECT pageno FROM dbstat WHERE name = '$2' AND pagetype = 'leaf' ORDER BY pageno
        LIMIT 1 OFFSET $_at")
  [ -n "$_pg" ] && [ "$_pg" -gt 1 ] || fail "no leaf page of $2 in $1"
  q "$3/trace.db" "SELECT ncell FROM dbstat WHERE pageno = $_pg" > "$3/page.cells"
  head -c "$_ps" /dev/zero | tr '\0' '\377' |
    dd of="$3/trace.db" bs="$_ps" seek=$((_pg - 1)) conv=notrunc 2> /dev/null || fail "dd failed"
  [ "$(q "$3/trace.db" "PRAGMA quick_check" 2>&1 | head -n 1)" != ok ] || fail "page $_pg of $2 is not damaged"
  cp "$3/trace.db" "$3/damaged.db"
}

# fresh DIR: the damaged file again, nothing recovered beside it.
fresh() {
  cp "$1/damaged.db" "$1/trace.db"
  rm -f "$1/trace.db-wal" "$1/trace.db-shm" "$1"/trace.recovered.db*
}

# run1 WHAT DIR CMD...: CMD, on a fresh copy of the damaged file, exits 1
# (its output in DIR/out and DIR/err; WHAT and DIR kept in _what, _dir).
run1() {
  _what=$1; _dir=$2; shift 2
  fresh "$_dir"
  "$@" > "$_dir/out" 2> "$_dir/err"
  _rc=$?
  [ $_rc = 1 ] || fail "$_what: exit status $_rc, want 1 (stderr: $(head -c 300 "$_dir/err"))"
}

# partial WHAT DIR CMD...: run1, with one message on stderr that names
# DIR/trace.db as damaged and says what was kept; DIR/trace.db as it was,
# and DIR/trace.recovered.db.
partial() {
  run1 "$@"
  expect_eq "$_what: one message naming the damaged file" \
    "$(grep -c "^collscope: $_dir/trace.db: damaged (.*); analysing what could be read of it, copied into $_dir/trace.recovered.db: [0-9]* rows kept" "$_dir/err")" 1
  cmp -s "$_dir/trace.db" "$_dir/damaged.db" || fail "$_what: the damaged file was modified"
  [ -f "$_dir/trace.recovered.db" ] || fail "$_what: no $_dir/trace.recovered.db"
  echo "ok: $_what: $(grep -m1 damaged "$_dir/err")"
}

# refused WHAT DIR CMD...: run1, with a message naming DIR/trace.db.
refused() {
  run1 "$@"
  grep -q "$_dir/trace.db" "$_dir/err" || fail "$_what: the message does not name the file: $(head -c 300 "$_dir/err")"
  echo "ok: $_what: $(head -n 1 "$_dir/err")"
}

# every_reader NAME DIR: report (every format) and analyze analyse the
# valid rest (analyze last: its copy stays); the TUI index build refuses.
every_reader() {
  partial "$1: report" "$2" "$COLLSCOPE" report "$2/trace.db"
  grep -q "^collscope report: $2/trace.recovered.db" "$2/out" || fail "$1: report: not of the recovered copy"
  grep -q "damaged trace $2/trace.db: this report is of what could be read of it" "$2/out" ||
    fail "$1: report: no note on the damage: $(cat "$2/out")"
  for f in json markdown junit; do
    partial "$1: report --format $f" "$2" "$COLLSCOPE" report "$2/trace.db" --format $f
    grep -q "damaged trace $2/trace.db" "$2/out" || fail "$1: report --format $f: no note on the damage"
    [ $f != json ] || "$PY" -c 'import json,sys; json.load(sys.stdin)' < "$2/out" ||
      fail "$1: report JSON does not parse"
  done
  if [ -x "$TUI" ]; then
    refused "$1: TUI index" "$2" "$TUI" --index "$2/trace.db"
  else
    echo "(collscope-tui not built: its index build is not checked)"
  fi
  partial "$1: analyze" "$2" "$COLLSCOPE" analyze "$2/trace.db"
  [ "$(q "$2/trace.recovered.db" "SELECT count(*) FROM instances")" -gt 0 ] ||
    fail "$1: analyze: no analysis stored in the recovered copy"
}

# A page in the middle of the spans: the rows before and after it are kept,
# exactly its rows are lost, and every count says so.
damage "$T/t/trace.db" span "$T/span"
every_reader "a span page" "$T/span"
n=$(q "$T/t/trace.db" "SELECT count(*) FROM span")
lost=$(cat "$T/span/page.cells")
R=$T/span/trace.recovered.db
expect_eq "spans kept" "$(q "$R" "SELECT count(*) FROM span")" $((n - lost))
expect_eq "spans before the damage kept" "$(q "$R" "SELECT min(id) FROM span")" "$(q "$T/t/trace.db" "SELECT min(id) FROM span")"
expect_eq "spans after the damage kept" "$(q "$R" "SELECT max(id) FROM span")" "$(q "$T/t/trace.db" "SELECT max(id) FROM span")"
expect_eq "the spans lost are one run of the trace's spans" \
  "$(q "$R" "ATTACH '$T/t/trace.db' AS o; CREATE TEMP TABLE gone AS SELECT id FROM o.span
     WHERE id NOT IN (SELECT id FROM main.span);
     SELECT count(*) FROM o.span WHERE id BETWEEN (SELECT min(id) FROM gone) AND (SELECT max(id) FROM gone)")" "$lost"
expect_eq "kept spans are the trace's own" \
  "$(q "$R" "ATTACH '$T/t/trace.db' AS o; SELECT count(*) FROM span s JOIN o.span x ON x.id = s.id
     WHERE x.rank = s.rank AND x.begin_ns = s.begin_ns AND x.end_ns = s.end_ns AND x.op = s.op")" $((n - lost))
grep -q "spans kept: $((n - lost)) of $n (" "$T/span/err" || fail "the message does not count the spans: $(cat "$T/span/err")"
grep -q "lost: span: $lost rows" "$T/span/err" || fail "the message does not count the rows lost: $(cat "$T/span/err")"
"$COLLSCOPE" report "$T/span/trace.db" --format json 2> /dev/null > "$T/span/r.json"
expect_eq "report: spans" "$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["spans"])' < "$T/span/r.json")" $((n - lost))
# the report's per-rank spans are the recovered ones
for r in 0 1; do
  want=$(q "$R" "SELECT count(*) FROM span WHERE rank = $r")
  expect_eq "rank $r: spans in the report" \
    "$("$PY" -c "import json,sys; d=json.load(sys.stdin); print([x['spans'] for x in d['ranks'] if x['rank'] == $r][0])" < "$T/span/r.json")" "$want"
done

# The first and the last page of the spans: the rows after the first are
# found past it; the rows before the last are kept, those past it lost.
damage "$T/t/trace.db" span "$T/first" first
partial "the first span page: report" "$T/first" "$COLLSCOPE" report "$T/first/trace.db"
lost=$(cat "$T/first/page.cells")
expect_eq "the first span page: spans kept" "$(q "$T/first/trace.recovered.db" "SELECT count(*) FROM span")" $((n - lost))
grep -q "lost: span: $lost rows" "$T/first/err" || fail "the first span page: $(cat "$T/first/err")"
damage "$T/t/trace.db" span "$T/last" last
partial "the last span page: report" "$T/last" "$COLLSCOPE" report "$T/last/trace.db"
lost=$(cat "$T/last/page.cells")
expect_eq "the last span page: spans kept" "$(q "$T/last/trace.recovered.db" "SELECT count(*) FROM span")" $((n - lost))
grep -q "spans kept: $((n - lost)) of $n (.*lost: span: the rows past the last that reads ($((n - lost)) kept)" \
  "$T/last/err" || fail "the last span page: $(cat "$T/last/err")"

# The processes page: every process row lost, rebuilt from the spans.
damage "$T/t/trace.db" processes "$T/proc"
every_reader "the processes page" "$T/proc"
grep -q "the process rows of 2 ranks rebuilt from their spans" "$T/proc/err" || fail "processes: $(cat "$T/proc/err")"
expect_eq "processes: spans kept" "$(q "$T/proc/trace.recovered.db" "SELECT count(*) FROM span")" "$n"

# An analysed trace: a page of its stored stragglers is damaged; the
# analysis is recomputed from the spans, all of which are kept.
damage "$T/analysed.db" stragglers "$T/strag"
partial "a page of the stored stragglers: report" "$T/strag" "$COLLSCOPE" report "$T/strag/trace.db"
grep -q "spans kept: $n of $n (all 2 ranks whole); lost: no row" "$T/strag/err" || fail "stragglers: $(cat "$T/strag/err")"

# A link planted where the recovered copy goes is never followed (nor
# removed): the copy is a private file, and the report still comes.
fresh "$T/span"
echo "not yours" > "$T/victim"
ln -s "$T/victim" "$T/span/trace.recovered.db"
"$COLLSCOPE" report "$T/span/trace.db" > "$T/span/out" 2> "$T/span/err"
expect_eq "planted link: exit status" $? 1
expect_eq "planted link: its target untouched" "$(cat "$T/victim")" "not yours"
[ -L "$T/span/trace.recovered.db" ] || fail "planted link: the link was removed"
grep -q "copied into a private file" "$T/span/err" || fail "planted link: $(cat "$T/span/err")"
grep -q "damaged trace $T/span/trace.db" "$T/span/out" || fail "planted link: no report"
pass
