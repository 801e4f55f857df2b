#!/usr/bin/env python3
"""layers.py: the rooms of the code and the rule that keeps them apart
(docs/design.md, "The rooms and the rule").

  layers.py --src TOP            the include graph of the sources under TOP
  layers.py --build BUILD        the call graph of the objects a build made
                                 (nm: which file's functions a file calls)

A node is a module: X.c, X.h and its internal header X_int.h of one
folder are one node (a generated X_wrappers.gen.c is part of its family
X_wrap). A room is a folder (the
ROOMS table below, lowest first). Every arrow (an include, a call) must go
to the same room or to a lower one: never up, never to a peer room of the
same rank. No module may reach itself again through arrows (no circle),
except through a table that names its entries (TABLES: the entries call
the table's own services; the table is the one place that names them):
with the table's arrows to its entries left out, no circle may remain.
Prints each violation on a line and exits 1; prints a summary and exits 0
when there is none.
"""
import collections
import os
import re
import subprocess
import sys

# (folder, rank): a file may reach its own folder and folders of a lower
# rank. Folders of one rank are peers and never reach each other.
ROOMS = [
    ("common", 0),
    ("libtrace", 1),
    ("kernels", 1),
    ("interpose/fuse", 2),
    ("interpose", 2),
    ("analyzer/analysis", 2),
    ("analyzer/status", 2),
    ("analyzer/report", 3),
    ("analyzer/live", 3),
    ("analyzer/formats", 4),
    ("analyzer/par", 4),
    ("tui", 5),
    ("analyzer/cmd", 6),
]
# The apply-mode engines live in interpose/fuse/ but are preload modules
# like the others: the two folders are one room.
SAME_ROOM = {("interpose/fuse", "interpose"), ("interpose", "interpose/fuse")}
# Tables that name their entries, whose entries call back the table's own
# services: the module table of the preload (core starts the modules it
# lists), the TUI's screen table, the kernels' per-backend ops.
TABLES = {"interpose/modules", "tui/ui", "kernels/api"}
# The project's own functions (a call to a wrapped API function, which the
# preload also defines, is a call into that API, not into the preload).
OURS = re.compile(r"^(cs_|cs__|tui_)")
SKIP_DIRS = ("tests", "bench", "examples", "docs", "scripts", "m4", "build", ".git", ".venv")


def room_of(node):
    best = None
    for folder, rank in ROOMS:
        if node.startswith(folder + "/") and (best is None or len(folder) > len(best[0])):
            best = (folder, rank)
    return best


def module_of(path):
    """analyzer/analysis/an_run.c -> analyzer/analysis/an_run"""
    path = re.sub(r"\.(c|h|cu)$", "", path)
    path = re.sub(r"_int$", "", path)  # X_int.h: module X's internal header
    path = re.sub(r"_wrappers\.gen$", "_wrap", path)
    path = re.sub(r"\.gen$", "", path)
    path = re.sub(r"\.pb-c$", "", path)
    return path


def include_graph(top):
    edges = collections.defaultdict(dict)
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        if rel != "." and rel.split(os.sep)[0] in SKIP_DIRS:
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            if not re.search(r"\.(c|h|cu)$", f):
                continue
            path = os.path.normpath(os.path.join(rel, f))
            if room_of(path) is None:
                continue
            with open(os.path.join(root, f), errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m or m.group(1) == "config.h":
                        continue
                    a, b = module_of(path), module_of(m.group(1))
                    if a != b and room_of(m.group(1)):
                        edges[a].setdefault(b, "%s:%d includes %s" % (path, n, m.group(1)))
    return edges


def object_source(build, path):
    """BUILD/analyzer/analysis/.libs/libcsanalysis_la-an_run.o -> analyzer/analysis/an_run"""
    rel = os.path.relpath(path, build).replace("/.libs/", "/").replace(".libs/", "")
    folder, base = os.path.split(rel)
    base = base[:-2]
    if "-" in base:
        base = base.split("-", 1)[1]
    return module_of(os.path.join(folder, base))


def call_graph(build):
    defs, undefs = collections.defaultdict(set), collections.defaultdict(set)
    seen = set()
    objs = {}
    for root, dirs, files in os.walk(build):
        rel = os.path.relpath(root, build)
        if rel != "." and rel.split(os.sep)[0] in SKIP_DIRS + ("build-fuzz",):
            dirs[:] = []
            continue
        for f in files:
            if not f.endswith(".o"):
                continue
            path = os.path.join(root, f)
            node = object_source(build, path)
            if room_of(node) is not None:
                objs[path] = node
    # one nm for many objects (-A: each line begins "PATH:"), not one each
    paths = sorted(objs)
    for i in range(0, len(paths), 256):
        out = subprocess.run(["nm", "-A"] + paths[i:i + 256], capture_output=True, text=True).stdout
        for line in out.splitlines():
            path, sep, rest = line.partition(".o:")
            node = objs.get(path + ".o") if sep else None
            if node is None:
                continue
            seen.add(node)
            p = rest.split()
            if len(p) == 3 and p[1] in "TDBRCG":
                defs[p[2]].add(node)
            elif len(p) == 2 and p[0] == "U" and OURS.match(p[1]):
                undefs[node].add(p[1])
    edges = collections.defaultdict(dict)
    for a, syms in undefs.items():
        for s in sorted(syms):
            for b in defs.get(s, ()):
                if a != b:
                    edges[a].setdefault(b, "%s calls %s (%s)" % (a, s, b))
    return edges, seen


def circles(edges, drop_tables):
    g = {a: {b for b in bs if not (drop_tables and a in TABLES)} for a, bs in edges.items()}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    nodes = set(g) | {b for bs in g.values() for b in bs}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check(edges, what):
    bad = []
    for a in sorted(edges):
        ra = room_of(a)
        for b, why in sorted(edges[a].items()):
            rb = room_of(b)
            if ra[0] == rb[0] or (ra[0], rb[0]) in SAME_ROOM:
                continue
            if rb[1] > ra[1]:
                bad.append("%s: up from %s to %s: %s" % (what, ra[0], rb[0], why))
            elif rb[1] == ra[1]:
                bad.append("%s: between peer rooms %s and %s: %s" % (what, ra[0], rb[0], why))
    for comp in circles(edges, drop_tables=True):
        cs = set(comp)
        arrows = ["%s" % edges[a][b] for a in comp for b in sorted(edges[a]) if b in cs]
        bad.append("%s: a circle among %s: %s" % (what, " ".join(comp), "; ".join(arrows)))
    return bad


def main(argv):
    if len(argv) != 3 or argv[1] not in ("--src", "--build"):
        sys.stderr.write("usage: layers.py --src TOP | --build BUILD\n")
        return 2
    if argv[1] == "--src":
        edges, what = include_graph(argv[2]), "include"
        nodes = set(edges) | {b for bs in edges.values() for b in bs}
    else:
        edges, nodes = call_graph(argv[2])
        what = "call"
    bad = check(edges, what)
    for line in bad:
        print(line)
    narrows = sum(len(v) for v in edges.values())
    tables = [c for c in circles(edges, drop_tables=False) if set(c) & TABLES]
    print("%s graph: %d modules, %d arrows, %d rooms; %d violations; %d circles through a table (%s)"
          % (what, len(nodes), narrows, len(ROOMS), len(bad), len(tables),
             ", ".join(sorted(set(TABLES) & {n for c in tables for n in c})) or "none"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
