#!/bin/sh
# Wait states are what docs/guide.md defines: each member of a collective
# instance waits from its own entry to the last member's entry, bounded by
# its time inside the call (a blocking member: its span). Checked row by
# row against the spans view (aligned times) on synthetic traces of
# known stragglers (bench/gen_trace, no MPI): every waits row within 1 us
# of the definition, every member of every instance with a row, and the
# straggler waiting least.
. "$srcdir/tests/lib.sh"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
for c in "pers --persistent 3:5000" "trans --transient 5:10-19:8000" "link --slow-link 2:3:5000"; do
  set -- $c
  n=$1
  shift
  "$GEN" "$T/$n.db" --ranks 8 --steps 40 "$@" > /dev/null || fail "$n: gen_trace failed"
  "$COLLSCOPE" analyze "$T/$n.db" > /dev/null 2> "$T/$n.err" || fail "$n: analyze failed: $(cat "$T/$n.err")"
  db=$T/$n.db
  rows=$(q "$db" "SELECT count(*), count(DISTINCT comm || ':' || seq), sum(wait_ns) > 0 FROM waits")
  members=$(q "$db" "SELECT count(*) FROM spans WHERE kind = 'coll' AND seq IS NOT NULL")
  expect_eq "$n: a waits row for every member of a collective" "${rows%%|*}" "$members"
  [ "${rows##*|}" = 1 ] || fail "$n: no wait at all ($rows)"
  bad=$(q "$db" "WITH m AS (SELECT s.id, s.comm, s.seq, s.begin_ns b, s.end_ns e FROM spans s
      WHERE s.kind = 'coll' AND s.seq IS NOT NULL),
    l AS (SELECT comm, seq, max(b) last FROM m GROUP BY comm, seq)
    SELECT count(*) || ' ' || coalesce(max(abs(w.wait_ns - max(0, min(l.last - m.b, m.e - m.b)))), 0)
    FROM waits w JOIN m ON m.id = w.span JOIN l ON l.comm = m.comm AND l.seq = m.seq
    WHERE abs(w.wait_ns - max(0, min(l.last - m.b, m.e - m.b))) > 1000")
  expect_eq "$n: waits off their definition by more than 1 us (count, largest)" "$bad" "0 0"
done
least=$(q "$T/pers.db" "SELECT rank FROM waits GROUP BY rank ORDER BY sum(wait_ns) LIMIT 1")
expect_eq "the persistent straggler waits least" "$least" 3
pass
