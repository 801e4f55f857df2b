#!/bin/sh
# The GPU time per rank (analyzer/analysis/an_gpu.c, table gpu_time) of
# imported Kineto traces (tests/import/gpu_gen.py: several streams, compute
# kernels overlapping NCCL allreduces, copies and sets, idle gaps), checked
# against the generator's own breakdown (every rank's shares within 0.5
# point; each step's times exactly; gpu_breakdown_hta.sh checks the same
# traces against HTA):
#   - 8 ranks, no slow rank: the breakdown, no compute outlier, the text
#     and Markdown tables, the exposed-comm gate (exit 3 past its limit);
#     CUPTI kernel records added on the NCCL calls' streams within their
#     GPU times (NCCL's own kernels) change nothing; on another stream
#     they are compute;
#   - 16 ranks, rank 5 computing 2x slower: the breakdown, and rank 5 alone
#     named as the compute-share outlier (JSON, text);
#   - 64 ranks, rank 17 slower: the breakdown and the outlier;
#   - a CPU-only MPI trace (bench/gen_trace): no GPU rows, and the report
#     says "no GPU activity in this trace".
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
GEN="$S/tests/import/gpu_gen.py"

# case_run NAME RANKS SLOW: generate, import, report as JSON
case_run() {
  check "generate $1" $PY "$GEN" "$T/$1" --ranks "$2" --steps 4 --slow-rank "$3" --truth "$T/$1.truth"
  "$COLLSCOPE" import -o "$T/$1.out" "$T/$1" > "$T/$1.imp" 2>&1 || { cat "$T/$1.imp"; fail "$1: import failed"; }
  "$COLLSCOPE" report "$T/$1.out" --format json -o "$T/$1.json" || fail "$1: report --format json failed"
}

# check_truth NAME: every rank's shares against the generator's (0.5 point),
# every step's times (gpu_time rows of step >= 0) exactly, and the ranks
# flagged as compute outliers, printed
check_truth() {
  q "$T/$1.out/trace.db" "SELECT rank, step, window_ns, compute_ns, comm_exposed_ns, comm_overlapped_ns, memory_ns,
                          idle_ns FROM gpu_time WHERE step >= 0 ORDER BY rank, step" > "$T/$1.steps"
  $PY - "$T/$1.json" "$T/$1.truth" "$T/$1.steps" << 'PYEOF' || fail "$1: collscope and the generator's truth disagree (above)"
import json, sys
rep = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
steps = {}
for line in open(sys.argv[3]):
    v = [int(x) for x in line.split("|")]
    steps[(v[0], v[1])] = v[2:]
rows = {g["rank"]: g for g in rep["gpu_time"]}
bad = 0
if sorted(rows) != sorted(int(r) for r in truth["truth"]):
    print("FAIL: ranks in gpu_time %s, the generator's %s" % (sorted(rows), sorted(truth["truth"])))
    sys.exit(1)
worst = 0.0
for r, t in sorted(truth["truth"].items(), key=lambda x: int(x[0])):
    g = rows[int(r)]
    if abs(g["window_ns"] - t["window"]) > 0.005 * t["window"]:
        print("FAIL: rank %s window %d, truth %d" % (r, g["window_ns"], t["window"]))
        bad = 1
    parts = ("compute", "comm_exposed", "comm_overlapped", "memory", "idle")
    if sum(g[p + "_ns"] for p in parts if p != "comm_overlapped") != g["window_ns"]:
        print("FAIL: rank %s: compute + comm_exposed + memory + idle != window" % r)
        bad = 1
    for p in parts:
        want = 100.0 * t[p] / t["window"]
        got = 100.0 * g[p + "_share"]
        worst = max(worst, abs(got - want))
        if abs(got - want) > 0.5:
            print("FAIL: rank %s %s %.2f %%, truth %.2f %%" % (r, p, got, want))
            bad = 1
    # each step: exactly the generator's (its window clipped to the rank's GPU window)
    for k, ts in enumerate(t["steps"]):
        want = [ts[p] for p in ("window", "compute", "comm_exposed", "comm_overlapped", "memory", "idle")]
        if steps.get((int(r), k)) != want:
            print("FAIL: rank %s step %d: %s, truth %s" % (r, k, steps.get((int(r), k)), want))
            bad = 1
if len(steps) != sum(len(t["steps"]) for t in truth["truth"].values()):
    print("FAIL: %d step rows, the generator's %d" % (len(steps), sum(len(t["steps"]) for t in truth["truth"].values())))
    bad = 1
print("ok: %d ranks within %.3f points of the truth, %d step rows exact" % (len(rows), worst, len(steps)))
print("outliers:", " ".join(str(g["rank"]) for g in rep["gpu_time"] if g["compute_outlier"]) or "none")
sys.exit(bad)
PYEOF
}

# ---- 8 ranks, none slow ----
case_run even 8 -1
check_truth even > "$T/even.chk"
cat "$T/even.chk"
expect_eq "8 ranks, none slow: compute outliers" "$(sed -n 's/^outliers: //p' "$T/even.chk")" none
"$COLLSCOPE" report "$T/even.out" > "$T/even.txt" || fail "report (text) failed"
grep -q "^GPU time per rank (us, and % of the rank's GPU window" "$T/even.txt" || fail "no GPU time table in the text report"
expect_eq "text table: a row per rank" "$(sed -n '/^GPU time per rank/,/^$/p' "$T/even.txt" | grep -cE '^ +[0-9]+ +[0-9.]+ ')" 8
grep -q "compute share: no rank out of line" "$T/even.txt" || fail "the text report does not say no rank is out of line"
"$COLLSCOPE" report "$T/even.out" --format markdown > "$T/even.md" || fail "report (markdown) failed"
grep -q '^| rank | window | compute | comm exposed | comm overlapped | memory | idle |$' "$T/even.md" ||
  fail "no GPU time table in the Markdown report"
expect_eq "Markdown table: a row per rank" "$(grep -cE '^\| [0-9]+ \| [0-9.]+ \| [0-9.]+ \([0-9.]+ %\) \|' "$T/even.md")" 8
# the gate: the largest exposed share, and limits each side of it
max=$($PY -c 'import json,sys; print(round(max(g["comm_exposed_share"] for g in json.load(open(sys.argv[1]))["gpu_time"]) * 100, 2))' "$T/even.json")
lo=$($PY -c "print(int($max) - 1)")
hi=$($PY -c "print(int($max) + 1)")
"$COLLSCOPE" report "$T/even.out" --fail-on "exposed-comm=$hi" > /dev/null
expect_eq "exposed-comm=$hi passes (largest $max %)" $? 0
"$COLLSCOPE" report "$T/even.out" --fail-on "exposed-comm=$lo" --format junit > "$T/gate.xml"
expect_eq "exposed-comm=$lo fails (exit 3)" $? 3
grep -q 'name="exposed-comm&gt;'"$lo"'%"' "$T/gate.xml" || fail "no JUnit test case for the exposed-comm gate"
grep -q '<failure message="largest exposed communication: rank ' "$T/gate.xml" || fail "the JUnit failure does not name the rank"

# CUPTI records of NCCL's own kernels (as a traced job on a GPU has them:
# kernel records on the NCCL call's stream, within its GPU time) are
# communication, not compute: the breakdown stays as it was; the same
# kernel on another stream is compute
DB="$T/even.out/trace.db"
q "$DB" "SELECT rank, step, window_ns, compute_ns, comm_exposed_ns, comm_overlapped_ns, memory_ns, idle_ns
         FROM gpu_time ORDER BY rank, step" > "$T/before.txt"
q "$DB" "INSERT INTO gpu_activity(rank, kind, name, stream, corr, begin_ns, end_ns, bytes, device)
         SELECT s.rank, 'kernel', 77, s.stream, s.id, s.gpu_begin_ns, s.gpu_end_ns, 0, 0
         FROM span s WHERE s.gpu_begin_ns IS NOT NULL"
check "analyze with CUPTI records of the NCCL kernels" "$COLLSCOPE" analyze --force "$T/even.out"
q "$DB" "SELECT rank, step, window_ns, compute_ns, comm_exposed_ns, comm_overlapped_ns, memory_ns, idle_ns
         FROM gpu_time ORDER BY rank, step" > "$T/after.txt"
cmp -s "$T/before.txt" "$T/after.txt" || { diff "$T/before.txt" "$T/after.txt" | head; fail "CUPTI records of NCCL kernels changed the GPU time"; }
echo "ok: CUPTI records of NCCL's kernels count as communication"
q "$DB" "UPDATE gpu_activity SET stream = 999 WHERE rank = 0"
check "analyze with a compute kernel beside each NCCL call of rank 0" "$COLLSCOPE" analyze --force "$T/even.out"
expect_eq "rank 0: no exposed communication left" "$(q "$DB" "SELECT comm_exposed_ns FROM gpu_time WHERE rank = 0 AND step = -1")" 0
expect_eq "rank 1: unchanged" "$(q "$DB" "SELECT compute_ns FROM gpu_time WHERE rank = 1 AND step = -1")" \
  "$(sed -n 's/^1|-1|[0-9]*|\([0-9]*\)|.*/\1/p' "$T/before.txt")"

# ---- 16 ranks, rank 5 computing 2x slower ----
case_run slow 16 5
check_truth slow > "$T/slow.chk"
cat "$T/slow.chk"
expect_eq "16 ranks, rank 5 slow: compute outliers" "$(sed -n 's/^outliers: //p' "$T/slow.chk")" 5
"$COLLSCOPE" report "$T/slow.out" > "$T/slow.txt" || fail "report (text) failed"
grep -q "compute share out of line: rank 5 " "$T/slow.txt" || fail "the text report does not name rank 5"

# ---- 64 ranks, rank 17 slower ----
case_run big 64 17
check_truth big > "$T/big.chk"
cat "$T/big.chk"
expect_eq "64 ranks, rank 17 slow: compute outliers" "$(sed -n 's/^outliers: //p' "$T/big.chk")" 17

# ---- a CPU-only MPI trace ----
"$B/bench/gen_trace" "$T/cpu.db" --ranks 4 --steps 10 > /dev/null || fail "gen_trace failed"
"$COLLSCOPE" report "$T/cpu.db" --format json -o "$T/cpu.json" || fail "report of the CPU trace failed"
expect_eq "CPU-only trace: GPU rows" "$($PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["gpu_time"]))' "$T/cpu.json")" 0
expect_eq "CPU-only trace: gpu_time rows in the store" "$(q "$T/cpu.db" "SELECT count(*) FROM gpu_time")" 0
"$COLLSCOPE" report "$T/cpu.db" | grep -q "^GPU time per rank: no GPU activity in this trace$" ||
  fail "the text report of a CPU-only trace does not say there is no GPU activity"
"$COLLSCOPE" report "$T/cpu.db" --format markdown | grep -q "^No GPU activity in this trace.$" ||
  fail "the Markdown report of a CPU-only trace does not say there is no GPU activity"
"$COLLSCOPE" report "$T/cpu.db" --fail-on exposed-comm=1 > /dev/null || fail "exposed-comm gate failed on a trace without GPU activity"
pass
