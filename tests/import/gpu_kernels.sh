#!/bin/sh
# The top GPU kernels of each rank (analyzer/analysis/an_kernels.c, table
# kernel_stats; the names from the importer, tables kernel_names and
# span_kernel) of generated Kineto traces (tests/import/gpu_gen.py, 8 ranks,
# 10 steps, rank 5 computing 2x slower), checked against the trace files
# themselves: per rank and name (kernels other than NCCL's: compute; copies
# and sets: memory) the count, the total, the median and the p99 (nearest
# rank) of the durations, exactly; rank 5's compute kernels about twice the
# others'; the text report's table. A store of schema version 4 (no kernel
# names) is upgraded and analysed: no kernel rows, no table in the text.
# A CPU-only trace has no kernel rows.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}

check "generate" $PY "$S/tests/import/gpu_gen.py" "$T/slow" --ranks 8 --steps 10 --slow-rank 5
"$COLLSCOPE" import -o "$T/slow.out" "$T/slow" > "$T/imp.log" 2>&1 || { cat "$T/imp.log"; fail "import failed"; }
"$COLLSCOPE" report "$T/slow.out" --format json -o "$T/slow.json" || fail "report --format json failed"
expect_eq "kernel names stored" "$(q "$T/slow.out/trace.db" "SELECT count(*) FROM kernel_names")" 7

$PY - "$T/slow.json" "$T/slow" << 'PYEOF' || fail "the kernel statistics and the trace files disagree (above)"
import json, math, os, sys
rep = json.load(open(sys.argv[1]))
got = {(k["rank"], k["name"]): k for k in rep["kernels"]}
want = {}
for f in os.listdir(sys.argv[2]):
    d = json.load(open(os.path.join(sys.argv[2], f)))
    r = d["distributedInfo"]["rank"]
    by = {}
    for e in d["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        if e["name"].startswith("nccl"):
            continue
        cat = "compute" if e["cat"] == "kernel" else "memory"
        by.setdefault(e["name"], (cat, []))[1].append(int(round(e["dur"] * 1000)))
    for name, (cat, durs) in by.items():
        durs.sort()
        n = len(durs)
        q = lambda p: durs[max(1, min(n, math.ceil(p * n - 1e-9))) - 1]
        want[(r, name)] = {"category": cat, "count": n, "total_ns": sum(durs), "median_ns": q(0.5), "p99_ns": q(0.99)}
bad = 0
if sorted(got) != sorted(want):
    print("FAIL: kernels %s, the files' %s" % (sorted(set(got) ^ set(want))[:5], len(want)))
    sys.exit(1)
for key, w in sorted(want.items()):
    g = got[key]
    for f in w:
        if g[f] != w[f]:
            print("FAIL: rank %d %s %s: %s, the files' %s" % (key[0], key[1], f, g[f], w[f]))
            bad = 1
# each rank's rows: the largest total first
for r in set(k[0] for k in got):
    tot = [k["total_ns"] for k in rep["kernels"] if k["rank"] == r]
    if tot != sorted(tot, reverse=True):
        print("FAIL: rank %d rows not by total" % r)
        bad = 1
comp = {r: sum(w["total_ns"] for (rr, _), w in want.items() if rr == r and w["category"] == "compute") for r in range(8)}
others = sorted(v for r, v in comp.items() if r != 5)
ratio = comp[5] / others[len(others) // 2]
if not 1.6 < ratio < 2.4:
    print("FAIL: rank 5's compute kernels %.2f x the others' median" % ratio)
    bad = 1
print("ok: %d (rank, kernel) rows exact; rank 5 computes %.2f x the median rank" % (len(want), ratio))
sys.exit(bad)
PYEOF

"$COLLSCOPE" report "$T/slow.out" > "$T/slow.txt" || fail "report (text) failed"
grep -q "^Top GPU kernels per rank (by total GPU time, 5 of each" "$T/slow.txt" || fail "no kernel table in the text report"
expect_eq "text: 5 rows per rank" \
  "$(sed -n '/^Top GPU kernels per rank/,/^$/p' "$T/slow.txt" | grep -cE '^ +[0-9]+ (compute|memory) ')" 40
sed -n '/^Top GPU kernels per rank/,/^$/p' "$T/slow.txt" | grep -E '^ +5 compute ' | head -n 2

# a store of schema version 4: upgraded, analysed, no kernel rows
cp -r "$T/slow.out" "$T/old.out"
q "$T/old.out/trace.db" "DROP TABLE span_kernel; DROP TABLE kernel_names; DROP TABLE IF EXISTS kernel_stats;
                         UPDATE meta SET value = '4' WHERE key = 'schema_version'"
check "analyze a version 4 store" "$COLLSCOPE" analyze --force "$T/old.out"
expect_eq "upgraded to version 5" "$(q "$T/old.out/trace.db" "SELECT value FROM meta WHERE key = 'schema_version'")" 7
expect_eq "upgraded: kernel names" "$(q "$T/old.out/trace.db" "SELECT count(*) FROM kernel_names")" 0
expect_eq "upgraded: kernel rows" "$(q "$T/old.out/trace.db" "SELECT count(*) FROM kernel_stats")" 0
"$COLLSCOPE" report "$T/old.out" | grep -q "^Top GPU kernels" && fail "a kernel table without kernel names"

# a CPU-only trace
"$B/bench/gen_trace" "$T/cpu.db" --ranks 4 --steps 10 > /dev/null || fail "gen_trace failed"
expect_eq "CPU-only trace: kernels[]" \
  "$("$COLLSCOPE" report "$T/cpu.db" --format json | $PY -c 'import json,sys; print(json.load(sys.stdin)["kernels"])')" "[]"
pass
