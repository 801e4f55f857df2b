#!/bin/sh
# The cost model on a synthetic trace of known costs (bench/gen_trace
# --cost, no MPI, deterministic): 8 ranks, 100 steps, allreduces of 1 KiB
# to 1 MiB whose transfer is exactly alpha + bytes x beta (alpha 50 us,
# beta 0.5 ns per byte), plus each rank's exit spread of 0-2 us (mean 1 us,
# which the model rightly counts in alpha). The fit must give back alpha
# within 5 % and beta within 2 %, with R2 > 0.99 reported; the barrier (one
# size only) is an alpha-only model that says so; the replay with the
# models reproduces the step time within 1 %.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/cost.db" --ranks 8 --steps 100 --jitter 0 --cost 50000:500 > /dev/null || fail "gen_trace failed"
"$COLLSCOPE" report "$T/cost.db" --format json -o "$T/cost.json" || fail "report failed"
"$PY" - "$T/cost.json" <<'PYEOF' || fail "cost model not recovered"
import json, sys
d = json.load(open(sys.argv[1]))
m = {x["op"]: x for x in d["cost_models"]}
a = m["MPI_Allreduce"]
print("allreduce: alpha %.1f ns, beta %.4f ns/B, R2 %.4f, points %d, sizes %d-%d, %s" % (
    a["alpha_ns"], a["beta_ns_per_byte"], a["r2"], a["points"], a["min_bytes"], a["max_bytes"], a["note"]))
assert a["fitted"] and abs(a["alpha_ns"] - 50000) <= 0.05 * 50000, a
assert abs(a["beta_ns_per_byte"] - 0.5) <= 0.02 * 0.5, a
assert a["r2"] > 0.99 and a["points"] == 200 and a["min_bytes"] == 1024 and a["max_bytes"] == 1 << 20, a
b = m["MPI_Barrier"]
print("barrier: alpha %.1f ns, fitted %s, %s" % (b["alpha_ns"], b["fitted"], b["note"]))
assert not b["fitted"] and b["beta_ns_per_byte"] is None and b["r2"] is None and "one size only" in b["note"], b
w = d["whatif"]
print("replay: measured %d, modelled %d, error %.4f" % (w["measured_step_ns"], w["model_step_ns"], w["model_error"]))
assert w["replayed"] and w["replay_error"] < 1e-6 and w["model_error"] < 0.01, w
PYEOF
"$COLLSCOPE" report "$T/cost.db" > "$T/cost.txt" || fail "text report failed"
grep -q '^Cost models' "$T/cost.txt" && grep -q 'MPI_Allreduce on MPI_COMM_WORLD' "$T/cost.txt" && grep -q 'replay error' "$T/cost.txt" ||
  { cat "$T/cost.txt"; fail "text report lacks the cost models or the replay"; }
echo "ok: alpha, beta and R2 recovered; degenerate model stated; replay within 1 %"
pass
