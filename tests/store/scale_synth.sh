#!/bin/sh
# A job kept as per-rank stores and an index (no merged trace.db) reads as
# its merged trace does. A 256-rank synthetic job (bench/gen_trace, a
# persistent straggler on rank 77) is written merged (one .db) and as rank
# stores with DIR/index.db (--rank-stores): `report --format json` gives
# the same document but for the trace's path (verdicts, culprit, steps and
# every figure), the text report and `diff` against the merged one agree,
# and the Chrome export is the same file (but the trace's path). The analysis of the unmerged
# form lands in DIR/results.db and the next report takes it from there
# (results.db not rewritten); `collscope merge` makes the same job one
# trace.db with the same report. Then one rank store is removed and another
# overwritten with garbage: report names both files (stderr and the
# report's notes), analyses the other 254 ranks (their spans; the
# analysis names ranks 3 and 200 missing) and exits 1; an index row naming
# a file outside the job's folder is refused by name.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
args="--ranks 256 --steps 12 --persistent 77:3000 --seed 5"
"$GEN" "$T/merged.db" $args > /dev/null || fail "gen_trace (merged) failed"
"$GEN" "$T/job" --rank-stores $args > /dev/null || fail "gen_trace --rank-stores failed"
n=$(ls "$T/job/ranks" | grep -c '^rank-.*\.db$')
expect_eq "rank stores written" "$n" 256
[ ! -e "$T/job/trace.db" ] || fail "a merged trace.db was written"
expect_eq "index lists every rank store" "$(q "$T/job/index.db" 'SELECT count(*), count(DISTINCT rank), sum(size > 0) FROM rank_files')" "256|256|256"
expect_eq "index holds the communicator members" "$(q "$T/job/index.db" 'SELECT count(*) FROM comms WHERE id = 1')" 256

"$COLLSCOPE" report "$T/merged.db" --format json -o "$T/merged.json" || fail "report (merged) failed"
"$COLLSCOPE" report "$T/job" --format json -o "$T/job.json" 2> "$T/job.err" || { cat "$T/job.err"; fail "report (unmerged) failed"; }
[ -s "$T/job/results.db" ] || fail "no DIR/results.db after the report"
"$PY" - "$T/merged.json" "$T/job.json" <<'PYEOF' || fail "JSON reports differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("trace")
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print("differs:", k, str(a.get(k))[:300], "|", str(b.get(k))[:300])
    sys.exit(1)
v = a["stragglers"]
if not v or v[0]["rank"] != 77 or v[0]["kind"] != "persistent":
    sys.exit("want a persistent verdict on rank 77 first: %s" % [(s["kind"], s["rank"]) for s in v])
if a["processes"] != 256:
    sys.exit("processes %s, want 256" % a["processes"])
print("ok: identical JSON reports, %d verdicts, first %s on rank %d" % (len(v), v[0]["kind"], v[0]["rank"]))
PYEOF
# analysed again (--force), the merged trace reports the same (each
# stored table is cleared first, the slowdown rows too)
"$COLLSCOPE" analyze --force "$T/merged.db" 2> /dev/null || fail "analyze --force (merged) failed"
"$COLLSCOPE" report "$T/merged.db" --format json -o "$T/merged2.json" || fail "report (merged, again) failed"
"$PY" - "$T/merged2.json" "$T/job.json" <<'PYEOF' || fail "the merged trace reports differently once analysed again"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop("trace"); b.pop("trace")
print("slowdown rows:", len(a["slowdown"]["by_rank"]), len(b["slowdown"]["by_rank"]))
sys.exit(a != b)
PYEOF
echo "ok: analyze --force leaves the same report"
"$COLLSCOPE" report "$T/merged.db" > "$T/merged.txt" || fail "text report (merged) failed"
before=$(stat -c %Y.%s "$T/job/results.db")
sleep 1
"$COLLSCOPE" report "$T/job" > "$T/job.txt" || fail "text report (unmerged) failed"
expect_eq "results.db reused, not rewritten" "$(stat -c %Y.%s "$T/job/results.db")" "$before"
sed 's/merged\.db//; s/job\/index\.db//' "$T/merged.txt" | sed "s|$T/||g" > "$T/a.txt"
sed 's/merged\.db//; s/job\/index\.db//' "$T/job.txt" | sed "s|$T/||g" > "$T/b.txt"
diff "$T/a.txt" "$T/b.txt" > "$T/txt.diff" || { head -20 "$T/txt.diff"; fail "text reports differ"; }
echo "ok: text reports identical ($(wc -l < "$T/a.txt") lines)"
"$COLLSCOPE" diff "$T/merged.db" "$T/job" --format json -o "$T/diff.json" || fail "diff merged vs unmerged failed"
"$PY" - "$T/diff.json" <<'PYEOF' || fail "diff of the two forms is not empty"
import json, sys
d = json.load(open(sys.argv[1]))
if d["step"]["base_median_ns"] != d["step"]["new_median_ns"]:
    sys.exit("step medians differ: %s" % d["step"])
for s in d["stragglers"]:
    if s["status"] != "both" or s["base_cost_ns"] != s["new_cost_ns"]:
        sys.exit("verdicts differ: %s" % s)
for t in d["tails"]:
    if t["base_p99_ns"] != t["new_p99_ns"]:
        sys.exit("tails differ: %s" % t)
print("ok: diff finds the same step, %d verdicts and %d tails in both" % (len(d["stragglers"]), len(d["tails"])))
PYEOF
"$COLLSCOPE" export "$T/merged.db" --format chrome -o "$T/merged.chrome.json" || fail "export (merged) failed"
"$COLLSCOPE" export "$T/job" --format chrome -o "$T/job.chrome.json" || fail "export (unmerged) failed"
# the same bytes but the trace's path in otherData
sed 's|"trace": *"[^"]*"||' "$T/merged.chrome.json" > "$T/a.chrome"
sed 's|"trace": *"[^"]*"||' "$T/job.chrome.json" > "$T/b.chrome"
cmp -s "$T/a.chrome" "$T/b.chrome" || fail "Chrome exports differ"
echo "ok: Chrome exports identical ($(wc -c < "$T/job.chrome.json") bytes)"

# collscope merge: the same job as one trace.db
cp -a "$T/job" "$T/job2"
"$COLLSCOPE" merge "$T/job2" > /dev/null || fail "merge failed"
[ -s "$T/job2/trace.db" ] && [ ! -e "$T/job2/index.db" ] && [ ! -e "$T/job2/results.db" ] ||
  fail "merge left no trace.db, or left index.db or results.db"
"$COLLSCOPE" report "$T/job2" --format json -o "$T/job2.json" || fail "report of the merged job failed"
"$PY" - "$T/merged.json" "$T/job2.json" <<'PYEOF' || fail "report of collscope merge's trace differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop("trace"); b.pop("trace")
sys.exit(a != b)
PYEOF
echo "ok: collscope merge gives the same report"
"$COLLSCOPE" merge "$T/merged.db" 2> "$T/merge.err"
expect_eq "merge of no job index: exit status" "$?" 1
grep -q 'no job index' "$T/merge.err" || fail "merge of no job index: $(cat "$T/merge.err")"

# faults: a rank store missing, another corrupt
rm "$T/job/ranks/rank-000003-1003.db"
head -c 200000 /dev/urandom > "$T/job/ranks/rank-000200-1200.db"
"$COLLSCOPE" report "$T/job" --format json -o "$T/faults.json" 2> "$T/faults.err"
rc=$?
cat "$T/faults.err"
expect_eq "report exit status with rank stores left out" "$rc" 1
grep -q 'rank-000003-1003.db (missing)' "$T/faults.err" || fail "the missing rank store is not named"
grep -q 'rank-000200-1200.db' "$T/faults.err" || fail "the corrupt rank store is not named"
"$PY" - "$T/faults.json" "$(q "$T/merged.db" 'SELECT count(*) FROM span')" <<'PYEOF' || fail "the report of the other ranks is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
if d["processes"] != 254:
    sys.exit("processes %s, want 254" % d["processes"])
notes = json.dumps(d)
if "rank-000003-1003.db" not in notes or "rank-000200-1200.db" not in notes:
    sys.exit("the report does not name the rank stores left out")
ranks = [r["rank"] for r in d["ranks"]]
if len(ranks) != 254 or 3 in ranks or 200 in ranks:
    sys.exit("ranks in the report: %d (3 in: %s, 200 in: %s)" % (len(ranks), 3 in ranks, 200 in ranks))
if d["spans"] * 256 != int(sys.argv[2]) * 254:
    sys.exit("spans %d, want 254/256 of %s" % (d["spans"], sys.argv[2]))
if not any("ranks missing from the trace (2 of 256): 3,200" in n for n in d["notes"]):
    sys.exit("the analysis does not name ranks 3 and 200 as missing: %s" % d["notes"])
print("ok: 254 ranks analysed, both files named in the report, ranks 3 and 200 named missing")
PYEOF
# an index that names a file outside the job's folder: refused by name
sqlite3 "$T/job/index.db" "UPDATE rank_files SET file = '../merged.db' WHERE rank = 10" || fail "sqlite3"
"$COLLSCOPE" report "$T/job" > /dev/null 2> "$T/planted.err"
expect_eq "report exit status with a planted index row" "$?" 1
grep -q '\.\./merged.db (not a file inside the job' "$T/planted.err" || fail "the planted name is not refused: $(cat "$T/planted.err")"
pass
