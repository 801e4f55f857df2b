#!/bin/sh
# The loop of estimate and measurement closed on the example trainer, 4
# ranks, Open MPI, in the case where fusion truly wins: 64 small blocking
# allreduces a step (latency-bound). A traced run (BEFORE), its fusion
# proposal (blocking calls: the program makes the buckets itself, apply mode
# fuses nonblocking calls only), the same job with the proposal's number of
# buckets (AFTER), and `collscope check-estimate BEFORE AFTER`:
#  - the proposal rests on the model it names and gains 5 % or more;
#  - check-estimate's figures are the traces' own: both step counts, the
#    measured gain is the difference of the median step times (markers),
#    the error |pred - meas| / meas, the JSON and text agree;
#  - it confirms only where the step time fell by 5 % or more, and here the
#    median step does fall (the program's own "step time ms" says so too).
# Whether the prediction falls within 25 % of the measured gain depends on
# how quietly the machine runs: printed here, not asserted.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
export OMPI_MCA_hwloc_base_binding_policy=core
# 200 steps: beside 8 busy loops every one of a step's 64 blocking
# allreduces waits for 4 ranks to get a core, and 500 steps a run did not
# end within the test's 10 minutes (200 take 4 s on this machine beside a build)
NSTEPS=200
ARGS="--steps $NSTEPS"

"$COLLSCOPE" run -o "$T/before" -- "$MPIRUN" -np 4 "$TRAINER" $ARGS --buckets 64 > "$T/before.out" 2>&1 ||
  fail "BEFORE: traced run failed (see $T/before.out)"
"$COLLSCOPE" report "$T/before" --format json -o "$T/before.json" 2>/dev/null || fail "BEFORE: report failed"
groups=$("$PY" - "$T/before.json" <<'PYEOF'
import json, sys
p = [x for x in json.load(open(sys.argv[1]))["proposals"] if x["kind"] == "fusion"]
assert p and p[0]["calls_per_step"] == 64, p
assert p[0]["gain_ns"] >= 0.05 * p[0]["step_ns"] and "alpha" in p[0]["evidence"], p
print(max(1, round(p[0]["groups_per_step"])))
PYEOF
) || fail "BEFORE: no fusion proposal of 64 calls per step"
echo "proposal: $groups buckets per step"
"$COLLSCOPE" run -o "$T/after" -- "$MPIRUN" -np 4 "$TRAINER" $ARGS --buckets "$groups" > "$T/after.out" 2>&1 ||
  fail "AFTER: traced run failed (see $T/after.out)"
grep 'step time' "$T/before.out" "$T/after.out"

"$COLLSCOPE" check-estimate "$T/before" "$T/after" > "$T/check.txt"; rc=$?
cat "$T/check.txt"
[ $rc = 0 ] || [ $rc = 1 ] || fail "check-estimate: exit $rc"
grep -q "^  BEFORE $NSTEPS steps (from markers)" "$T/check.txt" && grep -q "^  AFTER  $NSTEPS steps (from markers)" "$T/check.txt" ||
  fail "check-estimate does not report both step counts"
"$COLLSCOPE" check-estimate "$T/before" "$T/after" --json > "$T/check.json"
# The measured side from the traces themselves: median step times.
# (a step: from the earliest rank's marker to the next step's, aligned)
med() { q "$1" "WITH m AS (SELECT rank, begin_ns b, ROW_NUMBER() OVER (PARTITION BY rank ORDER BY begin_ns) k
                           FROM spans WHERE op = 'MPI_Pcontrol'),
                s AS (SELECT k, min(b) b FROM m GROUP BY k),
                st AS (SELECT s2.b - s1.b d FROM s s1 JOIN s s2 ON s2.k = s1.k + 1)
                SELECT d FROM st ORDER BY d LIMIT 1 OFFSET (SELECT count(*) / 2 FROM st)"; }
"$PY" - "$T/check.json" $rc "$(med "$T/before/trace.db")" "$(med "$T/after/trace.db")" "$groups" $NSTEPS <<'PYEOF' || fail "check-estimate figures wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "collscope-check-estimate" and d["version"] == 2, d
assert d["before_steps"] == int(sys.argv[6]) and d["after_steps"] == int(sys.argv[6]) and d["comparable"], d
before, after = float(sys.argv[3]), float(sys.argv[4])
meas = d["measured_gain_ns"]
assert abs(meas - (before - after)) <= max(5000, 0.05 * before), (meas, before - after)
assert d["predicted_gain_ns"] > 0 and not d["after_apply_mode"], d
if meas:
    assert abs(d["error"] - abs(d["predicted_gain_ns"] - meas) / abs(meas)) < 1e-3, d
assert d["pass"] == (sys.argv[2] == "0"), d
assert d["pass"] == (d["gain_shown"] and 0 <= d["error"] <= 0.25), d
assert d["gain_shown"] == (meas >= 0.05 * before and d["measured_gain_mean_ns"] > 0), d
# fusion truly wins here: the median step time falls by 5 % or more (the
# mean, which check-estimate also asks to fall, carries the stalls of a
# loaded machine: one 1 s stall moves a 200-step mean by 5 ms)
assert meas >= 0.05 * before, ("the program's median step time does not show the gain", d)
print("predicted %.1f us, measured %.1f us (steps %.1f -> %.1f us), error %.1f %%" % (
    d["predicted_gain_ns"] / 1e3, meas / 1e3, before / 1e3, after / 1e3, 100 * d["error"]))
PYEOF
echo "ok: check-estimate's figures are the traces' own, the gain shown (exit status $rc)"
pass
