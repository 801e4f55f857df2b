# slowdown.inc.sh: the slowdown attribution (analyzer/analysis/an_slowdown.c) on
# examples/pipe_trainer, 8 ranks as dp 2 x pp 4 (1F1B microbatches through
# four stages by send/receive, a data-parallel allreduce per stage, an
# embedding allreduce between the first and the last stage), its compute
# sleeping so 8 ranks keep their timing on 2 cores, under one MPI
# ($CS_MPI), over the seeds in $CS_SD_SEEDS (each seed picks the slow
# rank and the slow stage; default one seed, a different one under each
# MPI: seed 1, rank 5 and stage 2, under Open MPI; seed 2, rank 3 and
# stage 3, under MPICH; CS_SD_SEEDS="1 2 3" runs all three). For every seed: the layout is found
# exactly; a clean run has no verdict; one slow rank is the slow worker,
# a heavier stage the slow stage (a random imbalance, once: scattered); S is within 10 % of the truth and the
# culprit's S_w (only it slow) within 15 % (below),
# both over the seed's clean run's S. The truth is the program's
# own: its median step over the clean job's, the median of the first
# steps of the seed's runs (pipe_trainer --warm-steps runs them without
# the slow rank or stage; see check). A slow stage's trace (GPipe) exported as Kineto
# JSON and imported back gives the same layout, verdict, culprit and S
# (within 5 %). --fail-on slowdown=PCT gates on S. Sourced by
# slowdown_ompi.sh and slowdown_mpich.sh.
need_mpi "$CS_MPI"
MPIRUN=$(mpirun_for "$CS_MPI")
case $CS_MPI in openmpi) PROG="$B/examples/pipe_trainer_ompi" ;; *) PROG="$B/examples/pipe_trainer_mpich" ;; esac
[ -x "$PROG" ] || skip "$PROG not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "python3 not installed"
# Open MPI's waiting ranks yield the core (mpi_yield_when_idle); MPICH's
# sleep while they poll without progress (tests/progs/idle_sleep.c, which
# tests/lib.sh preloads: without it they spin, 8 ranks on 2 cores).
# The floor of a verdict: a clean run replays within 1 % of its ideal on
# a quiet machine, but 8 ranks on 2 cores shared with other work lose
# their cores (a sleeping rank wakes late): up to 17 % seen under Open MPI
# (1.24 once, at a load of 13); a clean MPICH run replayed at S 1.006
# with its ranks sleeping (1.05-1.12 when they spun). The injected delay
# is 24 ms (3x a microbatch's compute) and S and the culprit's S_w must
# come within 10 % and 15 % of the truth under both MPIs: S is the
# replay's figure, the truth the program's measured steps, and beside 8
# busy loops a 12 ms delay under Open MPI gave S 1.62 (over the clean
# run's) against a truth of 1.48, where 5 % had held on a quiet machine.
if [ "$CS_MPI" = openmpi ]; then
  export OMPI_MCA_mpi_yield_when_idle=1 COLLSCOPE_SLOWDOWN_MIN=${COLLSCOPE_SLOWDOWN_MIN:-20}
  EXTRA="--oversubscribe"
else
  export COLLSCOPE_SLOWDOWN_MIN=${COLLSCOPE_SLOWDOWN_MIN:-15}
  EXTRA=""
fi
SLOW=24000
export CS_SD_TOL_S=0.10 CS_SD_TOL_W=0.15
# One seed per MPI: each 8-rank job takes 5-8 s on 2 cores, and the two
# twins together still cover two slow ranks and two slow stages.
if [ "$CS_MPI" = openmpi ]; then SEEDS=${CS_SD_SEEDS:-1}; else SEEDS=${CS_SD_SEEDS:-2}; fi
COMMON="--dp 2 --pp 4 --steps 16 --warm-steps 5 --micro 4 --compute-us 8000"

run() {
  _n=$1
  shift
  "$COLLSCOPE" run -o "$T/$_n" -- "$MPIRUN" -np 8 $EXTRA "$PROG" $COMMON "$@" >"$T/$_n.out" 2>&1 ||
    fail "$_n: traced run failed (see $T/$_n.out)"
  "$COLLSCOPE" report "$T/$_n" --format json -o "$T/$_n.json" || fail "$_n: report failed"
}

# check NAME SEED VERDICT CULPRIT: the verdict, the culprit, the layout;
# S and the culprit's S_w against the truth
check() {
  _runs="$T/clean$2.out $T/worker$2.out $T/stage$2.out"
  "$PY" - "$T/$1.json" "$T/$1.out" "$_runs" "$3" "$4" "$T/figures" "$2" <<'PYEOF' || fail "$1: see above"
import json, os, statistics, sys
d = json.load(open(sys.argv[1]))
verdict, culprit = sys.argv[4], sys.argv[5]
def rows(path):
    r = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(path) if l.startswith("PIPE ")]
    if len(r) != 8:
        sys.exit("%s: %d PIPE lines, want 8" % (path, len(r)))
    return r
def med(path, key):
    return statistics.median(float(x[key]) for x in rows(path))
def model(path):
    return statistics.median(float(r["model_us"]) / float(r["ideal_us"]) for r in rows(path))
sd = d["slowdown"]
bad = []
if d["layout"] is None or d["layout"]["text"] != "dp 2 x pp 4, tp 1":
    bad.append("layout %r" % (d["layout"] and d["layout"]["text"]))
if sd is None:
    sys.exit("no slowdown section (notes: %s)" % d["notes"])
# the truth, measured: the run's step over the clean job's, that is the
# median of the clean run's step and of the first steps (--warm-steps,
# without the slow rank or stage) of this seed's runs so far (a loaded
# node slows one run or another); the settings' (the schedule with these
# compute times, communication free) is printed beside it
runs = [p for p in sys.argv[3].split() if os.path.exists(p)]
bases = [med(runs[0], "step_us")] + [med(p, "warm_us") for p in runs]
base = statistics.median(bases)
truth = med(sys.argv[2], "step_us") / base
# The truth is known only as well as the program's own measurements of
# the clean job agree with each other: the clean run's step and each
# run's warm steps measure the same thing, and their spread (the range
# over their median) is added to the tolerances. Beside 8 busy loops (and
# other work: load 13-15) the spread was 5-30 % in 4 runs of 5 and 93 %
# in one (the loops' slices fall on one run's warm steps and not on
# another's), and a slow stage's S came 14.6 % under a truth whose base
# spread 25 %; where the spread is over 30 % the program has not measured
# the clean job, S is not checked against it (said in the log), and the
# verdict and culprit still are.
spread = (max(bases) - min(bases)) / base
measured = spread <= 0.30
mtruth = model(sys.argv[2])
# The truth is relative to the clean job, which already replays above its
# ideal by its own noise (8 ranks polling or sleeping on 2 cores: S 1.08-1.10
# for a clean MPICH job, 1.00-1.01 under Open MPI): the analysis' figure
# for the same thing is S over the clean run's S (the seed's clean run).
s0 = 1.0
clean = os.path.join(os.path.dirname(sys.argv[1]), "clean%s.json" % sys.argv[7])
if verdict != "none" and os.path.exists(clean):
    c = json.load(open(clean))["slowdown"]
    s0 = c["S"] if c and c["S"] > 0 else 1.0
def near(x, tol):
    return not measured or abs(x / s0 - truth) <= (tol + spread) * truth
floor = float(os.environ["COLLSCOPE_SLOWDOWN_MIN"]) / 100
if sd["verdict"] != verdict:
    bad.append("verdict %s (%s), want %s" % (sd["verdict"], sd["text"], verdict))
if culprit != "-" and sd["culprit"] != culprit:
    bad.append("culprit %r, want %r" % (sd["culprit"], culprit))
sw = None
if verdict == "none":
    if sd["S"] >= 1 + floor:
        bad.append("S %.3f on a clean run" % sd["S"])
else:
    tol_s, tol_w = float(os.environ["CS_SD_TOL_S"]), float(os.environ["CS_SD_TOL_W"])
    if not near(sd["S"], tol_s):
        bad.append("S %.3f (over the clean run's %.3f: %.3f), the truth %.3f (not within %.0f %%)" %
                   (sd["S"], s0, sd["S"] / s0, truth, 100 * (tol_s + spread)))
    if culprit != "-":
        rows = sd["by_rank"] + sd["by_group"]
        w = [r for r in rows if r["name"] == ("rank " + culprit if culprit.isdigit() else culprit)]
        sw = w and w[0]["S"]
        if not w or not near(sw, tol_w):
            bad.append("S_w of %s %s (over the clean run's S %.3f), the truth %.3f (not within %.0f %%)" %
                       (culprit, sw, s0, truth, 100 * (tol_w + spread)))
if len(sd["by_step"]) != d["steps"]["count"] - 1:
    bad.append("%d steps in by_step, want %d" % (len(sd["by_step"]), d["steps"]["count"] - 1))
name = sys.argv[1].split("/")[-1][:-5]
line = "%s: S %.3f (clean %.3f) truth %.3f (its base's spread %.3f, settings %.3f) S_w %s replay_error %.3f verdict %s" % (name, sd["S"], s0,
       truth, spread, mtruth, "%.3f" % sw if sw else "-", sd["replay_error"], sd["verdict"])
if not measured:
    line += " (S not checked: the program's own clean steps disagree by %.0f %%)" % (100 * spread)
open(sys.argv[6], "a").write(line + "\n")
print(line + ": " + sd["text"])
if bad:
    print("FAIL: " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
PYEOF
  echo "ok: $1: $3 $4"
}

for seed in $SEEDS; do
  # the seed picks the slow rank (never a first-stage rank: rank 0 or 1
  # slow is a slow worker too, only a less interesting one) and the stage
  case $((seed % 3)) in 1) wr=5 st=2 ;; 2) wr=3 st=3 ;; *) wr=6 st=1 ;; esac
  run clean$seed --seed "$seed"
  check clean$seed $seed none -
  run worker$seed --seed "$seed" --slow-rank $wr --slow-us $SLOW
  check worker$seed $seed slow_worker $wr
  run stage$seed --seed "$seed" --heavy-stage $st --heavy-us $SLOW
  check stage$seed $seed slow_stage "pp stage $st"
done
cat "$T/figures"
# A random per-microbatch imbalance (up to 6x the compute, seeded) on
# every rank: no worker or stage is to blame. Its slowdown (S 1.13-1.15)
# is under the floors these tests use for clean runs on 2 loaded cores, so
# it is analysed again with a floor of 5 %: the verdict is scattered (the
# last stage's ranks hold the largest shares, but their excess moves from
# step to step), and S is within the S tolerance of the settings' figure
# (the schedule with the imbalance at its mean over the same schedule
# without it: like S, a ratio to the ideal, not to the clean job).
set -- $SEEDS
# SLOWDOWN_EXTRAS=0 (slowdown_mpich.sh) stops here: the imbalance, the
# Kineto twin and the gate test the analysis, the export and the import,
# not the MPI, and slowdown_ompi.sh runs them (the suite's time)
[ "${SLOWDOWN_EXTRAS:-1}" = 1 ] || pass
run scatter$1 --seed "$1" --imbalance-us 48000
COLLSCOPE_SLOWDOWN_MIN=5 "$COLLSCOPE" analyze --force "$T/scatter$1" > /dev/null 2>&1 || fail "scatter: analyze failed"
"$COLLSCOPE" report "$T/scatter$1" --format json -o "$T/scatter$1.json" || fail "scatter: report failed"
"$PY" - "$T/scatter$1.json" "$T/scatter$1.out" "$T/clean$1.json" <<'PYEOF' || fail "scatter: see above"
import json, os, statistics, sys
sd = json.load(open(sys.argv[1]))["slowdown"]
c = json.load(open(sys.argv[3]))["slowdown"]
s0 = c["S"] if c and c["S"] > 0 else 1.0
r = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(sys.argv[2]) if l.startswith("PIPE ")]
truth = statistics.median(float(x["model_us"]) / float(x["ideal_us"]) for x in r)
tol = float(os.environ["CS_SD_TOL_S"])
print("imbalance: S %.3f (clean %.3f) settings %.3f, verdict %s: %s" % (sd["S"], s0, truth, sd["verdict"], sd["text"]))
bad = []
if sd["verdict"] != "scattered":
    bad.append("verdict %s, want scattered" % sd["verdict"])
if abs(sd["S"] - truth) > tol * truth:
    bad.append("S %.3f, the settings' %.3f (not within %.0f %%)" % (sd["S"], truth, 100 * tol))
if bad:
    sys.exit("FAIL: scatter: " + "; ".join(bad))
PYEOF
echo "ok: scatter$1: scattered"

# its twin through the PyTorch profiler's layout: a slow stage's trace
# (GPipe: a Kineto trace has no Sendrecv, its export keeps only the send
# half) exported as Kineto JSON and imported back gives the same layout,
# verdict and culprit, and an S within 5 % of the MPI trace's
run gstage --seed "$1" --gpipe --heavy-stage 2 --heavy-us $SLOW
"$COLLSCOPE" export "$T/gstage" --format kineto -o "$T/gstage-kineto" 2>"$T/kexp.err" ||
  fail "kineto export: $(cat "$T/kexp.err")"
"$COLLSCOPE" import -o "$T/gstage-imported" "$T/gstage-kineto" >"$T/imp.out" 2>&1 || fail "import: $(cat "$T/imp.out")"
"$COLLSCOPE" report "$T/gstage-imported" --format json -o "$T/gstage-imported.json" || fail "report of the import"
"$PY" - "$T/gstage.json" "$T/gstage-imported.json" <<'PYEOF' || fail "the imported twin: see above"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
if a["slowdown"]["verdict"] != "slow_stage" or a["slowdown"]["culprit"] != "pp stage 2":
    sys.exit("the MPI trace: %s" % a["slowdown"]["text"])
for k in ("verdict", "culprit"):
    if a["slowdown"][k] != b["slowdown"][k]:
        sys.exit("imported %s %r, the MPI trace's %r" % (k, b["slowdown"][k], a["slowdown"][k]))
if (a["layout"] or {}).get("text") != (b["layout"] or {}).get("text"):
    sys.exit("imported layout %r, the MPI trace's %r" % (b["layout"], a["layout"]))
if abs(a["slowdown"]["S"] - b["slowdown"]["S"]) > 0.05 * a["slowdown"]["S"]:
    sys.exit("imported S %.3f, the MPI trace's %.3f" % (b["slowdown"]["S"], a["slowdown"]["S"]))
print("imported twin: %s, %s, S %.3f (MPI trace: %.3f)" % (b["layout"]["text"], b["slowdown"]["text"],
      b["slowdown"]["S"], a["slowdown"]["S"]))
PYEOF
echo "ok: the imported Kineto twin gives the same layout, verdict, culprit and S"

# the gate: the clean run passes the floor, the slow worker fails it (exit 3)
"$COLLSCOPE" report "$T/clean$1" --fail-on slowdown=$COLLSCOPE_SLOWDOWN_MIN >"$T/gate-clean.txt" ||
  fail "gate: the clean run failed slowdown=$COLLSCOPE_SLOWDOWN_MIN"
rc=0
"$COLLSCOPE" report "$T/worker$1" --fail-on slowdown=$COLLSCOPE_SLOWDOWN_MIN >"$T/gate-worker.txt" || rc=$?
[ $rc -eq 3 ] || fail "gate: the slow worker's report exited $rc, want 3"
grep -q "slowdown.*rank [0-9] explains" "$T/gate-worker.txt" || fail "gate: no slowdown line naming the slow rank"
grep -q "^Slowdown: S " "$T/gate-worker.txt" || fail "no Slowdown section in the text report"
echo "ok: --fail-on slowdown=$COLLSCOPE_SLOWDOWN_MIN"
pass
