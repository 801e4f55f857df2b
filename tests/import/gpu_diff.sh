#!/bin/sh
# `collscope diff` of the GPU time per rank (analyzer/report/diff.c) on
# generated Kineto traces (tests/import/gpu_gen.py), 8 ranks each:
#   - BASE none slow, NEW rank 5 computing 2x slower: the diff names rank 5
#     (its compute share changed out of line, and out of line in NEW only),
#     in text and JSON; every rank's window and shares, base and new, are
#     the two reports' own figures, and the changes their differences;
#   - a run against itself: no change, no rank named;
#   - a CPU-only trace against itself: no GPU section in text, an empty
#     gpu_time[] in JSON.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
GEN="$S/tests/import/gpu_gen.py"

for c in "even -1" "slow 5"; do
  set -- $c
  check "generate $1" $PY "$GEN" "$T/$1" --ranks 8 --steps 4 --slow-rank "$2"
  "$COLLSCOPE" import -o "$T/$1.out" "$T/$1" > "$T/$1.imp" 2>&1 || { cat "$T/$1.imp"; fail "$1: import failed"; }
  "$COLLSCOPE" report "$T/$1.out" --format json -o "$T/$1.json" || fail "$1: report --format json failed"
done

"$COLLSCOPE" diff "$T/even.out" "$T/slow.out" > "$T/diff.txt" || fail "diff (text) failed"
"$COLLSCOPE" diff "$T/even.out" "$T/slow.out" --format json > "$T/diff.json" || fail "diff (json) failed"
sed -n '/^GPU time per rank, base -> new/,$p' "$T/diff.txt"
expect_eq "text: a row per rank" "$(sed -n '/^GPU time per rank, base -> new/,$p' "$T/diff.txt" | grep -cE '^ +[0-9]+ +[0-9.]+ -> [0-9.]+ ')" 8
grep -q "^  compute share changed out of line: rank 5 +[0-9.]* points (median change of the ranks -" "$T/diff.txt" ||
  fail "the text diff does not name rank 5 as changed"
grep -q "^  compute share out of line: rank 5 above (new)$" "$T/diff.txt" ||
  fail "the text diff does not say rank 5 is out of line in the new run"

$PY - "$T/diff.json" "$T/even.json" "$T/slow.json" << 'PYEOF' || fail "the JSON diff and the two reports disagree (above)"
import json, sys
d = json.load(open(sys.argv[1]))
base = {g["rank"]: g for g in json.load(open(sys.argv[2]))["gpu_time"]}
new = {g["rank"]: g for g in json.load(open(sys.argv[3]))["gpu_time"]}
rows = {g["rank"]: g for g in d["gpu_time"]}
bad = 0
if d["format"] != "collscope-diff" or sorted(rows) != sorted(base) or sorted(rows) != sorted(new):
    print("FAIL: format %s, ranks %s, reports %s %s" % (d["format"], sorted(rows), sorted(base), sorted(new)))
    sys.exit(1)
for r, g in rows.items():
    if g["base_window_ns"] != base[r]["window_ns"] or g["new_window_ns"] != new[r]["window_ns"]:
        print("FAIL: rank %d windows %s %s" % (r, g["base_window_ns"], g["new_window_ns"]))
        bad = 1
    for p in ("compute", "comm_exposed", "comm_overlapped", "memory", "idle"):
        b, n, c = g["base_%s_share" % p], g["new_%s_share" % p], g["%s_change_points" % p]
        if abs(b - base[r][p + "_share"]) > 1e-6 or abs(n - new[r][p + "_share"]) > 1e-6 or abs(c - 100 * (n - b)) > 1e-3:
            print("FAIL: rank %d %s: %s -> %s (%s), reports %s -> %s" % (r, p, b, n, c, base[r][p + "_share"], new[r][p + "_share"]))
            bad = 1
    if g["base_compute_outlier"] != base[r]["compute_outlier"] or g["new_compute_outlier"] != new[r]["compute_outlier"]:
        print("FAIL: rank %d outlier flags" % r)
        bad = 1
changed = [r for r, g in sorted(rows.items()) if g["compute_change_out_of_line"]]
if changed != [5]:
    print("FAIL: ranks changed out of line %s, want [5]" % changed)
    bad = 1
print("ok: %d ranks, shares as the reports'; rank 5 compute %.1f -> %.1f %%" %
      (len(rows), 100 * rows[5]["base_compute_share"], 100 * rows[5]["new_compute_share"]))
sys.exit(bad)
PYEOF

# a run against itself
"$COLLSCOPE" diff "$T/slow.out" "$T/slow.out" > "$T/same.txt" || fail "diff of a run against itself failed"
grep -q "^  compute share changed alike on all ranks (median +0.0 points)$" "$T/same.txt" ||
  fail "a run against itself: the diff names a changed rank"
grep -q "^  compute share out of line: rank 5 above (both)$" "$T/same.txt" ||
  fail "a run against itself: rank 5 not out of line in both"

# CPU-only traces
"$B/bench/gen_trace" "$T/cpu.db" --ranks 4 --steps 10 > /dev/null || fail "gen_trace failed"
"$COLLSCOPE" diff "$T/cpu.db" "$T/cpu.db" > "$T/cpu.txt" || fail "diff of CPU-only traces failed"
grep -q "GPU time" "$T/cpu.txt" && fail "the diff of CPU-only traces has a GPU section"
expect_eq "CPU-only: gpu_time[] in the JSON diff" \
  "$("$COLLSCOPE" diff "$T/cpu.db" "$T/cpu.db" --format json | $PY -c 'import json,sys; print(json.load(sys.stdin)["gpu_time"])')" "[]"
pass
