#!/bin/sh
# An injected delay on one rank of the NCCL trainer (stand-ins, 4 ranks) is
# reported by the same analysis as for MPI: a persistent straggler.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
run_trainer "$T/r" "$T/run.out" --steps 12 --delay-us 20000 --delay-ranks 2
"$COLLSCOPE" report "$T/r" --format json > "$T/report.json" 2> "$T/report.err" || { cat "$T/report.err"; fail "report failed"; }
"$PYTHON3" - "$T/report.json" <<'PY' || fail "no persistent straggler on rank 2 in the report"
import json, sys
d = json.load(open(sys.argv[1]))
s = [g for g in d.get("stragglers", []) if g.get("kind") == "persistent" and g.get("rank") == 2]
print("stragglers:", [(g.get("kind"), g.get("rank")) for g in d.get("stragglers", [])])
sys.exit(0 if s else 1)
PY
echo "ok: rank 2 is a persistent straggler"
pass
