#!/bin/sh
# An imported kernel's launch (its CUDA runtime call, found by correlation
# id; table span_launch) orders a compute kernel after the receive its
# rank's CPU launched before it (docs/analysis.md "Slowdown on the GPU"):
# a slow first stage of two never waits for its gradients (they come long
# before its backwards run), so without that edge the ideal, with the
# stage fast, ran each backward before its gradient came and S came out
# over the simulator's truth (the interleaved job below 13 % over, the
# 1F1B one 6.5 % over). Two 4-rank jobs of the reference simulator
# (tests/gpusim/sim.py: dp 2 x pp 2, stage 0 1.89x slower): every compute
# kernel's launch stored (lead from its runtime call's begin at least the
# simulator's launch latency, 6 us), launch edges in the graph, the
# verdict right and S within 5 % of the truth.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
need_venv numpy
SIM="$S/tests/gpusim/sim.py"
for sched in interleaved 1f1b; do
  micro=4
  [ "$sched" = 1f1b ] && micro=8
  "$VPY" "$SIM" "$T/$sched" --dp 2 --pp 2 --tp 1 --schedule $sched --micro $micro --steps 4 --seed 1050 \
    --fault slow_stage --target 0 --factor 1.89 > "$T/$sched.sim" 2>&1 || { cat "$T/$sched.sim"; fail "sim.py $sched"; }
done
"$VPY" "$S/tests/gpusim/check.py" --collscope "$COLLSCOPE" --keep --json "$T/check.json" "$T/interleaved" "$T/1f1b" \
  > "$T/check.out" 2>&1
cat "$T/check.out"
for sched in interleaved 1f1b; do
  db="$T/$sched/cs/trace.db"
  [ -f "$db" ] || fail "$sched: no store ($db)"
  kern=$(q "$db" "SELECT count(*) FROM span s JOIN ops o ON o.id = s.op WHERE o.name = 'compute_gpu'")
  [ "$kern" -gt 0 ] || fail "$sched: no compute kernels imported"
  expect_eq "$sched: every compute kernel's launch stored" "$(q "$db" "SELECT count(*) FROM span_launch")" "$kern"
  expect_eq "$sched: launches 6 us or more before their kernels" \
    "$(q "$db" "SELECT count(*) FROM span_launch WHERE lead_ns < 6000")" 0
  nl=$(q "$db" "SELECT value FROM meta WHERE key = 'slowdown_gpu_deps_launch'")
  [ "${nl:-0}" -gt 0 ] || fail "$sched: no launch-order edges in the GPU graph (meta slowdown_gpu_deps_launch '$nl')"
  echo "ok: $sched: $nl launch-order edges"
done
"$VPY" - "$T/check.json" <<'PYEOF' || fail "see above"
import json, os, sys
d = json.load(open(sys.argv[1]))
bad = ["%s: could not be checked" % e for e in d["errors"]]
if len(d["rows"]) != 2:
    bad.append("%d jobs checked, want 2" % len(d["rows"]))
for r in d["rows"]:
    name = os.path.basename(os.path.normpath(r["job"]))
    if not r["right"]:
        bad.append("%s: verdict %s %s, want %s %s" % (name, r["verdict"], r["culprit"], r["exp_verdict"], r["exp_culprit"]))
    if not r["ideal_ok"]:
        bad.append("%s: the ideal step is longer than the actual one" % name)
    if r["err"] is None or r["err"] > 0.05:
        bad.append("%s: S %s against the truth's %.3f (want within 5 %%)" % (name, r["S"], r["S_true"]))
    else:
        print("ok: %s: S %.3f, truth %.3f" % (name, r["S"], r["S_true"]))
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PYEOF
pass
