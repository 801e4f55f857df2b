#!/bin/sh
# The what-if replay on the example trainer, 4 ranks under Open MPI, traced
# with `collscope run` (issue 6):
#  - the replay with the cost models reproduces the measured median step
#    time within 5 % (the reported error): 64 buckets nonblocking and
#    blocking, and blocking with a straggler (0.2-3 % seen). (With busy
#    compute beside blocking calls, --compute-us 500, 4 ranks on 2 cores,
#    it was 0.4-23 %: a rank whose core runs another rank's compute leaves
#    the collective a scheduler slice late, which the trace shows as the
#    collective's transfer and one cost per call cannot give back.)
#  - "stragglers on time" predicts the gain of removing a 5 ms delay on
#    rank 1 within 25 % of the measured one (delayed run - run without);
#  - the fusion proposal of 64 nonblocking buckets is in the text, JSON and
#    Markdown reports with its call site, bucket size and apply-mode env;
#  - bad input to check-estimate exits 2 with one message.
# The estimate against a real apply-mode run: apply_estimate.sh.
# About 10 s on 2 cores.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"

# trace NAME NP ARGS...: the trainer traced into $T/NAME, JSON report in $T/NAME.json
trace() {
  _n=$1; _np=$2; shift 2
  "$COLLSCOPE" run -o "$T/$_n" -- "$MPIRUN" -np "$_np" "$TRAINER" "$@" >"$T/$_n.out" 2>&1 ||
    fail "$_n: traced run failed (see $T/$_n.out)"
  "$COLLSCOPE" report "$T/$_n" --format json -o "$T/$_n.json" 2>/dev/null || fail "$_n: report failed"
}

# replayed NAME ARGS...: trace the trainer (4 ranks) until the replay with
# the models reproduces the measured median step within 5 %, 3 tries: a
# burst of another job on the 2 shared cores (an MPICH job busy-polling
# beside this test gave 6-17 %) is not what the trace is about
replayed() {
  _r=$1; shift
  for _t in 1 2 3; do
    trace "$_r" 4 "$@"
    "$PY" - "$T/$_r.json" "$_r" <<'PYEOF' && return 0
import json, sys
w = json.load(open(sys.argv[1]))["whatif"]
print("%s: measured %d ns, replayed %d ns (error %.4f), with the models %d ns (error %.4f)" % (
    sys.argv[2], w["measured_step_ns"], w["replay_step_ns"], w["replay_error"], w["model_step_ns"], w["model_error"]))
assert w["replayed"] and w["replay_error"] < 0.001 and w["model_error"] <= 0.05, w
PYEOF
  done
  fail "$_r: the replay did not reproduce the measured step time within 5 % in 3 runs"
}
replayed nb64 --steps 200 --buckets 64 --nonblocking
replayed blk --steps 30 --buckets 64
replayed dly --steps 30 --buckets 64 --delay-us 5000 --delay-ranks 1
echo "ok: the replay reproduces the measured step times (models within 5 %)"

# 2. stragglers on time against the run without the delay
"$PY" - "$T/dly.json" "$T/blk.json" <<'PYEOF' || fail "stragglers-on-time prediction off"
import json, sys
d = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
assert any(s["kind"] == "persistent" and s["rank"] == 1 for s in d["stragglers"]), d["stragglers"]
pred = d["whatif"]["ontime_gain_ns"]
meas = d["steps"]["median_ns"] - c["steps"]["median_ns"]
print("stragglers on time: predicted gain %d ns, measured %d ns, error %.1f %%" % (pred, meas, 100 * abs(pred - meas) / meas))
assert meas > 0 and abs(pred - meas) <= 0.25 * meas
PYEOF
echo "ok: stragglers on time predicts the measured gain within 25 %"

# 3. the fusion proposal in the three formats
"$PY" - "$T/nb64.json" <<'PYEOF' || fail "JSON report: no fusion proposal"
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["proposals"] if x["kind"] == "fusion"]
assert p, d["proposals"]
p = p[0]
print(p["evidence"])
assert "mpi_trainer.c:" in p["callsite"] and p["bucket_bytes"] > 0 and p["gain_ns"] > 0 and p["calls_per_step"] == 64
assert "COLLSCOPE_FUSE=1" in p["env"] and "COLLSCOPE_FUSE_BUFFER=%d" % p["bucket_bytes"] in p["env"], p["env"]
assert p["curve"] and all("gain_ns" in c and "gain_program_ns" in c for c in p["curve"])
m = [x for x in d["cost_models"] if x["op"] == "MPI_Iallreduce"]
assert m and m[0]["points"] > 0 and "note" in m[0], d["cost_models"]
PYEOF
"$COLLSCOPE" report "$T/nb64" > "$T/nb64.txt" 2>/dev/null || fail "text report failed"
grep -q '^  fusion .*mpi_trainer.c:[0-9]* .*bucket' "$T/nb64.txt" && grep -q 'apply with: COLLSCOPE_FUSE=1' "$T/nb64.txt" ||
  { sed -n '/^Proposals/,$p' "$T/nb64.txt"; fail "text report: no fusion proposal with call site and bucket"; }
"$COLLSCOPE" report "$T/nb64" --format markdown -o "$T/nb64.md" 2>/dev/null || fail "markdown report failed"
grep -q '^### Proposals' "$T/nb64.md" && grep -q '^| fusion | mpi_trainer.c:[0-9]* .*COLLSCOPE_FUSE_BUFFER=' "$T/nb64.md" ||
  { cat "$T/nb64.md"; fail "markdown report: no fusion proposal"; }
echo "ok: the fusion proposal is in the text, JSON and Markdown reports"

# 4. bad input: exit 2, one message
bad() { # bad DESCRIPTION BEFORE AFTER
  "$COLLSCOPE" check-estimate "$2" "$3" > "$T/bad.out" 2> "$T/bad.err"; _rc=$?
  [ $_rc = 2 ] || { cat "$T/bad.err"; fail "$1: exit $_rc, want 2"; }
  [ "$(grep -c . "$T/bad.err")" = 1 ] || { cat "$T/bad.err"; fail "$1: not one message"; }
  echo "ok: $1: exit 2: $(cat "$T/bad.err")"
}
bad "missing directory" "$T/nowhere" "$T/nb64"
trace two 2 --steps 10 --buckets 4 --nonblocking
bad "different rank counts" "$T/nb64" "$T/two"
"$B/bench/gen_trace" "$T/other.db" --ranks 4 --steps 10 > /dev/null || fail "gen_trace failed"
bad "different jobs" "$T/nb64" "$T/other.db"
trace one 4 --steps 1 --buckets 4 --nonblocking
bad "a trace without steps" "$T/nb64" "$T/one"
"$COLLSCOPE" --help | grep -q 'check-estimate' || fail "collscope --help does not list check-estimate"

# 5. check-estimate against a real apply-mode run: tests/analysis/apply_estimate.sh
pass
