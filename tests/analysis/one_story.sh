#!/bin/sh
# One story per report: a rank late by the same 3 ms in every step, with
# 20 ms more in its first four steps (a start-up, as the demo's first steps
# have), is a persistent straggler in the straggler section and the slow
# worker of the slowdown attribution, in text and JSON alike (before, the
# start-up's share of its excess made the attribution call it "scattered";
# bench/gen_trace, 8 ranks, 60 steps, no MPI).
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/t.db" --ranks 8 --steps 60 --persistent 3:3000 --transient 3:0-3:20000 --jitter 50 --seed 4 > /dev/null ||
  fail "gen_trace failed"
# one_story NAME DB RANK: the JSON report of DB names RANK as the one
# persistent straggler and as the slow worker
one_story() {
  "$COLLSCOPE" report "$2" --format json > "$T/$1.json" 2> "$T/$1.err" || { cat "$T/$1.err"; fail "$1: report failed"; }
  "$PY" - "$T/$1.json" "$1" "$3" <<'PYEOF' || fail "$1: the two sections tell different stories"
import json, sys
d = json.load(open(sys.argv[1]))
name, rank = sys.argv[2], int(sys.argv[3])
strag = [(s["kind"], s["rank"]) for s in d["stragglers"]]
sd = d["slowdown"]
print(name + ": stragglers", strag, "slowdown", sd["verdict"], sd["culprit"], sd["S"])
assert strag == [("persistent", rank)], strag
assert sd["verdict"] == "slow_worker" and sd["culprit"] == str(rank), (sd["verdict"], sd["culprit"])
PYEOF
  echo "ok: $1: persistent rank $3 and the slow worker rank $3"
}
one_story gen "$T/t.db" 3
"$COLLSCOPE" report "$T/t.db" > "$T/r.txt" 2>&1 || fail "text report failed"
grep -q 'persistent  *rank 3' "$T/r.txt" || fail "the text's straggler section does not name rank 3: $(grep -A2 Stragglers "$T/r.txt")"
grep -A1 '^Slowdown' "$T/r.txt" | grep -q 'rank 3 explains' || fail "the text's slowdown does not name rank 3: $(grep -A1 '^Slowdown' "$T/r.txt")"
echo "ok: the text names rank 3 in both sections"

# The same on a recorded demo where shared cores vary the late rank's
# excess from step to step: examples/mpi_trainer_ompi, 4 ranks on 2
# loaded cores, rank 2 made 3 ms late every step (--steps 40 --compute-us
# 2000 --delay-us 3000 --delay-ranks 2, as scripts/setup.sh demo runs
# it). Its per-step excess is 3.0-7.2 ms as its core is shared or not
# (0.15 of it moves from step to step), yet it leads every other rank in
# 37 of 40 steps: the slow worker (data/demo_shared_cores.db.gz, the
# trace of `collscope run` with its analysis tables dropped).
gzip -dc "$S/tests/analysis/data/demo_shared_cores.db.gz" > "$T/demo.db" || fail "cannot unpack the demo trace"
one_story demo "$T/demo.db" 2
# every estimate of the saving side by side, each as its section has it
"$COLLSCOPE" report "$T/demo.db" > "$T/demo.txt" 2>&1 || fail "demo: text report failed"
"$PY" - "$T/demo.txt" "$T/demo.json" <<'PYEOF' || fail "demo: the estimates of the saving"
import json, re, sys
text, d = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
m = re.search(r"^  the saving measured (\d) ways \((.*)\):\n((?:    .*\n)+)", text, re.M)
assert m, "no 'the saving measured N ways' block"
rows = [l.split(None, 2) for l in m.group(3).splitlines()]
assert int(m.group(1)) == len(rows) == 4, rows
assert all(r[1] == "ms" for r in rows), rows
got = {r[2].rsplit("(", 1)[1].rstrip(")"): float(r[0]) for r in rows}
want = {"Stragglers": d["stragglers"][0]["cost_ns"] / 1e6, "what-if": d["whatif"]["ontime_gain_ns"] / 1e6}
for k, v in want.items():
    assert abs(got[k] - v) < 0.0015, (k, got[k], v)
vals = sorted(got.values())
agree = vals[-1] <= 1.25 * vals[0]
assert (m.group(2) == "they agree within 25 %") == agree, (m.group(2), vals)
# the JSON's answer is the text's
a = d["answer"]
assert a["culprit_rank"] == 2 and a["named_by"] == "slowdown" and a["culprit"].startswith("rank 2"), a
assert a["estimates_agree"] == agree, a
names = {"stragglers": "Stragglers", "steps": "Steps", "whatif": "what-if", "slowdown": "Slowdown"}
assert {names[e["source"]]: round(e["ns"] / 1e6, 3) for e in a["saving_estimates"]} == got, (a, got)
sv = re.search(r"^  saving: about ([0-9.]+) ms per step", text, re.M)
assert sv and abs(float(sv.group(1)) - a["saving_ns"] / 1e6) < 0.0015, (sv and sv.group(1), a["saving_ns"])
print("ok: demo: the saving measured 4 ways, in the text and the JSON alike", got)
PYEOF

# And a demo run beside three other builds on the 2 cores
# (data/demo_loaded.db.gz, the same command, ingested and not analysed):
# rank 2 explains 89 % of the slowdown but leads in 29 of 40 steps only,
# 21 % of its excess moves and the other ranks hold 60 % of the ranks'
# excess, failing the slowdown's own tests of a steady worker; the
# straggler section's persistent verdict names it, and so the slowdown
# does too, saying which figures failed (before: "no single worker or
# stage is to blame" under "persistent rank 2").
gzip -dc "$S/tests/analysis/data/demo_loaded.db.gz" > "$T/loaded.db" || fail "cannot unpack the loaded demo trace"
one_story loaded "$T/loaded.db" 2
moving=$(q "$T/loaded.db" "SELECT value FROM meta WHERE key = 'slowdown_moving_rank'")
lead=$(q "$T/loaded.db" "SELECT value FROM meta WHERE key = 'slowdown_lead_rank'")
awk -v m="$moving" -v l="$lead" 'BEGIN { exit !(m >= 0.10 && l < 0.75) }' ||
  fail "loaded: the trace no longer fails the steadiness tests (moving $moving, lead $lead): it tests nothing new"
expect_eq "loaded: the persistent straggler the slowdown saw" \
  "$(q "$T/loaded.db" "SELECT value FROM meta WHERE key = 'slowdown_persistent_rank'")" 2
"$COLLSCOPE" report "$T/loaded.db" > "$T/loaded.txt" 2>&1 || fail "loaded: text report failed"
grep -q '^  why: rank 2 explains [0-9]* % of the slowdown.*persistent in steps [0-9]*-[0-9]*, though [0-9]* % of its excess moves' \
  "$T/loaded.txt" || { head -n 12 "$T/loaded.txt"; fail "loaded: the why line does not say the straggler verdict named rank 2"; }
grep -q 'no single worker or stage is to blame' "$T/loaded.txt" && fail "loaded: the text still tells two stories"
echo "ok: loaded: the text blames rank 2 once, with the figures that failed (moving $moving, lead $lead)"
pass
