# recurring.inc.sh: the recurring straggler verdict on nbloop (a DDP-style
# bucket loop, 4 ranks) under one MPI ($CS_MPI: openmpi or mpich). One rank
# sleeps LATE_US before communicating in every 2nd, 3rd and 10th step and
# in random steps (--late-random); each run must give one verdict,
# `recurring`, on that rank (and none on the others beyond scheduler noise,
# a fifth of the stall), with the period (periodic cases), the steps the
# program says were late (every step found within +-1 of one of them, at
# most one of them missed, the first step being the analysis's warm-up,
# besides late steps where another rank lost its core for about as long:
# the program's own clocks show the late rank held the others up by less
# than half the stall there; a step found that was not late counts when
# those clocks show the rank stalled there anyway), and a cost per affected step within 10 % of
# the late rank's excess over the next slowest rank as the program's own
# clocks measured it (NBLOOP_GAPS: each rank's time between collectives,
# the interval the verdict measures, so that scheduling noise moves both
# alike); a clean run gives no recurring verdict and nothing beyond noise
# (a fifth of the stall) that the program's own clocks do not show.
# Each case with markers (nonblocking buckets and MPI_Waitall, MPI_Pcontrol
# each step) and without (blocking buckets: one MPI_Allreduce per step,
# whose period the step detection finds; the leading MPI_Barrier makes a
# step of its own, hence the +-1).
# And the nonblocking loop without markers, whose steps come from the
# period of its call sequence. Sourced by
# recurring_ompi.sh and recurring_mpich.sh.
need_mpi "$CS_MPI"
MPIRUN=$(mpirun_for "$CS_MPI")
case $CS_MPI in openmpi) PROG="$B/tests/progs/nbloop_ompi" ;; *) PROG="$B/tests/progs/nbloop_mpich" ;; esac
[ -x "$PROG" ] || skip "$PROG not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
LATE_RANK=2
LATE_US=50000
STEPS=60
COMMON="--steps $STEPS --compute-us 3000 --bytes 2048"

# trace NAME ARGS...: nbloop traced into $T/NAME, its output in $T/NAME.out,
# the report's JSON in $T/NAME.json
trace() {
  _n=$1; shift
  "$COLLSCOPE" run -o "$T/$_n" -- "$MPIRUN" -np 4 "$PROG" $COMMON "$@" >"$T/$_n.out" 2>&1 ||
    fail "$_n: traced run failed (see $T/$_n.out)"
  "$COLLSCOPE" report "$T/$_n" --format json -o "$T/$_n.json" || fail "$_n: report failed"
}

# check NAME PERIOD: the one verdict of run NAME (PERIOD 0: irregular, any period)
check() {
  "$PY" - "$T/$1.json" "$T/$1.out" "$2" "$LATE_RANK" "$LATE_US" <<'EOF' || fail "$1: see above"
import json, re, sys
d = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
period, rank, late_us = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
m = re.search(r"NBLOOP rank=0 .*late_steps=([0-9,]+)", out)
want = [int(x) for x in m.group(1).split(",")]
v = d["stragglers"]
print("verdicts:", [(s["kind"], s["rank"], s["period"], s["cost_ns"], s["steps"]) for s in v])
print("late steps:", want)
# Other ranks may get a verdict of scheduler-noise size (MPICH's
# busy-polling ranks on 2 loaded cores: a transient 4 ms on another rank
# beside a 50 ms stall, once in about 20 runs); nothing near the stall.
noise = [s for s in v if s["rank"] != rank and s["cost_ns"] < late_us * 200]
if noise:
    print("note: noise-sized verdicts on other ranks:", [(s["kind"], s["rank"], s["cost_ns"]) for s in noise])
v = [s for s in v if s not in noise]
if len(v) != 1 or v[0]["kind"] != "recurring" or v[0]["rank"] != rank:
    sys.exit("want one recurring verdict on rank %d" % rank)
s = v[0]
if period and s["period"] != period:
    sys.exit("period %d, want %d" % (s["period"], period))
found = s["steps"]
if len(found) != s["affected_steps"]:
    sys.exit("%d steps listed, %d affected" % (len(found), s["affected_steps"]))
# The program's own clocks: each rank's time between collectives per step
# (NBLOOP_GAPS), the interval the verdict measures. The late rank's
# excess over the next slowest rank in a step is what it held the others
# up by, measured by the program; a late step where another rank lost its
# core for about as long (a loaded machine) has little of it, and the
# verdict rightly leaves it out.
gaps = {int(r): [float(x) for x in g.split(",")] for r, g in re.findall(r"NBLOOP_GAPS rank=(\d+) us=([0-9.,]+)", out)}
if rank not in gaps or len(gaps) < 2:
    sys.exit("the program printed no NBLOOP_GAPS lines")
def excess(w):
    return gaps[rank][w] - max(g[w] for q, g in gaps.items() if q != rank)
def near(x):
    return max(excess(w) for w in range(max(x - 1, 0), min(x + 2, len(gaps[rank]))))
stray = [x for x in found if not any(abs(x - w) <= 1 for w in want)]
# a step found that the program did not make late, where its clocks show
# the rank held the others up by half the stall or more all the same (a
# loaded machine took its core that long): a stall, rightly found
stalled = [x for x in stray if near(x) >= late_us / 2]
if stalled:
    print("note: steps found where the program saw the rank stall though it did not sleep:",
          [(x, round(near(x))) for x in stalled])
stray = [x for x in stray if x not in stalled]
missed = [w for w in want if w >= 1 and not any(abs(x - w) <= 1 for x in found)]
masked = [w for w in missed if excess(w) < late_us / 2]
if masked:
    print("note: late steps the program saw masked by another rank (its excess under half the stall):",
          [(w, round(excess(w))) for w in masked])
missed = [w for w in missed if w not in masked]
if stray or len(missed) > 1:
    sys.exit("steps found not late: %s; late steps missed: %s" % (stray, missed))
# the cost and the total against the same excess as the program measured
# it, over the late steps the steps found stand for (each its nearest)
own = sorted(near(x) if x in stalled else excess(min(want, key=lambda w: abs(w - x))) for x in found)
own_med = own[len(own) // 2] if len(own) % 2 else (own[len(own) // 2 - 1] + own[len(own) // 2]) / 2
print("the program's own excess of rank %d in those steps: median %.0f us, total %.0f us" % (rank, own_med, sum(own)))
if abs(s["cost_ns"] - own_med * 1000) > own_med * 100:
    sys.exit("cost %d ns per affected step, not within 10 %% of the late rank's excess as the program measured it, "
             "%.0f us (set: %d us)" % (s["cost_ns"], own_med, late_us))
# the total: the excess of the steps found, each at least 90 % of it, and
# not counted twice (a step may lose a scheduler slice or more besides)
if not 0.9 <= s["total_ns"] / (sum(own) * 1000.0) <= 1.5:
    sys.exit("total %d ns, not within 0.9-1.5 x the program's own %.0f us over %d steps" %
             (s["total_ns"], sum(own), len(found)))
print("ok: recurring rank %d, period %d, %d steps, cost %d ns" % (s["rank"], s["period"], len(found), s["cost_ns"]))
EOF
}
# clean NAME: no recurring verdict, and none of another kind beyond noise
# (the transient verdict gave a 4.7 ms window in 1 of about 20 clean MPICH
# runs on 2 loaded cores)
clean() {
  "$PY" - "$T/$1.json" "$LATE_US" "$T/$1.out" <<'EOF' || fail "$1: a clean run got verdicts (see above)"
import json, re, sys
v = json.load(open(sys.argv[1]))["stragglers"]
out = open(sys.argv[3]).read()
print("verdicts:", [(s["kind"], s["rank"], s["cost_ns"], s["first_step"], s["last_step"]) for s in v])
# A verdict beyond noise (a fifth of the stall) on a clean run is an
# invented one unless the program's own clocks (NBLOOP_GAPS: each rank's
# time between collectives) show that rank holding the others up by half
# its cost or more in its steps (+-1): a rank that lost its core for that
# long on a loaded machine, which the verdict rightly names.
gaps = {int(r): [float(x) for x in g.split(",")] for r, g in re.findall(r"NBLOOP_GAPS rank=(\d+) us=([0-9.,]+)", out)}
def own(r, a, b):
    n = len(gaps.get(r, []))
    ex = [gaps[r][w] - max(g[w] for q, g in gaps.items() if q != r) for w in range(max(a - 1, 0), min(b + 2, n))]
    return max(ex) if ex and len(gaps) > 1 else 0
bad = []
for s in v:
    if s["kind"] == "recurring":
        bad.append(s)
    elif s["cost_ns"] >= int(sys.argv[2]) * 200:
        seen = own(s["rank"], s["first_step"], s["last_step"])
        print("note: %s on rank %d, %d ns: the program's own excess of that rank in its steps: up to %.0f us" %
              (s["kind"], s["rank"], s["cost_ns"], seen))
        if seen * 1000 < s["cost_ns"] / 2:
            bad.append(s)
sys.exit(1 if bad else 0)
EOF
  echo "ok: $1: clean, no recurring verdict, none beyond noise that the program did not see"
}

# cases MODE ARGS...: the four late patterns and a clean run
cases() {
  _m=$1; shift
  for k in 2 3 10; do
    trace "$_m-every$k" "$@" --late-rank $LATE_RANK --late-us $LATE_US --late-every $k
    check "$_m-every$k" $k
  done
  trace "$_m-random" "$@" --late-rank $LATE_RANK --late-us $LATE_US --late-random 6 --seed 7
  check "$_m-random" 0
  trace "$_m-clean" "$@"
  clean "$_m-clean"
}

# RECURRING_MARKERS=0 (recurring_mpich.sh) leaves the markers' pass out:
# steps from MPI_Pcontrol do not depend on the MPI, and recurring_ompi.sh
# runs it (the suite's time)
if [ "${RECURRING_MARKERS:-1}" = 1 ]; then
  cases markers --markers --buckets 8
  # the text report and the gate on the every-3rd-step run: rank 2 loses
  # 50 ms in a third of the steps, far more than 1 % and less than 99 % of
  # the steps' time
  "$COLLSCOPE" report "$T/markers-every3" >"$T/every3.txt" || fail "text report failed"
  grep -q "recurring *rank 2 .*every 3 steps" "$T/every3.txt" || fail "the text report lacks the recurring verdict: $(grep -A1 recurring "$T/every3.txt")"
  "$COLLSCOPE" report "$T/markers-every3" --format junit --fail-on recurring=1 >"$T/gate.xml"
  [ $? = 3 ] || fail "--fail-on recurring=1 passed on a recurring straggler"
  grep -q 'worst recurring straggler: rank 2' "$T/gate.xml" || fail "the gate does not name the straggler"
  "$COLLSCOPE" report "$T/markers-every3" --fail-on recurring=99 >/dev/null || fail "--fail-on recurring=99 failed"
  "$COLLSCOPE" report "$T/markers-clean" --fail-on recurring=1 >/dev/null || fail "--fail-on recurring=1 failed on a clean run"
  echo "ok: text report and --fail-on recurring"
fi
cases blocking --blocking --buckets 1
cases nbnomark --buckets 8
pass
