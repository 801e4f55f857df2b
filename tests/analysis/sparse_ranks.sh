#!/bin/sh
# Ranks stored sparsely: a 4-rank trace with one rank renumbered to 5000
# analyses in about the memory of the plain trace (per-rank tables follow
# the ranks present, not the largest id) and gives the same verdicts, with
# the renamed rank.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
[ -x /usr/bin/time ] || skip "/usr/bin/time not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/plain.db" --ranks 4 --steps 100 --persistent 3:5000 >/dev/null || fail "gen_trace failed"
cp "$T/plain.db" "$T/sparse.db"
q "$T/sparse.db" "UPDATE span SET rank = 5000 WHERE rank = 3; UPDATE processes SET rank = 5000 WHERE rank = 3;
  UPDATE clocks SET rank = 5000 WHERE rank = 3; UPDATE comms SET rank = 5000 WHERE rank = 3;
  UPDATE span SET peer = 5000 WHERE peer = 3; UPDATE span SET peer2 = 5000 WHERE peer2 = 3;
  UPDATE completions SET rank = 5000 WHERE rank = 3; UPDATE callsites SET rank = 5000 WHERE rank = 3;
  UPDATE frames SET rank = 5000 WHERE rank = 3; UPDATE processes SET world_size = 4;" || fail "sqlite3"
# (under ASan, freed memory waits in its quarantine and counts in the RSS:
# without one the figures compare as in a plain build)
rss() {
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
    /usr/bin/time -f %M "$COLLSCOPE" analyze "$1" 2>&1 >/dev/null | tail -n 1
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
pass
