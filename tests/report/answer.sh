#!/bin/sh
# The text report leads with the answer and reads in one unit per column
# and sentence (issue 36), on two sources: the MPI demo trace
# (tests/analysis/data/demo_shared_cores.db.gz: a persistent straggler,
# rank 2) and an imported 16-rank PyTorch profiler job from the GPU
# generator (tests/import/gpu_pipe_gen.py: dp 4 x pp 4, rank 6's kernels
# 2x slower; its truth file holds the actual and ideal step). Checked:
#   - the first section is "What limits this job": the culprit (as the
#     JSON names it), S (as the JSON's, 3 decimals) and the saving per
#     step (demo: the straggler's cost; GPU: within 25 % of the truth's
#     actual - ideal), within the first 8 lines;
#   - by check_report.py, on the report, --full and Markdown: no line
#     holds two time units, a table whose header names a unit has none in
#     its rows; no internal label (other:HEX, call site N of rank R, hex
#     addresses, raw ids); every file:line is one of the JSON's call sites
#     (never cut to another line); every "..." joins the start and the end
#     of names the JSON holds; every percentage states its base;
#   - the layout line names the communicators of a dimension when the
#     trace has them (the GPU job's dp_group_0..3), never "no communicator
#     of their own" beside a communicator table that lists them;
#   - the sections that say nothing fold to one line, --full shows them;
#   - the two other answers, on 4-rank GPU jobs: a slow pipeline stage
#     ("culprit: pipeline stage 1", its saving against the truth) and a
#     clean job ("no single culprit");
#   - diff warns on the two (world sizes, sources), not on a run and itself;
#     every change it gives in % says its base (the first run) on its line
#     or in its table's header, and the header names that run.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
command -v "$PY" > /dev/null || skip "$PY not installed"
gunzip -c "$S/tests/analysis/data/demo_shared_cores.db.gz" > "$T/demo.db" || fail "cannot unpack the demo trace"
check "generate the GPU job" $PY "$S/tests/import/gpu_pipe_gen.py" "$T/gpu" --dp 4 --pp 4 --slow-rank 6 --factor 2 \
  --truth "$T/gpu.truth"
"$COLLSCOPE" import -o "$T/gpu.out" "$T/gpu" > "$T/gpu.imp" 2>&1 || { cat "$T/gpu.imp"; fail "import failed"; }
for n in demo gpu; do
  tr="$T/$n.db"
  [ "$n" = gpu ] && tr="$T/gpu.out/trace.db"
  "$COLLSCOPE" report "$tr" > "$T/$n.txt" || fail "$n: report failed"
  "$COLLSCOPE" report "$tr" --full > "$T/$n.full" || fail "$n: report --full failed"
  "$COLLSCOPE" report "$tr" --format json -o "$T/$n.json" || fail "$n: report --format json failed"
  # the demo's Markdown with gates (against itself as the baseline): its
  # Gates section comes last too, as in the text report
  set --
  [ "$n" = demo ] && set -- --fail-on straggler=1000,step=1000,p99=1000 --baseline "$tr"
  "$COLLSCOPE" report "$tr" --format markdown "$@" > "$T/$n.md" || fail "$n: report --format markdown $* failed"
  [ "$n" = gpu ] || grep -q '^### Gates' "$T/$n.md" || fail "$n: no Gates section in the Markdown report with --fail-on"
  # units, labels, call sites, elisions and percentages, in the default
  # report, all sections (--full) and the Markdown report
  $PY "$S/tests/report/check_report.py" "$n" "$T/$n.txt" "$T/$n.json" "$T/$n.md" || fail "$n: the report (above)"
  $PY "$S/tests/report/check_report.py" "$n --full" "$T/$n.full" "$T/$n.json" || fail "$n: the report --full (above)"
  $PY - "$n" "$T/$n.txt" "$T/$n.full" "$T/$n.json" "$T/gpu.truth" << 'PYEOF' || fail "$n: the text report (above)"
import json, re, sys
name, txt, full, js, truth = sys.argv[1:]
lines = open(txt).read().split("\n")
fl = open(full).read().split("\n")
d = json.load(open(js))
bad = []
# the answer first
start = lines.index("What limits this job") if "What limits this job" in lines else -1
if start < 0 or start > 3:
    bad.append("'What limits this job' is not the first section (line %d)" % start)
head = "\n".join(lines[start:start + 8])
want = {"demo": 2, "gpu": 6}[name]
sd = d["slowdown"]
if sd["culprit"] != str(want):
    bad.append("JSON culprit %r, want %d" % (sd["culprit"], want))
if not re.search(r"^  culprit: rank %d \(dp \d+, pp \d+, tp \d+" % want, head, re.M):
    bad.append("no 'culprit: rank %d (dp, pp, tp)' among the first lines" % want)
if "  S %.3f:" % sd["S"] not in head:
    bad.append("S %.3f (the JSON's) not among the first lines" % sd["S"])
m = re.search(r"^  saving: about ([0-9.]+) (us|ms|s) per step", head, re.M)
if not m:
    bad.append("no saving per step among the first lines")
else:
    save = float(m.group(1)) * {"us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
    if name == "demo":
        cost = d["stragglers"][0]["cost_ns"]
        if abs(save - cost) > 0.001 * cost + 1e3:
            bad.append("saving %.0f ns, the straggler costs %d" % (save, cost))
    else:
        t = json.load(open(truth))
        true = t["actual_ns"] - t["ideal_ns"]
        if abs(save - true) > 0.25 * true:
            bad.append("saving %.0f ns, the truth %d" % (save, true))
    print("ok: %s: saving %.3f ms per step" % (name, save / 1e6))
# the layout line: a dimension "with no communicator of its own" while
# communicators named for it are in the trace is a contradiction
lay = [l for l in lines if l.startswith("  dp: ")]
names = [c.get("comm_name", "") for c in d.get("comms", [])]
if lay and "no communicator of their own" in lay[0] and any(re.search(r"(^|[^a-z])(dp|data)", x, re.I) for x in names):
    bad.append("the layout says dp has no communicator of its own, the communicators are %s" % names)
if name == "gpu" and not (lay and lay[0].startswith("  dp: 4 communicators of 4 like dp_group_")):
    bad.append("the GPU job's layout line does not name its dp_group communicators: %s" % lay)
# folded sections: one line each, --full shows them
if not any(l.startswith("Clocks: kept as recorded") for l in lines):
    bad.append("the clocks nothing moved are not folded into one line")
if not any(l.startswith("Clocks (aligned") for l in fl):
    bad.append("--full does not show the clock table")
if len(fl) <= len(lines):
    bad.append("--full (%d lines) shows no more than the default (%d)" % (len(fl), len(lines)))
if name == "gpu" and sum(1 for l in fl if "one size only" in l) <= sum(1 for l in lines if "one size only" in l):
    bad.append("the one-size cost models are not folded")
for b in bad:
    print("FAIL:", b)
print("ok: %s: %d lines (%d with --full), the answer at line %d" % (name, len(lines), len(fl), start + 1))
sys.exit(1 if bad else 0)
PYEOF
done
# The other two answers the first section can give, on imported GPU jobs
# of 4 ranks (dp 2 x pp 2): a slow pipeline stage (stage 1's kernels 2x
# slower: "culprit: pipeline stage 1", its saving within 25 % of the
# truth's actual - ideal) and a job with no slow part ("no single
# culprit", no saving); both reports pass check_report.py.
for n in stage clean; do
  if [ "$n" = stage ]; then set -- --slow-stage 1 --factor 2; else set -- --slow-rank -1; fi
  check "generate the $n job" $PY "$S/tests/import/gpu_pipe_gen.py" "$T/$n" --dp 2 --pp 2 "$@" --truth "$T/$n.truth"
  "$COLLSCOPE" import -o "$T/$n.out" "$T/$n" > "$T/$n.imp" 2>&1 || { cat "$T/$n.imp"; fail "$n: import failed"; }
  "$COLLSCOPE" report "$T/$n.out" > "$T/$n.txt" || fail "$n: report failed"
  "$COLLSCOPE" report "$T/$n.out" --format json -o "$T/$n.json" || fail "$n: report --format json failed"
  "$COLLSCOPE" report "$T/$n.out" --format markdown > "$T/$n.md" || fail "$n: report --format markdown failed"
  $PY "$S/tests/report/check_report.py" "$n" "$T/$n.txt" "$T/$n.json" "$T/$n.md" || fail "$n: the report (above)"
  $PY - "$n" "$T/$n.txt" "$T/$n.json" "$T/$n.truth" << 'PYEOF' || { head -n 12 "$T/$n.txt"; fail "$n: the first section (above)"; }
import json, re, sys
name, txt, js, truth = sys.argv[1:]
lines = open(txt).read().split("\n")
d, t = json.load(open(js)), json.load(open(truth))
start = lines.index("What limits this job")
head = "\n".join(lines[start:start + 8])
assert start <= 3, "'What limits this job' at line %d" % start
assert "  S %.3f:" % d["slowdown"]["S"] in head, "S %.3f (the JSON's) not among the first lines" % d["slowdown"]["S"]
if name == "stage":
    assert lines[start + 1] == "  culprit: pipeline stage 1", "culprit line: %r" % lines[start + 1]
    assert d["answer"]["culprit"] == "pipeline stage 1", d["answer"]
    m = re.search(r"^  saving: about ([0-9.]+) ms per step", head, re.M)
    assert m, "no saving per step in ms"
    true = (t["actual_ns"] - t["ideal_ns"]) / 1e6
    assert abs(float(m.group(1)) - true) <= 0.25 * true, "saving %s ms, the truth %.3f ms" % (m.group(1), true)
else:
    assert lines[start + 1].startswith("  no single culprit"), "first line: %r" % lines[start + 1]
    assert d["answer"]["culprit"] is None and "saving:" not in head, (d["answer"], head)
print("ok: %s: %s" % (name, lines[start + 1].strip()))
PYEOF
done
"$COLLSCOPE" diff "$T/demo.db" "$T/gpu.out" > "$T/diff.txt" 2> "$T/diff.err" || fail "diff failed"
grep -q "^WARNING: these runs are not comparable (world sizes 4 and 16; sources collscope run and import kineto" \
  "$T/diff.txt" || fail "diff of a 4-rank MPI run and a 16-rank import without a warning: $(head -n 5 "$T/diff.txt")"
grep -q "not comparable" "$T/diff.err" || fail "diff: no warning on stderr"
"$COLLSCOPE" diff --format json "$T/demo.db" "$T/gpu.out" 2> /dev/null |
  $PY -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if d["comparable"] is False and "world sizes" in d["not_comparable"] else 1)' ||
  fail "diff JSON: comparable is not false"
"$COLLSCOPE" diff "$T/demo.db" "$T/demo.db" > "$T/same.txt" 2>&1 || fail "diff of a run and itself failed"
grep -q "not comparable" "$T/same.txt" && fail "a run and itself called not comparable"
echo "ok: diff warns on the 4-rank MPI run against the 16-rank import, not on a run and itself"
# a run against itself changes nothing, also where one op and size run on
# several communicators (the GPU job's four dp_group allreduces): each
# group is matched with its own communicator's, and named by it
"$COLLSCOPE" diff "$T/gpu.out" "$T/gpu.out" > "$T/same_gpu.txt" 2>&1 || fail "diff of the GPU job and itself failed"
sed -n '/^Tail (p99)/,/^$/p' "$T/same_gpu.txt" | grep '^  ncclAllReduce' > "$T/same_tails.txt"
[ "$(grep -c ' on dp_group_[0-3] ' "$T/same_tails.txt")" = 4 ] ||
  fail "diff: the dp_group allreduces are not told apart: $(cat "$T/same_tails.txt")"
grep -v ' +0\.0%$' "$T/same_tails.txt" && fail "diff of a run and itself shows a change (above)"
echo "ok: diff of the GPU job and itself: $(wc -l < "$T/same_tails.txt") tail groups, each +0.0%, named by communicator"
# every change in % says its base (the first run): on its line ("vs
# base"), or in its table's header; the header names the base run
for f in diff same same_gpu; do
  $PY - "$T/$f.txt" "$T/demo.db" "$T/gpu.out" << 'PYEOF' || fail "diff: a change with no base (above)"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
bad, n, head = [], 0, ""
if not any(l.startswith("Changes in % are relative to the base run, ") and
           l.endswith((sys.argv[2], sys.argv[3])) for l in lines[:3]):
    bad.append("the header does not name the base run: %s" % lines[:3])
for i, l in enumerate(lines):
    if l[:1] not in ("", " "):
        head = l
    elif not l.strip():
        continue
    elif l.startswith("  ") and not re.search(r"\d", l):
        head += "\n" + l  # a table's column header
    for m in re.finditer(r"[-+]?\d+(\.\d+)? ?%", l):
        n += 1
        if "vs base" in l or re.search(r"% of |vs base", head):
            continue
        bad.append("line %d: %s with no base: %s" % (i + 1, m.group(0), l.strip()))
for b in bad:
    print("FAIL: " + b)
print("ok: %s: %d changes in %%, each with its base" % (sys.argv[1].split("/")[-1], n))
sys.exit(1 if bad else 0)
PYEOF
done
pass
