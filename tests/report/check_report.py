#!/usr/bin/env python3
"""check_report.py: what every text and Markdown report must hold whatever
its source (issue 36), shared by the golden-report tests of each source
(tests/report/answer.sh: the MPI demo and an imported PyTorch job;
tests/import/torch_ddp.sh: a real PyTorch DDP job; tests/nccl/straggler.sh:
the NCCL stand-in job).

  check_report.py NAME TEXT JSON [MARKDOWN]

TEXT is the text report (best with --full: every section), JSON the same
trace's JSON report, MARKDOWN its Markdown report. Checked:
  - one unit per line, and none in the rows of a table whose header names
    its unit;
  - no internal label: no other:HEX or nccl:HEX, no "call site N of rank
    R", no hex address or offset, no raw id of 12 digits or more;
  - every file:line is one of the JSON's call sites whole (never cut into
    another line); no two rows of a table read alike; the communicator
    and call-site tables show every row, or their 8 and 20 costliest and
    a count of the rest;
  - every "..." that elides a name joins the start of a name the JSON
    holds to the end of one (no made-up fragment);
  - every percentage states its base: "N % of ...", a share of something
    named, or in a table whose header or title names the base;
  - the report begins with "What limits this job", and its sections come
    in the order docs/guide.md states, in the text and the Markdown report
    (there a section opens with a heading, "### Stragglers", or a
    paragraph that starts with its name, "Slowdown: ...").
Prints each fault and exits 1 when there is one.
"""
import json
import os
import re
import sys

name, txt_path, js_path = sys.argv[1:4]
md_path = sys.argv[4] if len(sys.argv) > 4 else None
text = open(txt_path).read()
lines = text.split("\n")
d = json.load(open(js_path))
bad = []


def strings(x):
    """Every string value of the JSON."""
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from strings(v)


js_strings = list(strings(d))
js_tokens = set(t for s in js_strings for t in s.split())

# the answer first, then the evidence in the order docs/guide.md states
# ("The evidence follows, always in this order: A, B, ..., Z.")
guide = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "guide.md")).read()
m = re.search(r"evidence follows, always in this order: ([^.]+)\.", re.sub(r"\s+", " ", guide))
order = ["What limits this job"] + [x.strip() for x in m.group(1).split(",")] if m else []
if len(order) < 15:
    bad.append("docs/guide.md states no order of the sections (%s)" % order)


def section_order(where, titles):
    """titles: the lines that may open a section, in the report's order."""
    seen = []
    for l in titles:
        k = [i for i, o in enumerate(order) if l.startswith(o)]
        if k:
            seen.append((max(k), l[:40]))  # "Per rank" is also the start of "Per rank: ..."
    for (a, la), (b, lb) in zip(seen, seen[1:]):
        if b < a:
            bad.append("%s: section '%s' comes after '%s', against the guide's order" % (where, lb, la))
    if not seen or seen[0][0] != 0:
        bad.append("%s: the report does not begin with 'What limits this job' (sections: %s)"
                   % (where, [x[1] for x in seen][:3]))


section_order("text", [l for l in lines if l[:1] not in ("", " ", "(")])


def md_titles(md):
    """A Markdown report's section openings: its headings ("### Stragglers"),
    the paragraphs that open with a section's name ("Slowdown: ..."), and
    the answer in its fenced block."""
    fence = False
    for l in md.split("\n"):
        if l.startswith("```"):
            fence = not fence
        elif fence:
            if l == order[0]:
                yield l
        elif l[:1] not in ("", " ", "|", "-", "(", ">"):
            yield re.sub(r"^#+ ", "", l)


# one unit per line; none in the rows of a table whose header has one
unit = re.compile(r"\d (us|ms|s)\b")
intable = False
for i, l in enumerate(lines):
    u = set(unit.findall(l))
    if len(u) > 1:
        bad.append("line %d mixes %s: %s" % (i + 1, sorted(u), l[:120]))
    if re.search(r"\((us|ms|s)\)", l):
        intable = True
        continue
    if not l.strip() or not l.startswith("  "):
        intable = False
    elif intable and u and (not l.startswith("    ") or re.match(r" *[\d<]", l)):
        # a row (its first cell right-aligned: "       2        105  3.049"),
        # not a deeper-indented line of text under one
        bad.append("line %d: a unit in a table row under a header that has one: %s" % (i + 1, l[:120]))

# no two rows of a table read alike (the same label before the figures:
# four "ncclAllReduce [32.0 MiB]" rows of four communicators told nothing)
rows = {}
for i, l in enumerate(lines):
    if l[:1] not in ("", " "):
        rows = {}
        continue
    m = re.match(r"  ([^ \d].*?)\s{2,}-?[\d<]", l)
    if not m:
        continue
    if m.group(1) in rows:
        bad.append("lines %d and %d read alike: %s" % (rows[m.group(1)] + 1, i + 1, m.group(1)))
    rows[m.group(1)] = i

# the communicator and call-site tables: every row the JSON has, or their
# 8 and 20 costliest and a line that counts the rest ("--full shows them")
for title, key, cap in (("Per communicator", "comms", 8), ("Per call site", "callsites", 20)):
    if title not in lines or key not in d:
        continue
    k = lines.index(title) + 2
    nrows = 0
    while k < len(lines) and lines[k].startswith("  ") and not lines[k].startswith("  ... and "):
        nrows, k = nrows + 1, k + 1
    total = len(d[key])
    more = lines[k] if k < len(lines) else ""
    if nrows == total and not more.startswith("  ... and "):
        continue
    if nrows != cap or more != "  ... and %d more (--full shows them)" % (total - cap):
        bad.append("%s: %d rows and %r, the JSON has %d (want all, or %d and a count of the rest)"
                   % (title, nrows, more, total, cap))

# no internal labels
LABELS = [
    (r"\b(other|nccl):[0-9a-f]{6}", "a communicator's hash"),
    (r"call site \d+ of rank \d+", "a call site's id"),
    (r"\b0x[0-9a-fA-F]+|\+0x[0-9a-fA-F]+", "a hex address or offset"),
    (r"(?<![\d.])\d{12,}(?![\d.])", "a raw id"),
]


def labels(where, body):
    for rx, what in LABELS:
        m = re.search(r".*(%s).*" % rx, body)
        if m:
            bad.append("%s: %s reaches the reader (%s): %s" % (where, what, m.group(1), m.group(0)[:140]))


labels("text", text)

# every file:line one of the call sites, whole
sites = set()
for c in d.get("callsites", []) + d.get("tails", []):
    for k in ("callsite", "name", "key"):
        if isinstance(c.get(k), str):
            sites.update(re.findall(r"[\w.-]+\.\w+:\d+", c[k]))
for fileline in re.findall(r"[\w-]+\.(?:c|cc|cpp|cu|h|py|f90):\d+\b(?!\.)", text):
    # whole, or the end of one whose file name lost its middle to "..."
    if not any(x == fileline or x.endswith("." + fileline) or x.endswith("_" + fileline) for x in sites):
        bad.append("%s is none of the call sites %s" % (fileline, sorted(sites)[:8]))

# every elision joins a name's start to a name's end
nel = 0
for i, l in enumerate(lines):
    for m in re.finditer(r"\.\.\.", l):
        left = l[: m.start()].split(" ")[-1]
        right = l[m.end():].split(" ")[0]
        if not left and not right:
            continue  # "...", a word of its own ("dp_group_0 ... dp_group_3")
        nel += 1
        if re.search(r":\d+$", left) and left not in sites:
            bad.append("line %d: a line number cut by the ellipsis ('%s...'): %s" % (i + 1, left, l.strip()[:120]))
        if left and not any(t.startswith(left) for t in js_tokens):
            bad.append("line %d: '%s...' is the start of no name the JSON holds: %s" % (i + 1, left, l.strip()[:120]))
        if right and not any(t.endswith(right) or t.endswith(right.rstrip(")],")) for t in js_tokens):
            bad.append("line %d: '...%s' is the end of no name the JSON holds: %s" % (i + 1, right, l.strip()[:120]))

# percentages state their base
BASED = [
    r"%s of ",  # "41 % of the median step", "64 % of it"
    r"%s share of ",  # "its 99 % share of the slowdown"
    r"error %s",  # the replay's error (glossary: replay error)
    r"within %s",  # "they agree within 25 %"
    r"residual[^%%]*%s",  # "relative residual of the cells 148.2 %"
    r"%% > %s",  # "... 148.2 % > 25 %": the limit
    r"slowest %s",  # "slowest 1%": of the group's instances (glossary)
    r"median of the ranks %s",  # after "N % of its GPU window"
    r"%s interval",  # a 95 % interval
    r"limit %s",  # a gate's "(limit 10%)": the threshold of the figure before it, on its base
    r"`[a-z0-9_]+>%s`",  # a gate's name, as --fail-on set it ("straggler>10%")
]
pct = re.compile(r"\d+(?:\.\d+)? ?%")


def based(body, where, tables, section):
    block = []
    for i, l in enumerate(body.split("\n")):
        if section(l):
            block = []
        if not l.strip():
            continue
        block.append(l)
        for m in pct.finditer(l):
            p = re.escape(m.group(0))
            if any(re.search(b % p, l) for b in BASED):
                continue
            # a table's cell: its header or title (the lines above, up to a
            # blank line) names the base
            head = "\n".join(block[:-1])
            if tables(l) and re.search(r"% of |share of|compute share|in % of|% of wall|\| resid \(%", head):
                continue
            bad.append("%s line %d: a percentage with no base (%s): %s" % (where, i + 1, m.group(0), l.strip()[:140]))


# a text table's title and header are the lines since the section's title
# (a line that does not start with a space); a Markdown table's, the text
# since the last heading
based(text, "text", lambda l: l.startswith("  ") and not re.search(r"[a-z]{4,} [a-z]{4,} [a-z]{4,}", l.strip()[12:]),
      lambda l: l[:1] not in ("", " "))

if md_path:
    md = open(md_path).read()
    labels("markdown", md)
    section_order("markdown", md_titles(md))
    based(md, "markdown", lambda l: l.startswith("|"), lambda l: l.startswith("#"))

for b in bad:
    print("FAIL: %s: %s" % (name, b))
print("ok: %s: %d lines, %d elisions, units, labels, call sites and percentages checked%s"
      % (name, len(lines), nel, " (and the Markdown report)" if md_path else ""))
sys.exit(1 if bad else 0)
