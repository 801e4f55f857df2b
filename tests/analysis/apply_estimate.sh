#!/bin/sh
# The loop of estimate and measurement closed on the example trainer, 4
# ranks, Open MPI: a traced run with 64 small nonblocking allreduces per
# step (BEFORE), its fusion proposal, the same job with apply mode on
# (AFTER, the proposal's own COLLSCOPE_FUSE* settings), and `collscope
# check-estimate BEFORE AFTER`:
#  - AFTER has identical results and the 64 calls of a step fused into a
#    few (the proposed bucket's);
#  - check-estimate's figures are the traces' own: the measured gain is the
#    difference of the median step times, the error |pred - meas| / meas,
#    the JSON and text agree, the exit status says whether it is in 25 %.
# Whether the prediction falls within 25 % of the measured gain depends on
# how quietly the machine runs (the gain is 50-140 us a step on a 2-core
# VM): printed here, not asserted; bench/fuse_bench.sh measures it over
# many pairs (bench/README.md).
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
export OMPI_MCA_hwloc_base_binding_policy=core
ARGS="--steps 500 --buckets 64 --nonblocking"

"$COLLSCOPE" run -o "$T/before" -- "$MPIRUN" -np 4 "$TRAINER" $ARGS > "$T/before.out" 2>&1 ||
  fail "BEFORE: traced run failed (see $T/before.out)"
"$COLLSCOPE" report "$T/before" --format json -o "$T/before.json" 2>/dev/null || fail "BEFORE: report failed"
# The proposal's own settings for apply mode.
env=$("$PY" - "$T/before.json" <<'PYEOF'
import json, sys
p = [x for x in json.load(open(sys.argv[1]))["proposals"] if x["kind"] == "fusion"]
assert p and p[0]["calls_per_step"] == 64, p
print(p[0]["env"])
PYEOF
) || fail "BEFORE: no fusion proposal of 64 calls per step"
echo "proposal: $env"
case $env in *COLLSCOPE_FUSE=1*) ;; *) fail "the proposal does not say how to apply it: $env" ;; esac
# Apply it as proposed (its bucket: the smallest with most of the gain).
env $env "$COLLSCOPE" run -o "$T/after" -- "$MPIRUN" -np 4 "$TRAINER" $ARGS > "$T/after.out" 2>&1 ||
  fail "AFTER: traced run failed (see $T/after.out)"
for k in 'final loss' 'weights checksum'; do
  expect_eq "AFTER: $k as BEFORE" "$(grep "^$k" "$T/after.out")" "$(grep "^$k" "$T/before.out")"
done
expect_eq "AFTER: the program's 64 calls a step all fused" \
  "$(q "$T/after/trace.db" "SELECT (sum((flags & 256) != 0) / 2000) || ' ' || sum((flags & 260) = 0) FROM spans WHERE op = 'MPI_Iallreduce'")" "64 0"
nf=$(q "$T/after/trace.db" "SELECT sum((flags & 4) != 0) FROM spans WHERE op = 'MPI_Iallreduce'")
[ $((nf % 2000)) = 0 ] && [ $((nf / 2000)) -ge 1 ] && [ $((nf / 2000)) -lt 64 ] ||
  fail "AFTER: $nf fused calls, not a few per rank and step"
echo "ok: AFTER: 64 calls into $((nf / 2000)) per rank and step"

"$COLLSCOPE" check-estimate "$T/before" "$T/after" > "$T/check.txt"; rc=$?
cat "$T/check.txt"
[ $rc = 0 ] || [ $rc = 1 ] || fail "check-estimate: exit $rc"
grep -q "AFTER (apply mode): 128000 calls fused into $nf" "$T/check.txt" || fail "check-estimate does not see the fused calls"
"$COLLSCOPE" check-estimate "$T/before" "$T/after" --json > "$T/check.json"
# The measured side from the traces themselves: median step times.
# (a step: from the earliest rank's marker to the next step's, aligned)
med() { q "$1" "WITH m AS (SELECT rank, begin_ns b, ROW_NUMBER() OVER (PARTITION BY rank ORDER BY begin_ns) k
                           FROM spans WHERE op = 'MPI_Pcontrol'),
                s AS (SELECT k, min(b) b FROM m GROUP BY k),
                st AS (SELECT s2.b - s1.b d FROM s s1 JOIN s s2 ON s2.k = s1.k + 1)
                SELECT d FROM st ORDER BY d LIMIT 1 OFFSET (SELECT count(*) / 2 FROM st)"; }
"$PY" - "$T/check.json" $rc "$(med "$T/before/trace.db")" "$(med "$T/after/trace.db")" $((nf / 2000)) <<'PYEOF' || fail "check-estimate figures wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "collscope-check-estimate" and d["version"] == 1, d
before, after = float(sys.argv[3]), float(sys.argv[4])
meas = d["measured_gain_ns"]
# the tool's step medians against ours (its steps are aligned; where steps
# fall into two regimes a median may move by a step's spread: 5 % or 5 us)
assert abs(meas - (before - after)) <= max(5000, 0.05 * before), (meas, before - after)
assert d["predicted_gain_ns"] > 0 and d["after_calls_per_step"] == int(sys.argv[5]), d
if meas:
    assert abs(d["error"] - abs(d["predicted_gain_ns"] - meas) / abs(meas)) < 1e-3, d
assert d["pass"] == (sys.argv[2] == "0") == (0 <= d["error"] <= 0.25), d
print("predicted %.1f us, measured %.1f us (steps %.1f -> %.1f us), error %.1f %%" % (
    d["predicted_gain_ns"] / 1e3, meas / 1e3, before / 1e3, after / 1e3, 100 * d["error"]))
PYEOF
echo "ok: check-estimate's figures are the traces' own (prediction error $(sed -n 's/.*error: \([0-9.]*\) %.*/\1/p' "$T/check.txt") %, exit status $rc)"
pass
