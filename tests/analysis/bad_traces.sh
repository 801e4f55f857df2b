#!/bin/sh
# Every reader on trace.db files with extreme or broken contents
# (tests/analysis/badtrace.inc.sh: begin/end of INT64_MIN/MAX, negative
# durations, huge sequence numbers, rank ids of 5000, 2^31-1 and -1, an
# empty span table, NULLs, text in number columns, missing tables, infinite
# clock drifts and offsets, a damaged page in the middle of the spans):
# analyze, report in every format and the TUI's index either succeed or
# stop with one message naming the file and exit 1; never a crash, a
# sanitizer report or a hang. JSON that is written parses. The damaged
# page costs its own spans only: the report is of the others, with a note.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/analysis/badtrace.inc.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 shell not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/base.db" --ranks 4 --steps 30 >/dev/null || fail "gen_trace failed"
mkdir "$T/cases" && badtrace_make "$T/base.db" "$T/cases" || fail "cannot make the cases"
TUI="$B/tui/collscope-tui"
# one CASE DESC RC-FILE CMD...: exit 0, or 1 with one line naming the file
one() {
  _c=$1 _d=$2; shift 2
  timeout 60 "$@" >"$T/out" 2>"$T/err"; _rc=$?
  grep -Eq 'runtime error|AddressSanitizer|LeakSanitizer' "$T/err" && { cat "$T/err"; fail "$_c: $_d: sanitizer report"; }
  case $_rc in
  0) ;;
  1) [ "$(grep -cv '^collscope: note\|^collscope: .* is read-only' "$T/err")" -ge 1 ] &&
     grep -q "$_c.db" "$T/err" || { cat "$T/err"; fail "$_c: $_d: exit 1 without a message naming the file"; } ;;
  *) cat "$T/err"; fail "$_c: $_d: exit $_rc" ;;
  esac
  echo "ok: $_c: $_d: exit $_rc $(grep -m1 "$_c.db" "$T/err")"
  return $_rc
}
for c in $BADTRACE_CASES; do
  db="$T/cases/$c.db"
  one "$c" analyze "$COLLSCOPE" analyze "$db"
  for f in text json markdown junit; do
    if one "$c" "report $f" "$COLLSCOPE" report "$db" --format "$f" && [ $f = json ]; then
      "$PY" -c 'import json,sys; json.load(sys.stdin)' <"$T/out" || fail "$c: report JSON does not parse"
    fi
  done
  one "$c" "diff json" "$COLLSCOPE" diff "$db" "$T/base.db" --format json || true
  if [ -x "$TUI" ]; then one "$c" "tui --index" "$TUI" --index "$db" || true; fi
done
# The damaged page: exactly its spans are lost, before and after it kept.
db=$T/cases/page_span.db
n=$(q "$T/base.db" "SELECT count(*) FROM span")
lost=$(cat "$T/cases/page_span.cells")
[ "$lost" -gt 0 ] && [ "$lost" -lt "$n" ] || fail "page_span: the damaged page held $lost of $n spans"
"$COLLSCOPE" report "$db" --format json > "$T/out" 2> "$T/err"
expect_eq "page_span: report exit status" $? 1
grep -q "page_span.db: damaged (.*); analysing what could be read of it" "$T/err" || fail "page_span: $(cat "$T/err")"
"$PY" - "$T/out" $((n - lost)) <<'EOF' || fail "page_span: the report's counts"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["spans"] == int(sys.argv[2]), (d["spans"], sys.argv[2])
assert sum(r["spans"] for r in d["ranks"]) == int(sys.argv[2]), d["ranks"]
assert len(d["ranks"]) == 4, d["ranks"]
assert any(n.startswith("damaged trace ") for n in d["notes"]), d["notes"]
EOF
R=$T/cases/page_span.recovered.db
expect_eq "page_span: spans kept" "$(q "$R" "SELECT count(*) FROM span")" $((n - lost))
expect_eq "page_span: the spans before and after the page" "$(q "$R" "SELECT min(id) || ' ' || max(id) FROM span")" \
  "$(q "$T/base.db" "SELECT min(id) || ' ' || max(id) FROM span")"
expect_eq "page_span: per rank, as the trace's own" \
  "$(q "$R" "SELECT group_concat(rank || ':' || n) FROM (SELECT rank, count(*) n FROM span GROUP BY rank)")" \
  "$(q "$R" "ATTACH '$T/base.db' AS o; SELECT group_concat(rank || ':' || n) FROM (SELECT s.rank, count(*) n
     FROM o.span s WHERE s.id IN (SELECT id FROM main.span) GROUP BY s.rank)")"
pass
