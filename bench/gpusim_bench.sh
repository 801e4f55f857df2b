#!/bin/sh
# gpusim_bench.sh: collscope's slowdown answers on N random jobs of the
# reference GPU simulator (tests/gpusim/sim.py, docs/gpusim.md) against its
# truth: layouts dp x pp x tp of 4 to 256 ranks, schedules 1F1B,
# interleaved 1F1B and GPipe, gradient sync by allreduce or reduce-scatter +
# all-gather, and the faults none, slow_worker, slow_stage, slow_link,
# imbalance, transient in fixed proportions (a sixth clean). Each job is
# generated, imported and reported (tests/gpusim/check.py), its traces
# removed; then the table of all jobs and the issue-31 floors (S within 5 %
# in 95 % of the jobs and 10 % in all, verdict and culprit right in 95 %, no
# verdict on a clean job, ideal <= actual in all). Not part of make check.
# Usage (from the build directory; the venv with numpy in CS_VENV or
# /work/main/.venv):
#   sh SRC/bench/gpusim_bench.sh [N] [SEED]     default 60 jobs, seed 1
# Exit status: check.py's (0 all floors met, 1 a floor missed).
set -u
B=${B:-$(pwd)}
SRC=$(cd "$(dirname "$0")/.." && pwd)
CS=${COLLSCOPE:-$B/analyzer/collscope}
PY=${CS_VENV:-/work/main/.venv}/bin/python
[ -x "$CS" ] || { echo "build first: $CS"; exit 2; }
[ -x "$PY" ] || PY=python3
"$PY" -c 'import numpy' 2> /dev/null || { echo "needs numpy (set CS_VENV to a venv that has it)"; exit 2; }
N=${1:-60}
SEED=${2:-1}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-gpusim.XXXXXX")
trap 'rm -rf "$W"' EXIT
# the configurations: one line of sim.py options per job, drawn from SEED
"$PY" - "$N" "$SEED" > "$W/jobs" << 'PYEOF'
import random, sys
n, seed = int(sys.argv[1]), int(sys.argv[2])
rnd = random.Random(seed)
faults = ["none", "slow_worker", "slow_stage", "slow_link", "imbalance", "transient"]
for i in range(n):
    fault = faults[i % len(faults)]
    while True:
        dp, pp, tp = rnd.choice([1, 2, 4, 8, 16]), rnd.choice([1, 2, 4, 8]), rnd.choice([1, 2, 4, 8])
        if 4 <= dp * pp * tp <= 256 and (fault != "slow_stage" or pp >= 2) and (dp > 1 or pp > 1):
            break
    sched = rnd.choice(["1f1b", "1f1b", "interleaved", "gpipe"]) if pp > 1 else "1f1b"
    micro = rnd.choice([pp, 2 * pp]) if sched == "interleaved" else rnd.choice([4, 8, 16])
    steps = 8 if fault == "transient" else 6
    opts = "--dp %d --pp %d --tp %d --schedule %s --micro %d --steps %d --seed %d" % (
        dp, pp, tp, sched, micro, steps, seed * 1000 + i)
    opts += " --layers %d --buckets %d" % (rnd.choice([1, 2]), rnd.choice([2, 4]))
    if rnd.random() < 0.3:
        opts += " --dp-mode rs_ag"
    if rnd.random() < 0.3:
        opts += " --overlap-grad"
    if rnd.random() < 0.2 and sched != "interleaved":
        opts += " --p2p-sync"
    factor = {"none": 1.0, "slow_worker": rnd.uniform(1.3, 2.0), "slow_stage": rnd.uniform(1.3, 2.0),
              "slow_link": rnd.uniform(2.0, 6.0), "imbalance": rnd.uniform(1.5, 3.0),
              "transient": rnd.uniform(2.0, 3.0)}[fault]
    if fault != "none":
        opts += " --fault %s --factor %.2f" % (fault, factor)
    print("j%02d-%s %s" % (i, fault, opts))
PYEOF
echo "gpusim_bench: $N jobs (seed $SEED), collscope $CS"
i=0
fails=0
while read -r name opts; do
  i=$((i + 1))
  # shellcheck disable=SC2086 # the options are words
  "$PY" "$SRC/tests/gpusim/sim.py" "$W/$name" $opts > "$W/$name.sim" 2>&1 ||
    { echo "$name: sim.py failed: $(tail -1 "$W/$name.sim")"; fails=$((fails + 1)); continue; }
  "$PY" "$SRC/tests/gpusim/check.py" --collscope "$CS" --no-summary --append "$W/rows.jsonl" "$W/$name"
  rm -rf "$W/$name/traces"
  echo "  ($i/$N) $opts"
done < "$W/jobs"
echo
[ "$fails" -eq 0 ] || echo "gpusim_bench: sim.py failed on $fails jobs (above): not in the table"
"$PY" "$SRC/tests/gpusim/check.py" --from "$W/rows.jsonl" || exit $?
[ "$fails" -eq 0 ] || exit 2
