#!/bin/sh
# A trace with a damaged page: every reader must say so, naming the file,
# and exit non-zero, never take the rows before the damage for the whole
# table (a read loop ends at SQLITE_DONE, anything else is an error). One
# page of a real trace is overwritten in place, as a bad disk or a torn
# copy would leave it: a page of the spans (the middle of the file), of the
# processes, and of a stored analysis table; then `collscope report`,
# `collscope analyze` and the TUI's index build (collscope-tui --index) run
# on each copy.
. "$srcdir/tests/lib.sh"
gen=$B/bench/log_gen
TUI=$B/tui/collscope-tui
[ -x "$gen" ] || skip "bench/log_gen not built"
command -v sqlite3 > /dev/null || skip "sqlite3 shell missing (finds the pages to damage)"
"$gen" -o "$T/t" -r 2 -n 20000 > /dev/null || fail "log_gen failed"
"$COLLSCOPE" ingest "$T/t" > /dev/null 2>&1 || fail "ingest failed"
q "$T/t/trace.db" "SELECT count(*) FROM dbstat" > /dev/null 2>&1 || skip "this sqlite3 shell has no dbstat table"
cp "$T/t/trace.db" "$T/analysed.db"
"$COLLSCOPE" analyze "$T/analysed.db" > /dev/null 2>&1 || fail "analyze of the intact trace failed"

# damage SRC TABLE DIR: DIR/trace.db, a copy of SRC whose middle page of
# TABLE (a table's leaf page, by page number) is overwritten with 0xff.
damage() {
  mkdir -p "$3"
  cp "$1" "$3/trace.db"
  _ps=$(q "$3/trace.db" "PRAGMA page_size")
  _pg=$(q "$3/trace.db" "SELECT pageno FROM dbstat WHERE name = '$2' AND pagetype = 'leaf' ORDER BY pageno
        LIMIT 1 OFFSET (SELECT count(*) / 2 FROM dbstat WHERE name = '$2' AND pagetype = 'leaf')")
  [ -n "$_pg" ] && [ "$_pg" -gt 1 ] || fail "no leaf page of $2 in $1"
  head -c "$_ps" /dev/zero | tr '\0' '\377' |
    dd of="$3/trace.db" bs="$_ps" seek=$((_pg - 1)) conv=notrunc 2> /dev/null || fail "dd failed"
  [ "$(q "$3/trace.db" "PRAGMA quick_check" 2>&1 | head -n 1)" != ok ] || fail "page $_pg of $2 is not damaged"
  cp "$3/trace.db" "$3/damaged.db"
}

# refused WHAT DIR CMD...: CMD (run on a fresh copy of the damaged file)
# exits 1 with a message on stderr that names DIR/trace.db.
refused() {
  _what=$1; _dir=$2; shift 2
  cp "$_dir/damaged.db" "$_dir/trace.db"
  rm -f "$_dir/trace.db-wal" "$_dir/trace.db-shm"
  "$@" > "$_dir/out" 2> "$_dir/err"
  _rc=$?
  [ $_rc = 1 ] || fail "$_what: exit status $_rc, want 1 (stderr: $(head -c 300 "$_dir/err"))"
  grep -q "$_dir/trace.db" "$_dir/err" || fail "$_what: the message does not name the file: $(head -c 300 "$_dir/err")"
  echo "ok: $_what: $(head -n 1 "$_dir/err")"
}

# every_reader NAME DIR: report, analyze and the TUI index build refuse.
every_reader() {
  refused "$1: report" "$2" "$COLLSCOPE" report "$2/trace.db"
  refused "$1: analyze" "$2" "$COLLSCOPE" analyze "$2/trace.db"
  if [ -x "$TUI" ]; then
    refused "$1: TUI index" "$2" "$TUI" --index "$2/trace.db"
  else
    echo "(collscope-tui not built: its index build is not checked)"
  fi
}

damage "$T/t/trace.db" span "$T/span"
every_reader "a span page" "$T/span"
damage "$T/t/trace.db" processes "$T/proc"
every_reader "the processes page" "$T/proc"
# An analysed trace: the report reads the stored analysis, not the spans.
damage "$T/analysed.db" stragglers "$T/strag"
refused "a page of the stored stragglers: report" "$T/strag" "$COLLSCOPE" report "$T/strag/trace.db"
pass
