#!/bin/sh
# The reference GPU simulator (tests/gpusim/sim.py, docs/gpusim.md) against
# facts it did not compute (tests/gpusim/sim_facts.py): its traces read
# back give its truth's step times, NCCL waiting and GPU time breakdown;
# every kernel keeps the model's rules (one at a time per stream, after its
# launch, after the receive or tensor-parallel allreduce it needs;
# collectives end together after their last member's start, sends with
# their receives); collscope's gpu_time[] and HTA's temporal breakdown
# agree with its breakdown; its ideal steps are the pipeline formulas of
# 1F1B, GPipe and interleaved 1F1B; its fault-free replay of a faulty job is
# the clean job's run; a tampered truth is caught; the same seed writes the
# same files; bad options are refused. Not collscope's slowdown verdicts:
# check.py and bench/gpusim_bench.sh measure those. Without the venv
# (numpy, HTA): skipped, a failure under CI=true (tests/lib.sh need_venv).
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
need_venv numpy hta
SIM="$S/tests/gpusim/sim.py"
FACTS="$S/tests/gpusim/sim_facts.py"

# gen NAME OPTIONS...: a job, imported and reported as JSON
gen() {
  _n=$1; shift
  check "sim.py $_n" "$VPY" "$SIM" "$T/$_n" "$@"
  "$COLLSCOPE" import -o "$T/$_n.cs" "$T/$_n/traces" > "$T/$_n.imp" 2>&1 ||
    { cat "$T/$_n.imp"; fail "$_n: collscope import failed"; }
  "$COLLSCOPE" report "$T/$_n.cs" --format json -o "$T/$_n.json" || fail "$_n: report --format json failed"
}

# a slow worker, 1F1B, dp 2 x pp 2 x tp 2: the traces, collscope, HTA
gen w --dp 2 --pp 2 --tp 2 --steps 4 --micro 4 --fault slow_worker --target 5 --factor 1.5 --seed 3
check "the slow worker's traces against its truth and collscope's gpu_time" \
  "$VPY" "$FACTS" trace "$T/w" --report "$T/w.json"
HTA_DISABLE_NS_ROUNDING=1 "$VPY" "$FACTS" hta "$T/w" > "$T/w.hta" 2>&1 || { grep -v '^Pars\|^Overall\|^leaving' "$T/w.hta" | tail; fail "HTA"; }
grep '^ok' "$T/w.hta"
# interleaved 1F1B with reduce-scatter + all-gather; GPipe with the CPU
# waiting for each exchange and the gradient buckets overlapping the last
# backward, with a slow link
gen i --dp 2 --pp 2 --tp 2 --schedule interleaved --chunks 2 --micro 4 --steps 3 --dp-mode rs_ag --seed 4
check "interleaved: traces against the truth" "$VPY" "$FACTS" trace "$T/i" --report "$T/i.json"
gen g --dp 2 --pp 3 --tp 1 --schedule gpipe --micro 3 --steps 3 --p2p-sync --overlap-grad --fault slow_link --target 2 --factor 4 --seed 5
check "gpipe with p2p sync: traces against the truth" "$VPY" "$FACTS" trace "$T/g" --report "$T/g.json"

# the textbook step of each schedule (no communication time, no noise)
for sch in "1f1b --micro 8" "gpipe --micro 6" "interleaved --micro 8 --chunks 2" "interleaved --micro 4 --chunks 3"; do
  # shellcheck disable=SC2086 # the schedule and its options
  check "sim.py --schedule $sch" "$VPY" "$SIM" "$T/f" --no-traces --dp 1 --pp 4 --tp 1 --steps 2 --noise 0 \
    --p2p-us 0 --opt-us 0 --world-us 0 --emb-us 0 --schedule $sch
  check "the formula of $sch" "$VPY" "$FACTS" formula "$T/f"
done

# the fault-free replay of a slow stage is the clean job's run, same seed
check "clean job" "$VPY" "$SIM" "$T/c0" --no-traces --dp 2 --pp 4 --tp 1 --micro 8 --steps 5 --seed 9
check "slow stage" "$VPY" "$SIM" "$T/c1" --no-traces --dp 2 --pp 4 --tp 1 --micro 8 --steps 5 --seed 9 \
  --fault slow_stage --target 1 --factor 1.8
check "same noise" "$VPY" "$FACTS" same-noise "$T/c0" "$T/c1"

# the checks can fail: a step time 1 ms off, a rank's compute 1 us off
mkdir "$T/bad"
cp -r "$T/w/traces" "$T/bad/traces"
"$VPY" -c 'import json, sys
t = json.load(open(sys.argv[1]))
t["steps_ns"][1] += 1000000
json.dump(t, open(sys.argv[2], "w"))' "$T/w/truth.json" "$T/bad/truth.json"
"$VPY" "$FACTS" trace "$T/bad" > "$T/bad.out" 2>&1 && { cat "$T/bad.out"; fail "a step time 1 ms off passed"; }
grep -q "FAIL: step times from the ProfilerStep spans" "$T/bad.out" || { cat "$T/bad.out"; fail "no step-time failure"; }
echo "ok: a step time 1 ms off is caught"
"$VPY" -c 'import json, sys
t = json.load(open(sys.argv[1]))
t["ranks"][3]["gpu"]["compute"] += 1000
json.dump(t, open(sys.argv[2], "w"))' "$T/w/truth.json" "$T/bad/truth.json"
"$VPY" "$FACTS" trace "$T/bad" > "$T/bad.out" 2>&1 && { cat "$T/bad.out"; fail "a compute time 1 us off passed"; }
grep -q "FAIL: rank 3: GPU time by sweep" "$T/bad.out" || { cat "$T/bad.out"; fail "no breakdown failure"; }
echo "ok: a rank's compute time 1 us off is caught"

# the same seed, the same files
check "sim.py again" "$VPY" "$SIM" "$T/w2" --dp 2 --pp 2 --tp 2 --steps 4 --micro 4 --fault slow_worker --target 5 \
  --factor 1.5 --seed 3
check "the same truth" cmp "$T/w/truth.json" "$T/w2/truth.json"
check "the same rank 5 trace" cmp "$T/w/traces/rank5.json" "$T/w2/traces/rank5.json"

# a clock offset moves that rank's times only, by exactly that much
check "sim.py --clock-offset 5:250" "$VPY" "$SIM" "$T/o" --dp 2 --pp 2 --tp 2 --steps 4 --micro 4 --fault slow_worker \
  --target 5 --factor 1.5 --seed 3 --clock-offset 5:250
check "rank 4 unmoved" cmp "$T/w/traces/rank4.json" "$T/o/traces/rank4.json"
check "rank 5 moved by 250 us" "$VPY" -c 'import json, sys
a, b = (json.load(open(p))["traceEvents"] for p in sys.argv[1:])
d = {round(round(y["ts"] * 1000) - round(x["ts"] * 1000)) for x, y in zip(a, b)}
sys.exit(0 if len(a) == len(b) and d == {250000} else "shifts %s" % sorted(d)[:5])' "$T/w/traces/rank5.json" "$T/o/traces/rank5.json"

# another job's rank files in the folder: refused, nothing written
"$VPY" "$SIM" "$T/w2" --dp 2 --pp 1 --tp 2 --steps 2 > "$T/x.out" 2>&1
expect_eq "a smaller job over a larger one's traces: exit status" $? 1
grep -q "rank4.json, rank5.json, rank6.json of another job" "$T/x.out" || { cat "$T/x.out"; fail "no message"; }
check "the larger job's truth kept" cmp "$T/w/truth.json" "$T/w2/truth.json"

# bad options: one message, exit status 2
"$VPY" "$SIM" "$T/x" --pp 2 --schedule interleaved --micro 3 > "$T/x.out" 2>&1
expect_eq "interleaved with 3 microbatches on 2 stages: exit status" $? 2
grep -q "micro a multiple of --pp" "$T/x.out" || { cat "$T/x.out"; fail "no message"; }
"$VPY" "$SIM" "$T/x" --pp 2 --fault slow_stage --target 2 > "$T/x.out" 2>&1
expect_eq "stage 2 of 2: exit status" $? 2
grep -q "is not a stage of the job" "$T/x.out" || { cat "$T/x.out"; fail "no message"; }
[ ! -e "$T/x" ] || fail "a refused job wrote $T/x"
pass
