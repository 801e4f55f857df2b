#!/bin/sh
# An injected delay on one rank of the NCCL trainer (stand-ins, 4 ranks) is
# reported by the same analysis as for MPI: a persistent straggler, and
# the report's first lines name it with S and the saving per step.
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
# The report leads with the answer on this source too (issue 36's golden
# report per source: the MPI demo and an imported PyTorch job in
# tests/report/answer.sh, this NCCL stand-in job here): the first lines
# name rank 2, S as the JSON has it and a saving per step within 25 % of
# the 20 ms injected; no line mixes time units; the JSON's answer is the
# text's.
"$COLLSCOPE" report "$T/r" > "$T/report.txt" 2> "$T/report.err" || { cat "$T/report.err"; fail "text report failed"; }
"$PYTHON3" - "$T/report.txt" "$T/report.json" <<'PY' || { head -n 16 "$T/report.txt"; fail "the text report does not lead with the answer"; }
import json, re, sys
lines = open(sys.argv[1]).read().split("\n")
d = json.load(open(sys.argv[2]))
start = lines.index("What limits this job")
assert start <= 3, "'What limits this job' at line %d" % start
head = "\n".join(lines[start:start + 8])
assert re.search(r"^  culprit: rank 2\b", head, re.M), "no 'culprit: rank 2'"
sd = d["slowdown"]
assert sd and "  S %.3f:" % sd["S"] in head, "S %s not among the first lines" % (sd and sd["S"])
m = re.search(r"^  saving: about ([0-9.]+) (us|ms|s) per step", head, re.M)
assert m, "no saving per step"
save = float(m.group(1)) * {"us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
assert abs(save - 20e6) <= 0.25 * 20e6, "saving %.0f ns against the 20 ms injected" % save
a = d["answer"]
assert a["culprit_rank"] == 2 and abs(a["saving_ns"] - save) <= 1e3 + 1e-3 * save, a
for i, l in enumerate(lines):
    u = set(re.findall(r"\d (us|ms|s)\b", l))
    assert len(u) <= 1, "line %d mixes %s: %s" % (i + 1, sorted(u), l[:120])
print("ok: the text report leads with rank 2, S %.3f and a saving of %.3f ms per step" % (sd["S"], save / 1e6))
PY
pass
