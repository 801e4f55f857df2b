# slowdown.inc.sh: the slowdown attribution (analyzer/an_slowdown.c) on
# tests/progs/pipe3d, 8 ranks as dp 2 x pp 4 (GPipe microbatches through
# four stages by send/receive, a data-parallel allreduce per stage), its
# compute sleeping so 8 ranks keep their timing on 2 cores, under one MPI
# ($CS_MPI): the layout is found exactly; a clean run has no verdict; one
# slow rank is the slow worker, its S within TOL of the truth (the program's
# own median step against the clean run's) and so is its S_w (only it
# slow); one slow pipeline stage (two ranks) is the slow stage.
# The slow stage's trace exported as Kineto JSON and imported back gives
# the same layout and verdict. --fail-on slowdown=PCT gates on S. Sourced
# by slowdown_ompi.sh and
# slowdown_mpich.sh.
need_mpi "$CS_MPI"
MPIRUN=$(mpirun_for "$CS_MPI")
case $CS_MPI in openmpi) PROG="$B/tests/progs/pipe3d_ompi" ;; *) PROG="$B/tests/progs/pipe3d_mpich" ;; esac
[ -x "$PROG" ] || skip "$PROG not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "python3 not installed"
# Open MPI's waiting ranks yield the core (mpi_yield_when_idle); MPICH's
# busy-poll, and its steps take some 280 ms on 2 cores against 50 ms: a
# larger delay there, and a wider tolerance
# The floor of a verdict: 8 ranks on 2 shared cores replay a clean run up
# to 8 % (Open MPI) and 22 % (MPICH, a loaded machine) above its ideal;
# the injected cases are 50-90 %.
if [ "$CS_MPI" = openmpi ]; then
  export OMPI_MCA_mpi_yield_when_idle=1 COLLSCOPE_SLOWDOWN_MIN=20
  SLOW=3000 TOL=0.10 EXTRA="--oversubscribe"
else
  # yielding after 100 polls lets a rank that wakes from its sleep run
  # sooner (a clean run's S 1.15-1.22 without, under load; 1.01 with)
  export MPIR_CVAR_POLLS_BEFORE_YIELD=100 COLLSCOPE_SLOWDOWN_MIN=30
  SLOW=20000 TOL=0.15 EXTRA=""
fi
COMMON="--dp 2 --pp 4 --steps 12 --micro 4 --compute-us 2000 --sleep"

run() {
  _n=$1; shift
  "$COLLSCOPE" run -o "$T/$_n" -- "$MPIRUN" -np 8 $EXTRA "$PROG" $COMMON "$@" >"$T/$_n.out" 2>&1 ||
    fail "$_n: traced run failed (see $T/$_n.out)"
  "$COLLSCOPE" report "$T/$_n" --format json -o "$T/$_n.json" || fail "$_n: report failed"
}

# check NAME VERDICT CULPRIT: the verdict, the culprit, the layout; for a
# slow worker its S and S_w against the truth
check() {
  "$PY" - "$T/$1.json" "$T/$1.out" "$T/clean.out" "$2" "$3" "$TOL" <<'PYEOF' || fail "$1: see above"
import json, os, statistics, sys
d = json.load(open(sys.argv[1]))
verdict, culprit, tol = sys.argv[4], sys.argv[5], float(sys.argv[6])
def step_med(path):
    v = [float(kv.split("=", 1)[1]) for l in open(path) if l.startswith("PIPE3D ")
         for kv in l.split() if kv.startswith("step_us_med=")]
    return statistics.median(v)
sd = d["slowdown"]
bad = []
if d["layout"] is None or d["layout"]["text"] != "dp 2 x pp 4, tp 1":
    bad.append("layout %r" % (d["layout"] and d["layout"]["text"]))
if sd is None:
    sys.exit("no slowdown section (notes: %s)" % d["notes"])
truth = step_med(sys.argv[2]) / step_med(sys.argv[3])
if sd["verdict"] != verdict:
    bad.append("verdict %s (%s), want %s" % (sd["verdict"], sd["text"], verdict))
if culprit != "-" and sd["culprit"] != culprit:
    bad.append("culprit %r, want %r" % (sd["culprit"], culprit))
if verdict == "slow_worker":
    if abs(sd["S"] - truth) > tol * truth:
        bad.append("S %.3f, the truth %.3f (not within %.0f %%)" % (sd["S"], truth, 100 * tol))
    w = [r for r in sd["by_rank"] if r["name"] == "rank " + culprit]
    if not w or abs(w[0]["S"] - truth) > tol * truth:
        bad.append("S_w of rank %s %s, the truth %.3f" % (culprit, w and w[0]["S"], truth))
if verdict == "none" and sd["S"] >= 1 + float(os.environ["COLLSCOPE_SLOWDOWN_MIN"]) / 100:
    bad.append("S %.3f on a clean run" % sd["S"])
if len(sd["by_step"]) != d["steps"]["count"] - 1:
    bad.append("%d steps in by_step, want %d" % (len(sd["by_step"]), d["steps"]["count"] - 1))
print("%s: S %.3f (truth %.3f), verdict %s: %s" % (sys.argv[1].split("/")[-1], sd["S"], truth, sd["verdict"], sd["text"]))
if bad:
    print("FAIL: " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
PYEOF
  echo "ok: $1: $2 $3"
}

run clean
check clean none -
run worker --slow-rank 5 --slow-us $SLOW
check worker slow_worker 5
run stage --slow-stage 2 --slow-us $SLOW
check stage slow_stage "pp stage 2"

# its twin through the PyTorch profiler's layout: the slow stage's trace
# exported as Kineto JSON and imported back gives the same layout, verdict
# and culprit
"$COLLSCOPE" export "$T/stage" --format kineto -o "$T/stage-kineto" 2>"$T/kexp.err" || fail "kineto export: $(cat "$T/kexp.err")"
"$COLLSCOPE" import -o "$T/stage-imported" "$T/stage-kineto" >"$T/imp.out" 2>&1 || fail "import: $(cat "$T/imp.out")"
# (its S comes out lower, 1.2-1.3 against 1.8: a floor of 10 %)
COLLSCOPE_SLOWDOWN_MIN=10 "$COLLSCOPE" report "$T/stage-imported" --format json -o "$T/stage-imported.json" ||
  fail "report of the import"
"$PY" - "$T/stage.json" "$T/stage-imported.json" <<'PYEOF' || fail "the imported twin: see above"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("verdict", "culprit"):
    if a["slowdown"][k] != b["slowdown"][k]:
        sys.exit("imported %s %r, the MPI trace's %r" % (k, b["slowdown"][k], a["slowdown"][k]))
if (a["layout"] or {}).get("text") != (b["layout"] or {}).get("text"):
    sys.exit("imported layout %r, the MPI trace's %r" % (b["layout"], a["layout"]))
print("imported twin: %s, %s, S %.3f (MPI trace: %.3f)" % (b["layout"]["text"], b["slowdown"]["text"],
      b["slowdown"]["S"], a["slowdown"]["S"]))
PYEOF
echo "ok: the imported Kineto twin gives the same layout, verdict and culprit"

# the gate: the clean run passes the floor, the slow worker fails it (exit 3)
"$COLLSCOPE" report "$T/clean" --fail-on slowdown=$COLLSCOPE_SLOWDOWN_MIN >"$T/gate-clean.txt" ||
  fail "gate: the clean run failed slowdown=$COLLSCOPE_SLOWDOWN_MIN"
rc=0
"$COLLSCOPE" report "$T/worker" --fail-on slowdown=$COLLSCOPE_SLOWDOWN_MIN >"$T/gate-worker.txt" || rc=$?
[ $rc -eq 3 ] || fail "gate: the slow worker's report exited $rc, want 3"
grep -q "slowdown.*rank 5 explains" "$T/gate-worker.txt" || fail "gate: no slowdown line naming rank 5"
grep -q "^Slowdown: S " "$T/gate-worker.txt" || fail "no Slowdown section in the text report"
echo "ok: --fail-on slowdown=$COLLSCOPE_SLOWDOWN_MIN"
pass
