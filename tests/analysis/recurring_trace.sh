#!/bin/sh
# The recurring verdict on a recorded trace where a transient window once
# hid it: nbloop under MPICH, 4 ranks on 2 loaded cores, rank 2 stalled
# 50 ms in steps 15,20,28,37,40,53 (--late-random 6 --seed 7, no markers).
# MPICH's busy-polling ranks lose 4 ms scheduler slices, which made
# transient windows on rank 2 (steps 15-21 and 37-45) around the stalls;
# the rank then got only those. The stall is the verdict: one recurring
# verdict on rank 2 with exactly those steps, about 50 ms each, and no
# transient on rank 2 (data/mpich_recurring_random.db.gz, made with
# `collscope run` as tests/analysis/recurring.inc.sh does).
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
gzip -dc "$S/tests/analysis/data/mpich_recurring_random.db.gz" > "$T/trace.db" || fail "cannot unpack the trace"
"$COLLSCOPE" analyze --force "$T/trace.db" > "$T/analyze.out" 2>&1 || fail "analyze failed: $(cat "$T/analyze.out")"
"$COLLSCOPE" report "$T/trace.db" --format json -o "$T/r.json" || fail "report failed"
"$PY" - "$T/r.json" <<'PYEOF' || fail "see above"
import json, sys
v = json.load(open(sys.argv[1]))["stragglers"]
print("verdicts:", [(s["kind"], s["rank"], s["cost_ns"], s["steps"]) for s in v])
r2 = [s for s in v if s["rank"] == 2]
if len(r2) != 1 or r2[0]["kind"] != "recurring":
    sys.exit("want one recurring verdict on rank 2 and nothing else on it")
s = r2[0]
if s["steps"] != [15, 20, 28, 37, 40, 53]:
    sys.exit("steps %s, want 15,20,28,37,40,53" % s["steps"])
if not 45e6 <= s["cost_ns"] <= 55e6:
    sys.exit("cost %d ns per affected step, want 50 ms +- 10 %%" % s["cost_ns"])
PYEOF
echo "ok: the recurring stall on rank 2, not the windows around it"
pass
