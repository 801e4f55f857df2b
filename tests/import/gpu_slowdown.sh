#!/bin/sh
# The slowdown attribution on the GPU graph (analyzer/analysis/
# an_gpu_graph.c; docs/analysis.md "Slowdown on the GPU") of imported
# Kineto traces of a Megatron-style job (tests/import/gpu_pipe_gen.py:
# dp x pp ranks, 1F1B on a compute stream, NCCL send/receive and gradient
# allreduce kernels on their own streams), checked against the
# generator's own simulation of the same job without its fault:
#   - dp 4 x pp 4, rank 0 (replica 0, stage 0) computing 2x slower:
#     verdict slow_worker, culprit 0 with its coordinates (dp 0, pp 0,
#     tp 0) and its GPU compute named, S within 5 % of the truth, the
#     replay error under 1 %, the ideal step never longer than the actual
#     one (in all and per step), the graph "gpu"; the CPU's graph
#     (COLLSCOPE_SLOWDOWN_GPU=0, the analysis before the GPU graph) finds
#     no slowdown on the same trace;
#   - dp 4 x pp 4, the last stage 1.3x slower: slow_stage, pp stage 3,
#     S within 5 %;
#   - dp 4 x pp 2, 8 microbatches, rank 5 (replica 1, stage 1) 2x slower:
#     slow_worker 5, S within 5 %;
#   - dp 4 x pp 2, every transfer of rank 2 (replica 2, stage 0: its
#     sends, receives and allreduces) 4x slower: slow_worker 2, its
#     communication named, S within 5 %;
#   - the clean job, and one with 10 % jitter on every kernel: no verdict
#     (S under the 10 % floor; with the jitter within 8 % of the truth),
#     the ideal never longer than the actual.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
GEN="$S/tests/import/gpu_pipe_gen.py"

meta() { q "$T/$1.out/trace.db" "SELECT value FROM meta WHERE key = '$2'"; }

# case_run NAME GENERATOR-ARGS...: generate, import, report as JSON
case_run() {
  n=$1
  shift
  check "generate $n" $PY "$GEN" "$T/$n" "$@" --truth "$T/$n.truth"
  "$COLLSCOPE" import -o "$T/$n.out" "$T/$n" > "$T/$n.imp" 2>&1 || { cat "$T/$n.imp"; fail "$n: import failed"; }
  "$COLLSCOPE" report "$T/$n.out" --format json -o "$T/$n.json" || fail "$n: report --format json failed"
}

# check_case NAME VERDICT CULPRIT [TOL]: the verdict, culprit, S within TOL
# (5 %) of the truth, the replay error, ideal <= actual (in all and per
# step)
check_case() {
  n=$1
  expect_eq "$n: graph" "$(meta "$n" slowdown_graph)" gpu
  expect_eq "$n: verdict" "$(meta "$n" slowdown_verdict)" "$2"
  expect_eq "$n: culprit" "$(meta "$n" slowdown_culprit)" "$3"
  expect_eq "$n: steps whose ideal is longer than the actual" "$(meta "$n" slowdown_ideal_over_actual)" 0
  $PY - "$T/$n.json" "$T/$n.truth" "$n" "${4:-0.05}" << 'PYEOF' || fail "$n: S, the replay error or ideal <= actual off (above)"
import json, sys
sd = json.load(open(sys.argv[1]))["slowdown"]
truth = json.load(open(sys.argv[2]))
name, tol = sys.argv[3], float(sys.argv[4])
bad = 0
S, want = sd["S"], truth["S"]
print("%s: S %.4f, truth %.4f (actual %d / ideal %d ns; truth %d / %d), replay error %.4f"
      % (name, S, want, sd["actual_step_ns"], sd["ideal_step_ns"], truth["actual_ns"], truth["ideal_ns"],
         sd["replay_error"]))
if abs(S - want) > tol * want:
    print("FAIL: S %.4f more than %.0f %% from the truth %.4f" % (S, 100 * tol, want))
    bad = 1
if sd["replay_error"] > 0.01:
    print("FAIL: replay error %.4f" % sd["replay_error"])
    bad = 1
if sd["ideal_step_ns"] > sd["actual_step_ns"]:
    print("FAIL: the ideal step %d ns is longer than the actual %d ns" % (sd["ideal_step_ns"], sd["actual_step_ns"]))
    bad = 1
for st in sd["by_step"]:
    if st["ideal_ns"] > st["actual_ns"] * (1 + sd["replay_error"]) + 1000:
        print("FAIL: %s: ideal %d ns longer than actual %d ns" % (st["name"], st["ideal_ns"], st["actual_ns"]))
        bad = 1
sys.exit(bad)
PYEOF
  echo "ok: $n: S, replay error, ideal <= actual"
}

case_run worker --dp 4 --pp 4 --slow-rank 0 --factor 2
check_case worker slow_worker 0
text=$(meta worker slowdown_text)
case $text in
  "rank 0 (dp 0, pp 0, tp 0) explains"*"GPU compute"*) echo "ok: worker: the text names rank 0, its coordinates, its compute" ;;
  *) fail "worker: text '$text'" ;;
esac
expect_eq "worker: every NCCL kernel matched to its collective or partner" \
  "$(meta worker slowdown_gpu_transfers)" "$(q "$T/worker.out/trace.db" "SELECT count(*) FROM span WHERE gpu_begin_ns IS NOT NULL")"
COLLSCOPE_SLOWDOWN_GPU=0 "$COLLSCOPE" analyze --force "$T/worker.out" > "$T/worker-cpu.txt" 2>&1 ||
  { cat "$T/worker-cpu.txt"; fail "worker: the CPU graph's analysis failed"; }
expect_eq "worker, the CPU's graph: graph" "$(meta worker slowdown_graph)" cpu
expect_eq "worker, the CPU's graph: its verdict (the analysis before the GPU graph)" \
  "$(meta worker slowdown_verdict)" none

case_run stage --dp 4 --pp 4 --slow-stage 3 --factor 1.3
check_case stage slow_stage "pp stage 3"

case_run worker8 --dp 4 --pp 2 --micro 8 --slow-rank 5 --factor 2 --seed 2
check_case worker8 slow_worker 5

case_run link --dp 4 --pp 2 --slow-link 2 --factor 4
check_case link slow_worker 2
case $(meta link slowdown_text) in
  "rank 2 (dp 2, pp 0, tp 0) explains"*"communication (NCCL transfers)"*) echo "ok: link: rank 2, its communication" ;;
  *) fail "link: text '$(meta link slowdown_text)'" ;;
esac

case_run clean --dp 4 --pp 4
check_case clean none ""

case_run jitter --dp 4 --pp 4 --jitter 0.1 --seed 3
# the ideal takes the lower quartile of each kernel's durations: 10 %
# jitter (uniform) puts it 5 % under the nominal, the truth's ideal
check_case jitter none "" 0.08
pass
