# tests/analysis/badtrace.inc.sh: trace.db files with extreme or broken
# contents, made from a synthetic trace (bench/gen_trace) with sqlite3.
# Source after tests/lib.sh. badtrace_make BASE.db DIR: writes DIR/NAME.db
# for each NAME in $BADTRACE_CASES. page_span is not an edit but damage: the
# trace rewritten with 1 KiB pages, then its middle leaf page of the spans
# overwritten with 0xff (DIR/page_span.cells: the rows that page held).
BADTRACE_CASES="begin_min end_max both_extreme neg_dur huge_seq rank5000 rank_neg rank_max \
empty_span null_cols text_times no_clocks no_ops inf_drift offset_max page_span"
_bt_sql() {
  case $1 in
  begin_min) echo "UPDATE span SET begin_ns = -9223372036854775808 WHERE id IN (SELECT min(id) FROM span GROUP BY rank);" ;;
  end_max) echo "UPDATE span SET end_ns = 9223372036854775807 WHERE id IN (SELECT max(id) FROM span GROUP BY rank);" ;;
  both_extreme) echo "UPDATE span SET begin_ns = -9223372036854775808 WHERE id % 11 = 0;
    UPDATE span SET end_ns = 9223372036854775807 WHERE id % 13 = 0;" ;;
  neg_dur) echo "UPDATE span SET end_ns = begin_ns - 1000000 WHERE id % 3 = 0;" ;;
  huge_seq) echo "UPDATE span SET seq = 9223372036854775807 - id WHERE seq IS NOT NULL AND id % 5 = 0;
    UPDATE span SET seq = -9223372036854775808 WHERE seq IS NOT NULL AND id % 7 = 0;" ;;
  rank5000|rank_neg|rank_max)
    case $1 in rank5000) _r=5000 ;; rank_neg) _r=-1 ;; *) _r=2147483647 ;; esac
    echo "UPDATE span SET rank = $_r WHERE rank = 3; UPDATE processes SET rank = $_r WHERE rank = 3;
    UPDATE clocks SET rank = $_r WHERE rank = 3; UPDATE comms SET rank = $_r WHERE rank = 3;
    UPDATE span SET peer = $_r WHERE peer = 3; UPDATE span SET peer2 = $_r WHERE peer2 = 3;
    UPDATE comms SET comm_rank = $_r WHERE comm_rank = 3;" ;;
  empty_span) echo "DELETE FROM span; UPDATE processes SET spans = 0;" ;;
  null_cols) echo "UPDATE span SET comm = NULL, bytes = NULL, peer = NULL WHERE id % 4 = 0;
    UPDATE span SET seq = NULL WHERE id % 6 = 0; UPDATE processes SET world_size = NULL, start_ns = NULL, end_ns = NULL;
    UPDATE comms SET size = NULL WHERE rank = 1;" ;;
  text_times) echo "UPDATE span SET begin_ns = 'abc' WHERE id % 9 = 0; UPDATE span SET bytes = x'00ff' WHERE id % 10 = 0;" ;;
  no_clocks) echo "DROP TABLE clocks;" ;;
  no_ops) echo "DROP VIEW spans; DROP TABLE ops;" ;;
  inf_drift) echo "UPDATE clocks SET drift_ppm = 1e999; UPDATE processes SET ticks_per_ns = -1e999;" ;;
  offset_max) echo "UPDATE clocks SET offset_ns = 9223372036854775807 WHERE rank = 1;
    UPDATE clocks SET offset_ns = -9223372036854775808 WHERE rank = 2;" ;;
  page_span) echo "PRAGMA journal_mode=DELETE; PRAGMA page_size=1024; VACUUM;" ;;
  esac
}
# _bt_damage DB NAME: overwrite the middle leaf page of table NAME in DB.
_bt_damage() {
  _pg=$(sqlite3 "$1" "SELECT pageno FROM dbstat WHERE name = '$2' AND pagetype = 'leaf' ORDER BY pageno
        LIMIT 1 OFFSET (SELECT count(*) / 2 FROM dbstat WHERE name = '$2' AND pagetype = 'leaf')") || return 1
  [ -n "$_pg" ] && [ "$_pg" -gt 1 ] || return 1
  sqlite3 "$1" "SELECT ncell FROM dbstat WHERE pageno = $_pg" > "${1%.db}.cells" || return 1
  _ps=$(sqlite3 "$1" "PRAGMA page_size")
  head -c "$_ps" /dev/zero | tr '\0' '\377' | dd of="$1" bs="$_ps" seek=$((_pg - 1)) conv=notrunc 2> /dev/null
}
badtrace_make() {
  for _c in $BADTRACE_CASES; do
    cp "$1" "$2/$_c.db" || return 1
    sqlite3 "$2/$_c.db" "$(_bt_sql "$_c")" > /dev/null || return 1
    if [ "$_c" = page_span ]; then _bt_damage "$2/$_c.db" span || return 1; fi
  done
}
