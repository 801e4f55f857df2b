#!/bin/sh
# A GPU trace whose CPU what-if replay deadlocks still gets its slowdown
# section, on the GPU graph (which does not replay the CPU), and says so;
# a trace with no GPU kernels whose replay deadlocks says why it has none;
# the what-if section of both says why the replay could not run, in the
# text, Markdown and JSON reports (no replay figure, no -100 % error).
# The trace: the simulator's 2-rank job (dp 2, rank 1's compute 1.8x
# slower) rewritten by tie_swap.py: in one step the two ranks call the
# last gradient allreduce and the world allreduce in opposite orders, back
# to back, each call's end equal to the next one's begin to the nanosecond
# (as in a trace rounded to microseconds), which the CPU's replay takes for
# a wait of each call for the other rank's.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
need_venv numpy
"$VPY" "$S/tests/gpusim/sim.py" "$T/gpu" --dp 2 --pp 1 --tp 1 --micro 2 --steps 4 --seed 1 --layers 1 \
  --buckets 2 --fault slow_worker --target 1 --factor 1.8 > "$T/sim.out" 2>&1 || { cat "$T/sim.out"; fail "sim.py"; }
"$VPY" "$S/tests/gpusim/tie_swap.py" "$T/gpu/traces" || fail "tie_swap.py rewrote no step"
# the same trace without its kernels (a CPU-only trace), before the check
# removes nothing: check.py imports JOB/traces
mkdir "$T/cpu"
for r in 0 1; do
  "$VPY" - "$T/gpu/traces/rank$r.json" "$T/cpu/rank$r.json" <<'PYEOF' || fail "strip kernels"
import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") not in ("kernel", "ac2g")]
json.dump(d, open(sys.argv[2], "w"))
PYEOF
done
"$VPY" "$S/tests/gpusim/check.py" --collscope "$COLLSCOPE" --keep --json "$T/check.json" "$T/gpu" > "$T/check.out" 2>&1
cat "$T/check.out"
db="$T/gpu/cs/trace.db"
[ -f "$db" ] || fail "no trace was imported"
note=$(q "$db" "SELECT value FROM meta WHERE key = 'whatif_note'")
case $note in
  *deadlocked*) echo "ok: the CPU's replay deadlocked ($note)" ;;
  *) fail "the rewritten trace no longer deadlocks the CPU's replay (whatif_note '$note'): the test checks nothing" ;;
esac
expect_eq "the slowdown's graph" "$(q "$db" "SELECT value FROM meta WHERE key = 'slowdown_graph'")" gpu
"$VPY" - "$T/check.json" <<'PYEOF' || fail "see above"
import json, sys
d = json.load(open(sys.argv[1]))
if d["errors"] or len(d["rows"]) != 1:
    sys.exit("FAIL: the job could not be checked: %s" % d["errors"])
r = d["rows"][0]
bad = []
if not r["right"]:
    bad.append("verdict %s %s, want slow_worker 1" % (r["verdict"], r["culprit"]))
if r["err"] is None or r["err"] > 0.05:
    bad.append("S %s against the truth's %.3f (want within 5 %%)" % (r["S"], r["S_true"]))
if not r["ideal_ok"]:
    bad.append("the ideal step is longer than the actual one")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
print("ok: slowdown on the GPU graph: S %.3f (truth %.3f), slow worker 1" % (r["S"], r["S_true"]))
PYEOF
"$COLLSCOPE" report "$T/gpu/cs" > "$T/gpu.txt" 2>&1 || fail "report of the GPU trace"
check "the report says where the slowdown came from" grep -q "the slowdown is on the GPU graph" "$T/gpu.txt"
"$COLLSCOPE" import -o "$T/cpu.cs" "$T/cpu" > "$T/cpu.imp" 2>&1 || { cat "$T/cpu.imp"; fail "import of the CPU-only trace"; }
"$COLLSCOPE" report "$T/cpu.cs" > "$T/cpu.txt" 2>&1 || fail "report of the CPU-only trace"
check "the CPU-only trace's replay deadlocks too" grep -q "replay deadlocked" "$T/cpu.txt"
check "its report says why it has no slowdown" grep -q "no slowdown attribution: the CPU's replay deadlocked and the trace has no GPU graph" "$T/cpu.txt"
expect_eq "its slowdown note" "$(q "$T/cpu.cs/trace.db" "SELECT count(*) FROM meta WHERE key = 'slowdown_note' AND value LIKE '%deadlocked%'")" 1
# the what-if section of both says the replay could not run and why (the
# note the analysis stores), in every format: no figure of a replay that
# did not end ("replayed with measured transfers - (error -100.00 %)")
for n in gpu cpu; do
  cs="$T/$n.cs"
  [ "$n" = gpu ] && cs="$T/gpu/cs"
  note=$(q "$cs/trace.db" "SELECT value FROM meta WHERE key = 'whatif_note'")
  "$COLLSCOPE" report "$cs" --full > "$T/$n.full" 2>&1 || fail "$n: report --full"
  "$COLLSCOPE" report "$cs" --format markdown > "$T/$n.md" 2>&1 || fail "$n: report --format markdown"
  "$COLLSCOPE" report "$cs" --format json -o "$T/$n.json" || fail "$n: report --format json"
  grep -A1 '^What-if replay' "$T/$n.full" | grep -qxF "  could not run: $note" ||
    fail "$n: the text's what-if section does not say why the replay could not run: $(grep -A1 '^What-if replay' "$T/$n.full")"
  grep -A2 '^### What-if replay' "$T/$n.md" | grep -qxF "Could not run: $note." ||
    fail "$n: the Markdown's what-if section does not say why the replay could not run: $(grep -A2 '^### What-if replay' "$T/$n.md")"
  grep -n -- '-100' "$T/$n.full" "$T/$n.md" && fail "$n: a -100 figure in the report (above)"
  "$VPY" - "$T/$n.json" "$note" << 'PYEOF' || fail "$n: the JSON's what-if (above)"
import json, sys
w = json.load(open(sys.argv[1]))["whatif"]
want = {"replayed": False, "replay_step_ns": None, "replay_error": None, "model_step_ns": None,
        "model_error": None, "note": sys.argv[2]}
got = {k: w.get(k) for k in want}
if got != want:
    sys.exit("FAIL: whatif %s, want %s" % (got, want))
print("ok: the JSON's what-if: not replayed, no error, the note")
PYEOF
  echo "ok: $n: the what-if says the replay could not run ($note)"
done
pass
