#!/bin/sh
# The analysis on synthetic traces of known answers (bench/gen_trace, no
# MPI, deterministic): 8 ranks, 100 steps. A clean run has no verdict; a
# persistent straggler, a transient one (its window), a slow link (and the
# lateness of its receiver it explains is no straggler) and a slow
# collective (all ranks on time, transfer slow in a window) are found. Then
# the report formats (JSON parsed, JUnit XML parsed, Markdown tables), the
# --fail-on gates and their exit codes, and `collscope diff`.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
gen() { _n=$1; shift; "$GEN" "$T/$_n.db" --ranks 8 --steps 100 "$@" > /dev/null || fail "gen_trace $_n failed"; }
# verdicts NAME: "kind rank src dst comm first last cost_ns" per verdict
verdicts() {
  "$COLLSCOPE" report "$T/$1.db" --format json -o "$T/$1.json" || fail "$1: report failed"
  "$PY" -c 'import json,sys
for s in json.load(open(sys.argv[1]))["stragglers"]:
    print(s["kind"], s["rank"], s["src"], s["dst"], s["comm"], s["first_step"], s["last_step"], s["cost_ns"])' "$T/$1.json"
}
one() { # one NAME PATTERN: exactly one verdict, matching the extended regex
  _v=$(verdicts "$1")
  [ "$(echo "$_v" | grep -c .)" = 1 ] && echo "$_v" | grep -Eq "$2" || fail "$1: want one verdict like '$2', got [$_v]"
  echo "ok: $1: $_v"
}
gen clean
gen pers --persistent 3:5000
gen trans --transient 5:40-59:5000
gen link --slow-link 2:3:5000
gen coll --slow-coll 30-49:5000
v=$(verdicts clean); [ -z "$v" ] || fail "clean: verdicts [$v]"; echo "ok: clean: no verdict"
one pers '^persistent 3 -1 -1 0 1 99 (49|50|51)[0-9]{5}$'
one trans '^transient 5 -1 -1 0 40 59 (49|50|51)[0-9]{5}$'
one link '^slow_link 2 2 3 0 '
one coll '^slow_collective -1 -1 -1 1 30 49 (49|50|51)[0-9]{5}$'

# JSON: format, version and the documented keys (docs/report-json.md)
"$PY" - "$T/pers.json" <<'PYEOF' || fail "JSON report: keys missing"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "collscope-report" and d["version"] == 2, (d["format"], d["version"])
for k in ("trace", "processes", "spans", "ranks", "ops", "comms", "callsites", "analysis_version", "instances",
          "incomplete_instances", "p2p_messages", "clocks", "stragglers", "steps", "rank_stats", "tails", "notes", "gates"):
    assert k in d, k
s = d["stragglers"][0]
for k in ("kind", "rank", "src", "dst", "comm", "first_step", "last_step", "begin_ns", "end_ns", "lateness_ns",
          "cost_ns", "cost_share", "evidence"):
    assert k in s, k
for k in ("source", "count", "median_ns", "p90_ns", "whatif_median_ns", "list"):
    assert k in d["steps"], k
assert d["steps"]["source"] == "markers" and d["steps"]["count"] == 100
t = d["tails"][0]
for k in ("op", "comm", "bucket", "callsite", "count", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "slowest_common"):
    assert k in t, k
assert len(d["clocks"]) == 8 and all("offset_ns" in c and "residual_ns" in c for c in d["clocks"])
PYEOF
echo "ok: JSON report has the documented keys"

# gates: exit 3 when one fails, 0 when all hold, 2 for a bad spec
"$COLLSCOPE" report "$T/pers.db" --fail-on verdict > "$T/g1.txt"; expect_eq "verdict gate on a straggler: exit" $? 3
"$COLLSCOPE" report "$T/clean.db" --fail-on verdict,straggler=5 > "$T/g2.txt"; expect_eq "gates on a clean run: exit" $? 0
"$COLLSCOPE" report "$T/pers.db" --fail-on straggler=5 > "$T/g3.txt"; expect_eq "straggler=5 gate: exit" $? 3
"$COLLSCOPE" report "$T/pers.db" --fail-on straggler=500 > "$T/g4.txt"; expect_eq "straggler=500 gate: exit" $? 0
"$COLLSCOPE" report "$T/pers.db" --baseline "$T/clean.db" --fail-on step=10 > "$T/g5.txt"; expect_eq "step=10 gate against a clean baseline: exit" $? 3
"$COLLSCOPE" report "$T/clean.db" --baseline "$T/clean.db" --fail-on step=10,p99=20 > "$T/g6.txt"; expect_eq "step and p99 gates against itself: exit" $? 0
"$COLLSCOPE" report "$T/coll.db" --baseline "$T/clean.db" --fail-on p99=20 > "$T/g7.txt"; expect_eq "p99=20 gate on a slow collective: exit" $? 3
"$COLLSCOPE" report "$T/pers.db" --fail-on bogus=1 > "$T/g8.txt" 2>&1; expect_eq "unknown gate: exit" $? 2
"$COLLSCOPE" report "$T/pers.db" --fail-on step=10 > "$T/g9.txt" 2>&1; expect_eq "step gate without a baseline: exit" $? 2
grep -q 'FAIL *straggler>5%' "$T/g3.txt" || fail "the text report does not list the failed gate"

# JUnit: one test case per gate, the failed one with <failure>
"$COLLSCOPE" report "$T/pers.db" --baseline "$T/clean.db" --format junit -o "$T/j.xml" --fail-on verdict,straggler=500,step=10
expect_eq "junit report with a failed gate: exit" $? 3
"$PY" - "$T/j.xml" <<'PYEOF' || fail "JUnit XML: wrong"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
assert len(cases) == 3, [c.get("name") for c in cases]
failed = sorted(c.get("name") for c in cases if c.find("failure") is not None)
assert len(failed) == 2 and any("verdict" in f for f in failed) and any("step" in f for f in failed), failed
PYEOF
echo "ok: JUnit XML parses, one test case per gate, 2 failures"

# Markdown: its tables
"$COLLSCOPE" report "$T/pers.db" --format markdown -o "$T/r.md" || fail "markdown report failed"
grep -q '^|.*kind.*|' "$T/r.md" && grep -q '^|.*rank.*|' "$T/r.md" && grep -Eq '^\|[ :-]+\|' "$T/r.md" ||
  { cat "$T/r.md"; fail "markdown report has no tables"; }
grep -q 'persistent' "$T/r.md" || fail "markdown report does not show the straggler"
echo "ok: markdown report has its tables"

# diff: step time, stragglers (new), tails; text and JSON
"$COLLSCOPE" diff "$T/clean.db" "$T/pers.db" > "$T/d.txt" || fail "diff failed"
grep -qi 'step' "$T/d.txt" && grep -q 'persistent' "$T/d.txt" || { cat "$T/d.txt"; fail "diff text lacks step or straggler"; }
"$COLLSCOPE" diff "$T/clean.db" "$T/pers.db" --format json -o "$T/d.json" || fail "diff json failed"
"$PY" - "$T/d.json" <<'PYEOF' || fail "diff JSON: wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "collscope-diff" and d["version"] == 1
assert d["step"]["new_median_ns"] > d["step"]["base_median_ns"], d["step"]
new = [s for s in d["stragglers"] if s["status"] == "new"]
assert len(new) == 1 and new[0]["kind"] == "persistent" and new[0]["rank"] == 3, d["stragglers"]
assert d["tails"] and all("base_p99_ns" in t and "new_p99_ns" in t for t in d["tails"])
PYEOF
echo "ok: diff (text and JSON) shows the step time, the new straggler and the tails"

# a second analysis replaces the first one's results: nothing is kept twice
rows() { sqlite3 "$T/pers.db" "SELECT (SELECT count(*) FROM slowdown) || ' ' || (SELECT count(*) FROM stragglers)
  || ' ' || (SELECT count(*) FROM meta WHERE key LIKE 'slowdown%' OR key LIKE 'whatif%')"; }
r1=$(rows)
"$COLLSCOPE" analyze --force "$T/pers.db" > /dev/null 2>&1 || fail "second analysis failed"
r2=$(rows)
[ "$r1" = "$r2" ] && [ "${r1%% *}" -gt 0 ] || fail "re-analysis: slowdown, verdict and meta rows [$r1] became [$r2]"
echo "ok: re-analysis keeps one copy of each result ($r2)"

# slowdown attribution replays every pipeline stage but only the 16
# data-parallel replicas of largest own excess (dp 32 x pp 2 here): the
# straggler's replica (rank 5: replica 2) among them
"$B/bench/tui_gen" "$T/dp32.db" --ranks 64 --spans 64000 --straggler 5 > /dev/null || fail "tui_gen failed"
"$COLLSCOPE" report "$T/dp32.db" --format json -o "$T/dp32.json" || fail "report (dp 32) failed"
"$PY" - "$T/dp32.json" <<'PYEOF' || fail "slowdown groups of a 32-replica job: wrong"
import json, sys
s = json.load(open(sys.argv[1]))["slowdown"]
assert s["layout"].startswith("dp 32 x pp 2"), s["layout"]
names = [g["name"] for g in s["by_group"]]
dp = [n for n in names if n.startswith("dp replica ")]
assert len(dp) == 16 and "pp stage 0" in names and "pp stage 1" in names, names
assert "dp replica 2" in dp, dp
print("ok: 2 stages and 16 of 32 replicas replayed, the straggler's among them")
PYEOF
pass
