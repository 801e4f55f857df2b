#!/usr/bin/env python3
"""glossary.py: every term a text report prints is defined in
docs/guide.md's glossary, and the other way round (issue 36); shared by
tests/report/glossary.sh (the MPI demo, an imported GPU job) and
tests/nccl/straggler.sh (the NCCL stand-in job).

  glossary.py GUIDE REPORT...    (each REPORT a text report, best --full)

TERMS maps each glossary term to how the report prints it; a term the
reports print must be in the glossary, every glossary term must be in
TERMS (no entry the test does not know), and every section title of the
reports must be one the test knows. Prints each fault; exits 1 on one.
"""
import re, sys
guide, reports = sys.argv[1], sys.argv[2:]
least = 50  # glossary terms the reports print together, at least
if reports[:1] == ["--min"]:
    least, reports = int(reports[1]), reports[2:]
# term in the glossary -> how the text report prints it (a regex, multiline)
TERMS = {
    "What limits this job": r"^What limits this job$", "culprit": r"^  culprit: ",
    "no single culprit": r"no single culprit", "S": r"\bS \d+\.\d{3}\b", "ideal durations": r"ideal durations",
    "saving": r"^  saving: ", "replay error": r"replay error", "share of S - 1": r"share of S - 1",
    "compute share": r"compute share", "dp": r"\bdp \d", "pp": r"\bpp \d", "tp": r"\btp \d",
    "dp replica": r"dp replica", "pp stage": r"pp stage", "pipeline stage": r"pipeline stage",
    "straggler": r"straggler", "persistent": r"^  persistent ", "transient": r"^  transient ",
    "recurring": r"^  recurring ", "slow_link": r"^  slow_link ", "slow_collective": r"^  slow_collective ",
    "costs": r"  costs ", "MAD": r"\bMAD\b", "Steps": r"^Steps \(",
    "median had the slowest rank arrived on time": r"median had the slowest rank arrived on time",
    "communication per step": r"communication per step|communication [0-9.]+ \w+ per step",
    "times last": r"times last", "imposed wait": r"imposed wait", "median lateness": r"median lateness",
    "Tail latency": r"^Tail latency", "instance time": r"instance time", "p50": r"\bp50\b", "p90": r"\bp90\b",
    "p99": r"\bp99\b", "p99.9": r"\bp99\.9\b", "max": r"\bmax \(", "slowest 1%": r"slowest 1%",
    "total": r"\btotal\b", "in calls": r"in calls", "% of wall": r"% of wall", "spans": r"\bspans\b",
    "tool overhead": r"tool overhead", "GPU window": r"GPU window",
    "exposed communication": r"comm exposed", "overlapped communication": r"comm overlapped",
    "memory": r"\bmemory\b", "idle": r"\bidle\b", "compute share out of line": r"compute share out of line",
    "category": r"\bcategory\b", "GPU overlap": r"^GPU overlap", "What-if replay": r"^What-if replay",
    "measured transfers": r"measured transfers", "cost model": r"^Cost models|cost model",
    "alpha": r"\balpha\b", "beta": r"\bbeta\b", "gamma": r"\bgamma\b", "alpha only": r"alpha only",
    "R2": r"\bR2\b", "resid": r"\bresid\b", "points": r"\bpoints\b", "Proposals": r"^Proposals",
    "fusion": r"\bfusion\b", "bucket": r"\bbucket\b", "Apply mode": r"^Apply mode", "Clocks": r"^Clocks",
    "Apply mode's guard": r"^Apply mode's guard",
    "offset": r"\boffset\b", "drift": r"\bdrift\b", "residual": r"\bresidual\b",
    "kept as recorded": r"kept as recorded", "What is missing": r"^What is missing", "Gates": r"^Gates",
    "not comparable": r"not comparable",
    "NAME #2": r"\b[A-Za-z_]+ #\d+\b", "nccl comm N": r"\bnccl comm \d+",
}
# the section titles the reports may print: each either plain words or the
# glossary term it belongs to
TITLES = {"What limits this job": "What limits this job", "Slowdown": "S", "Stragglers": "straggler",
          "Steps": "Steps", "Parallel layout": "dp", "Wait states per rank": "imposed wait",
          "Tail latency per collective": "Tail latency", "(total": "total", "Per op": None,
          "Per communicator": None, "Per call site": None, "Per rank": "in calls",
          "GPU time per rank": "GPU window", "Top GPU kernels per rank": "category", "GPU overlap": "GPU overlap",
          "What-if replay": "What-if replay", "Proposals": "Proposals", "Cost models": "cost model",
          "Clocks": "Clocks", "What is missing": "What is missing", "Gates": "Gates", "Apply mode": "Apply mode",
          "Failures": None, "collscope report": None}
g = open(guide).read()
m = re.search(r"^## Glossary\n(.*?)(?=^## |\Z)", g, re.S | re.M)
bad = []
if not m:
    sys.exit("FAIL: docs/guide.md has no '## Glossary' section")
defined = set()
for b in re.findall(r"\*\*([^*]+)\*\*", m.group(1)):
    defined.update(x.strip() for x in b.split(" / "))
for t in sorted(defined - set(TERMS)):
    bad.append("the glossary defines '%s', which the test does not know (add it to TERMS)" % t)
printed = set()
for r in reports:
    text = open(r).read()
    for t, rx in TERMS.items():
        if re.search(rx, text, re.M):
            printed.add(t)
    for l in text.split("\n"):
        if l and not l.startswith(" "):
            if not any(l.startswith(k) for k in TITLES):
                bad.append("%s: a section the test does not know: %s" % (r, l[:80]))
for t in sorted(printed - defined):
    bad.append("the report prints '%s', which the glossary does not define" % t)
for t in TITLES.values():
    if t and t not in TERMS:
        bad.append("section term '%s' not in TERMS" % t)
if len(printed) < least:
    bad.append("only %d glossary terms found in the reports: %s" % (len(printed), sorted(printed)))
for b in bad:
    print("FAIL:", b)
print("ok: %d terms printed by the %d reports, %d defined in the glossary" % (len(printed), len(reports), len(defined)))
sys.exit(1 if bad else 0)
