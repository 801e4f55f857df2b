#!/bin/sh
# The what-if replay (analyzer/analysis/an_whatif.c) on inputs of known answers, and
# its proposals and check-estimate's input checks on a traced trainer:
#  - synthetic traces (bench/gen_trace, no MPI, deterministic): 8 ranks,
#    100 steps whose allreduces cost exactly alpha + bytes x beta (150 us,
#    0.5 ns per byte), without and with jitter: the replay with the
#    measured transfers gives the measured median step back exactly, the
#    replay with the cost models within 1 %;
#  - the same traces with rank 3 computing 5 ms longer every step: a
#    persistent straggler, and "stragglers on time" predicts the gain of
#    removing it (the generator's 5 ms, also the difference of the two
#    traces' median steps) within 1 %;
#  - the two allreduces a step of the synthetic trace (alpha 150 us, about
#    10 % of the step: above the 7.5 % a proposal needs): a fusion proposal
#    of 2 calls per step, gaining at most the one alpha it saves, with no
#    apply-mode settings (blocking calls);
#  - the example trainer, 4 ranks under Open MPI, 64 blocking buckets: the
#    fusion proposal is in the text, JSON and Markdown reports with its call
#    site, bucket size and the fit it rests on; with 64 nonblocking buckets
#    and one Waitall (every completion holds 64 calls: their per-call cost
#    cannot be told from the transfer) the report says why it proposes
#    nothing unless the starts alone are worth 5 % of the step;
#  - check-estimate on the synthetic pair whose AFTER is 5 ms a step slower
#    does not confirm, whatever the tolerance;
#  - bad input to check-estimate exits 2 with one message, a trace without
#    steps exits 3.
# Nothing here depends on how fast the machine runs: how well the replay
# reproduces real runs is measured by bench/whatif_bench.sh (printed, not
# asserted; bench/README.md).
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"

# 1. synthetic traces of known costs, with and without a straggler
for jit in 0 20; do
  for s in clean pers; do
    extra=
    [ $s = pers ] && extra="--persistent 3:5000"
    "$GEN" "$T/$s$jit.db" --ranks 8 --steps 100 --jitter $jit --cost 150000:500 $extra > /dev/null ||
      fail "gen_trace $s (jitter $jit us) failed"
    "$COLLSCOPE" report "$T/$s$jit.db" --format json -o "$T/$s$jit.json" || fail "$s$jit: report failed"
  done
  "$PY" - "$T/clean$jit.json" "$T/pers$jit.json" $jit <<'PYEOF' || fail "replay of the synthetic traces (jitter $jit us)"
import json, sys
c, p = (json.load(open(f)) for f in sys.argv[1:3])
for name, d in (("clean", c), ("straggler", p)):
    w = d["whatif"]
    print("jitter %s us, %s: measured %d ns, replayed %d ns (error %g), with the models %d ns (error %g)" % (
        sys.argv[3], name, w["measured_step_ns"], w["replay_step_ns"], w["replay_error"], w["model_step_ns"],
        w["model_error"]))
    assert w["replayed"] and w["replay_error"] == 0 and w["replay_step_ns"] == w["measured_step_ns"], w
    assert w["model_error"] < 0.01, w
assert not c["stragglers"] and c["whatif"]["ontime_gain_ns"] == 0, (c["stragglers"], c["whatif"])
v = [(s["kind"], s["rank"]) for s in p["stragglers"]]
assert v == [("persistent", 3)], v
pred = p["whatif"]["ontime_gain_ns"]
meas = p["whatif"]["measured_step_ns"] - c["whatif"]["measured_step_ns"]
print("stragglers on time: predicted gain %d ns, the traces' difference %d ns, injected 5000000 ns" % (pred, meas))
assert abs(meas - 5000000) <= 50000 and abs(pred - 5000000) <= 50000 and abs(pred - meas) <= 0.01 * meas, (pred, meas)
f = [x for x in c["proposals"] if x["kind"] == "fusion"]
assert len(f) == 1 and f[0]["calls_per_step"] == 2 and 0 < f[0]["gain_ns"] <= 150000 and f[0]["env"] == "", f
assert "fitted: R2" in f[0]["evidence"], f
PYEOF
  echo "ok: jitter $jit us: replay exact, models within 1 %, straggler's gain predicted within 1 %, fusion of 2 calls"
done
# check-estimate confirms only what the step time shows: AFTER (the trace
# with the straggler) is 5 ms a step slower; even a tolerance that any
# error passes does not confirm it
"$COLLSCOPE" check-estimate "$T/clean0.db" "$T/pers0.db" --tolerance 100000 > "$T/worse.txt"; rc=$?
cat "$T/worse.txt"
[ $rc = 1 ] || fail "check-estimate on a slower AFTER: exit $rc, want 1 (not confirmed)"
grep -q '^  BEFORE 100 steps (from markers)' "$T/worse.txt" && grep -q '^  AFTER  100 steps (from markers)' "$T/worse.txt" &&
  grep -q 'NOT shown' "$T/worse.txt" || fail "check-estimate on a slower AFTER: step counts or the gain's verdict missing"
echo "ok: check-estimate does not confirm a step time that got worse"

# 2. the trainer, traced: its fusion proposal
# trace NAME NP ARGS...: the trainer traced into $T/NAME, JSON report in $T/NAME.json
trace() {
  _n=$1; _np=$2; shift 2
  "$COLLSCOPE" run -o "$T/$_n" -- "$MPIRUN" -np "$_np" "$TRAINER" "$@" >"$T/$_n.out" 2>&1 ||
    fail "$_n: traced run failed (see $T/$_n.out)"
  "$COLLSCOPE" report "$T/$_n" --format json -o "$T/$_n.json" 2>/dev/null || fail "$_n: report failed"
}
trace nb64 4 --steps 200 --buckets 64 --nonblocking
"$PY" - "$T/nb64.json" <<'PYEOF' || fail "nonblocking buckets: proposal or reason"
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["proposals"] if x["kind"] == "fusion"]
if p:
    assert "overlapping" in p[0]["evidence"] and p[0]["gain_ns"] >= 0.05 * p[0]["step_ns"], p
    print("proposed on the starts alone: " + p[0]["evidence"])
else:
    assert any("MPI_Iallreduce" in l for l in d["proposals_declined"]), d["proposals_declined"]
    print("not proposed: " + d["proposals_declined"][0])
PYEOF
trace b64 4 --steps 200 --buckets 64
# the fusion proposal in the three formats
"$PY" - "$T/b64.json" <<'PYEOF' || fail "JSON report: no fusion proposal"
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["proposals"] if x["kind"] == "fusion"]
assert p, d["proposals"]
p = p[0]
print(p["evidence"])
assert "mpi_trainer.c:" in p["callsite"] and p["bucket_bytes"] > 0 and p["gain_ns"] > 0 and p["calls_per_step"] == 64
assert p["env"] == "" and "bucket them in the program" in p["evidence"], p
assert p["gain_ns"] >= 0.05 * p["step_ns"], p
assert p["curve"] and all("gain_ns" in c and "gain_program_ns" in c for c in p["curve"])
m = [x for x in d["cost_models"] if x["op"] == "MPI_Allreduce"]
assert m and m[0]["points"] > 0 and "note" in m[0], d["cost_models"]
PYEOF
"$COLLSCOPE" report "$T/b64" > "$T/b64.txt" 2>/dev/null || fail "text report failed"
grep -q '^  fusion .*mpi_trainer.c:[0-9]* .*bucket' "$T/b64.txt" ||
  { sed -n '/^Proposals/,$p' "$T/b64.txt"; fail "text report: no fusion proposal with call site and bucket"; }
"$COLLSCOPE" report "$T/b64" --format markdown -o "$T/b64.md" 2>/dev/null || fail "markdown report failed"
grep -q '^### Proposals' "$T/b64.md" && grep -q '^| fusion | mpi_trainer.c:[0-9]* .*alpha' "$T/b64.md" ||
  { cat "$T/b64.md"; fail "markdown report: no fusion proposal"; }
echo "ok: the fusion proposal is in the text, JSON and Markdown reports"

# 3. bad input: exit 2, one message
bad() { # bad DESCRIPTION BEFORE AFTER [STATUS]
  "$COLLSCOPE" check-estimate "$2" "$3" > "$T/bad.out" 2> "$T/bad.err"; _rc=$?
  [ $_rc = "${4:-2}" ] || { cat "$T/bad.err"; fail "$1: exit $_rc, want ${4:-2}"; }
  [ "$(grep -c . "$T/bad.err")" = 1 ] || { cat "$T/bad.err"; fail "$1: not one message"; }
  echo "ok: $1: exit $_rc: $(cat "$T/bad.err")"
}
bad "missing directory" "$T/nowhere" "$T/nb64"
trace two 2 --steps 10 --buckets 4 --nonblocking
bad "different rank counts" "$T/nb64" "$T/two"
"$B/bench/gen_trace" "$T/other.db" --ranks 4 --steps 10 > /dev/null || fail "gen_trace failed"
bad "different jobs" "$T/nb64" "$T/other.db"
trace one 4 --steps 1 --buckets 4 --nonblocking
bad "a trace without steps" "$T/b64" "$T/one" 3
"$COLLSCOPE" --help | grep -q 'check-estimate' || fail "collscope --help does not list check-estimate"

# check-estimate against a real apply-mode run: tests/analysis/apply_estimate.sh
pass
