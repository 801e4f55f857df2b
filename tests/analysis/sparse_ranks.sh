#!/bin/sh
# Ranks stored sparsely: per-rank tables follow the ranks present, not the
# largest id.
# 1. A 4-rank trace with one rank renumbered to 5000 analyses in about the
#    memory of the plain trace and gives the same verdicts, with the renamed
#    rank.
# 2. The same trace with rank ids 0, 7, 1000000 and 2147483647 (2^31-1):
#    every rank is in the report (ranks, clocks, wait states), the figures
#    equal those of ids 0..3 (verdicts, instances, steps, what-if), and the
#    analysis stays within the memory of the plain trace.
# 3. A world size of 2^31-1 with those four ranks: the missing ranks are
#    counted and a few listed, without memory per missing id (and a world
#    of 6: two missing, two listed).
# 4. A negative rank id is refused with a message naming the file.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/analysis/sparse_ranks.inc.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
[ -x /usr/bin/time ] || skip "/usr/bin/time not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/plain.db" --ranks 4 --steps 100 --persistent 3:5000 >/dev/null || fail "gen_trace failed"
cp "$T/plain.db" "$T/sparse.db"
q "$T/sparse.db" "UPDATE span SET rank = 5000 WHERE rank = 3; UPDATE processes SET rank = 5000 WHERE rank = 3;
  UPDATE clocks SET rank = 5000 WHERE rank = 3; UPDATE comms SET rank = 5000 WHERE rank = 3;
  UPDATE completions SET rank = 5000 WHERE rank = 3; UPDATE callsites SET rank = 5000 WHERE rank = 3;
  UPDATE frames SET rank = 5000 WHERE rank = 3; UPDATE processes SET world_size = 4;" || fail "sqlite3"
# (under ASan, freed memory waits in its quarantine and counts in the RSS:
# without one the figures compare as in a plain build)
rss() {
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
    /usr/bin/time -f %M "$COLLSCOPE" analyze --force "$1" 2>&1 >/dev/null | tail -n 1
}
p=$(rss "$T/plain.db") s=$(rss "$T/sparse.db")
echo "peak RSS: plain $p KiB, rank 5000 $s KiB"
[ "$p" -gt 0 ] 2>/dev/null || fail "no RSS for the plain trace: $p"
[ "$s" -le $((p + p / 2 + 2048)) ] 2>/dev/null || fail "rank 5000: peak RSS $s KiB against $p KiB for the plain trace"
verdicts() {
  "$COLLSCOPE" report "$1" --format json -o "$1.json" || fail "report $1 failed"
  "$PY" -c 'import json,sys
for s in json.load(open(sys.argv[1]))["stragglers"]:
    print(s["kind"], s["rank"], s["first_step"], s["last_step"])' "$1.json"
}
vp=$(verdicts "$T/plain.db" | sed 's/^\([a-z_]*\) 3 /\1 5000 /')
vs=$(verdicts "$T/sparse.db")
echo "verdicts: plain (renamed) [$vp], sparse [$vs]"
[ -n "$vs" ] || fail "no verdict on the sparse trace"
[ "$vp" = "$vs" ] || fail "verdicts differ: plain [$vp], sparse [$vs]"

# 2. ids 0, 7, 1000000, 2^31-1 in every table with a rank column
"$GEN" "$T/p4.db" --ranks 4 --steps 100 --persistent 3:5000 --slow-link 1:2:3000 --transient 2:40-60:8000 \
  >/dev/null || fail "gen_trace failed"
cp "$T/p4.db" "$T/wide.db"
MAP="1:7 2:1000000 3:2147483647"
renumber "$T/wide.db" "$MAP"
[ "$(q "$T/wide.db" "SELECT group_concat(rank) FROM (SELECT DISTINCT rank FROM span ORDER BY rank)")" = \
  "0,7,1000000,2147483647" ] || fail "the renumbered trace does not hold ranks 0,7,1000000,2147483647"
p=$(rss "$T/p4.db") s=$(rss "$T/wide.db")
echo "peak RSS: ranks 0-3 $p KiB, ranks 0,7,1000000,2147483647 $s KiB"
[ "$p" -gt 0 ] 2>/dev/null || fail "no RSS for the plain trace: $p"
[ "$s" -le $((p + p / 2 + 2048)) ] 2>/dev/null && [ "$s" -lt 102400 ] ||
  fail "ranks up to 2^31-1: peak RSS $s KiB against $p KiB for ranks 0-3"
for d in p4 wide; do
  "$COLLSCOPE" report "$T/$d.db" --format json -o "$T/$d.json" || fail "report $d failed"
done
figures "$T/p4.json" "$MAP" >"$T/p4.fig" || fail "cannot read $T/p4.json"
figures "$T/wide.json" >"$T/wide.fig" || fail "cannot read $T/wide.json"
grep -v '^step ' "$T/wide.fig"
for r in 0 7 1000000 2147483647; do
  for what in wait clock rank; do
    grep -q "^$what $r " "$T/wide.fig" || fail "rank $r: not in the report's $what table"
  done
done
grep -q "^straggler " "$T/wide.fig" || fail "no verdict on the trace with ranks up to 2^31-1"
diff "$T/p4.fig" "$T/wide.fig" || fail "ranks 0,7,1000000,2147483647: the analysis differs from ranks 0-3"

# 3. a world of 2^31-1 ranks, four of them present
q "$T/wide.db" "UPDATE processes SET world_size = 2147483647" || fail "sqlite3"
s=$(rss "$T/wide.db")
echo "peak RSS: world size 2147483647, 4 ranks: $s KiB"
[ "$s" -lt 102400 ] 2>/dev/null || fail "world size 2^31-1: peak RSS $s KiB"
n=$(q "$T/wide.db" "SELECT value FROM meta WHERE key = 'analysis_notes'")
echo "notes: $n"
case $n in
  *"ranks missing from the trace (2147483643 of 2147483647): 1,2,3,4,5,6,8,9,...;"*) ;;
  *) fail "world size 2^31-1: no count of the missing ranks in the notes: $n" ;;
esac

# a world of 6 with ids 0, 7, ...: two missing, two listed
q "$T/wide.db" "UPDATE processes SET world_size = 6" || fail "sqlite3"
"$COLLSCOPE" analyze --force "$T/wide.db" >/dev/null || fail "analyze with a world size of 6 failed"
n=$(q "$T/wide.db" "SELECT value FROM meta WHERE key = 'analysis_notes'")
case $n in
  *"ranks missing from the trace (2 of 6): 1,2;"*) ;;
  *) fail "world size 6: the missing ranks are miscounted in the notes: $n" ;;
esac

# 4. a negative rank is refused, naming the file
q "$T/wide.db" "UPDATE processes SET world_size = 4" || fail "sqlite3"
renumber "$T/wide.db" "2147483647:-5"
"$COLLSCOPE" analyze --force "$T/wide.db" >/dev/null 2>"$T/neg.err" && fail "a trace with rank -5 was analysed"
cat "$T/neg.err"
grep -q "wide.db:.*rank" "$T/neg.err" || fail "rank -5: the message names neither the file nor the rank"
pass
