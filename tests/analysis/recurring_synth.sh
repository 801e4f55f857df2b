#!/bin/sh
# The recurring straggler verdict on synthetic traces of known answers
# (bench/gen_trace --recurring, no MPI, deterministic): 8 ranks, 100 steps
# of about 1 ms. One rank computes longer every 2nd, 3rd and 10th step, or
# in steps drawn by a hash (irregular): each is one `recurring` verdict on
# that rank with the period and phase (periodic) or exactly those steps
# (irregular), and a cost per affected step within 2 % of the delay; a
# window of late steps stays transient and a delay in every step
# persistent; a clean trace with 1.5 ms of compute jitter has no verdict.
# Then the JSON fields, the text report and the recurring=PCT gate.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
gen() { _n=$1; shift; "$GEN" "$T/$_n.db" --ranks 8 --steps 100 "$@" >/dev/null || fail "gen_trace $_n failed"; }
report() { "$COLLSCOPE" report "$T/$1.db" --format json -o "$T/$1.json" || fail "$1: report failed"; }

# check NAME RANK PERIOD PHASE US STEPS: one recurring verdict (STEPS: the
# expected steps, comma-separated)
check() {
  report "$1"
  "$PY" - "$T/$1.json" "$2" "$3" "$4" "$5" "$6" <<'EOF' || fail "$1: see above"
import json, sys
d = json.load(open(sys.argv[1]))
rank, period, phase, us = (int(x) for x in sys.argv[2:6])
want = [int(x) for x in sys.argv[6].split(",")]
v = d["stragglers"]
print("verdicts:", [(s["kind"], s["rank"], s["period"], s["phase"], s["cost_ns"], s["steps"]) for s in v])
if len(v) != 1 or v[0]["kind"] != "recurring" or v[0]["rank"] != rank:
    sys.exit("want one recurring verdict on rank %d" % rank)
s = v[0]
if (s["period"], s["phase"]) != (period, phase):
    sys.exit("period %d phase %d, want %d and %d" % (s["period"], s["phase"], period, phase))
if s["steps"] != want or s["affected_steps"] != len(want):
    sys.exit("steps %s, want %s" % (s["steps"], want))
if abs(s["cost_ns"] - us * 1000) > us * 20:
    sys.exit("cost %d ns, not within 2 %% of %d us" % (s["cost_ns"], us))
if abs(s["total_ns"] - len(want) * us * 1000) > len(want) * us * 20:
    sys.exit("total %d ns, want %d steps x %d us" % (s["total_ns"], len(want), us))
print("ok: recurring rank %d, period %d, phase %d, %d steps, cost %d ns" % (rank, period, phase, len(want), s["cost_ns"]))
EOF
}
# the steps of 1..99 (step 0 is the warm-up) in every K-th step, or (K < 0)
# in the hashed ones, as gen_trace draws them
steps() {
  "$PY" -c 'import sys
def h(k):
    x = k * 2654435761 & 0xffffffff
    x ^= x >> 15
    x = x * 2246822519 & 0xffffffff
    return x ^ (x >> 13)
k = int(sys.argv[1])
print(",".join(str(s) for s in range(1, 100) if (s % k == k - 1 if k > 0 else h(s) % -k == 0)))' "$1"
}

gen every2 --recurring 1:2:5000
check every2 1 2 1 5000 "$(steps 2)"
gen every3 --recurring 3:3:5000
check every3 3 3 2 5000 "$(steps 3)"
gen every10 --recurring 5:10:5000
check every10 5 10 9 5000 "$(steps 10)"
# irregular: a cost of at least 5 x the minimum effect (2 ms)
gen random --recurring 6:-7:12000
check random 6 0 0 12000 "$(steps -7)"

# the neighbours keep their verdicts: a window, and every step
gen window --transient 4:40-59:5000
report window
v=$("$PY" -c 'import json,sys; print(" ".join("%s/%d" % (s["kind"], s["rank"]) for s in json.load(open(sys.argv[1]))["stragglers"]))' "$T/window.json")
[ "$v" = "transient/4" ] || fail "window: want one transient verdict on rank 4, got [$v]"
gen pers --persistent 2:5000
report pers
v=$("$PY" -c 'import json,sys; print(" ".join("%s/%d" % (s["kind"], s["rank"]) for s in json.load(open(sys.argv[1]))["stragglers"]))' "$T/pers.json")
[ "$v" = "persistent/2" ] || fail "pers: want one persistent verdict on rank 2, got [$v]"
echo "ok: a window is transient, every step persistent"
# clean, with compute jitter of up to 1.5 ms per step on every rank
gen clean --jitter 1500
report clean
v=$("$PY" -c 'import json,sys; print(" ".join("%s/%d" % (s["kind"], s["rank"]) for s in json.load(open(sys.argv[1]))["stragglers"]))' "$T/clean.json")
[ -z "$v" ] || fail "clean: verdicts [$v]"
echo "ok: clean, no verdict"

# text report, JUnit and the gate: 33 steps x 5 ms of about 100 x 1.1 ms
"$COLLSCOPE" report "$T/every3.db" >"$T/every3.txt" || fail "text report failed"
grep -q "recurring *rank 3 .*every 3 steps (phase 2), 33 steps" "$T/every3.txt" ||
  fail "text report: $(grep -A1 recurring "$T/every3.txt")"
"$COLLSCOPE" report "$T/every3.db" --format junit >"$T/every3.xml"
grep -q "recurring rank 3 every 3 steps (phase 2)" "$T/every3.xml" || fail "JUnit: no recurring verdict named"
"$COLLSCOPE" report "$T/every3.db" --fail-on recurring=5 >/dev/null
[ $? = 3 ] || fail "--fail-on recurring=5 passed"
"$COLLSCOPE" report "$T/every3.db" --fail-on recurring=90,persistent=1 >/dev/null || fail "--fail-on recurring=90 failed"
"$COLLSCOPE" report "$T/every3.db" --fail-on recurring >/dev/null 2>&1
[ $? = 2 ] || fail "--fail-on recurring without a percentage accepted"
echo "ok: text, JUnit, --fail-on recurring"
pass
