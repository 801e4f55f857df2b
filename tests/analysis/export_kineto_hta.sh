#!/bin/sh
# export_kineto_hta.sh: `collscope export --format kineto` of a 4-rank NCCL
# job (the NCCL trainer under the CPU stand-ins, CUPTI activity on, an
# ncclCommSplit communicator), read by Holistic Trace Analysis.
#
# To give the overlap figure something to measure, each rank gets one
# compute kernel on a stream of its own covering the first half of its
# NCCL GPU time (as tests/nccl/cupti.sh does: the stand-ins run everything
# in order on one stream).
#
# JSON level (Python's json): a file per rank; distributedInfo with the
# rank (also where HTA looks for it: the first line holding "rank": N),
# world_size, backend and pg_config equal to the store's communicators;
# per rank, record_param_comms per collective and their Seq values equal
# the store's collectives; an ncclDevKernel_* kernel per NCCL call with GPU
# times, a kernel, copy or set per CUPTI record, each with a correlation id
# that a CPU call of the file carries; ProfilerStep#N per step marker;
# every span one event.
#
# HTA (TraceAnalysis on the folder, timestamps kept to the nanosecond):
# the temporal breakdown and the communication/computation overlap run
# without error, with HTA's default window (the last step left out) and
# with the last step kept; then they agree with collscope's own figures
# within 5 %: the overlap with
# `collscope report`'s GPU overlap section (in points of percentage), the
# breakdown (GPU span, idle, compute and other time) with the same sums
# over trace.db's GPU times and CUPTI records; and the report's GPU time
# per rank (gpu_time in the JSON) within 2 points.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
[ -e "$SI/libcupti.so.13" ] || skip "CUPTI stand-in not built (no cupti.h)"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
if command -v need_venv > /dev/null 2>&1; then
  need_venv
else
  VPY=${CS_VENV_PY:-/work/venv16/bin/python}
  [ -x "$VPY" ] || skip "no Python virtual environment with HolisticTraceAnalysis ($VPY)"
fi
"$VPY" -c 'import hta.trace_analysis' 2> /dev/null || skip "HolisticTraceAnalysis is not installed in $VPY"

COLLSCOPE_CUPTI=1 run_trainer "$T/r" "$T/run.out" --steps 6 --buckets 2 --split
DB="$T/r/trace.db"
[ "$(q "$DB" "SELECT count(*) FROM gpu_activity WHERE kind = 'kernel'")" -gt 0 ] || fail "no CUPTI kernels in the trace"
q "$DB" "INSERT INTO gpu_activity(rank, kind, name, stream, corr, begin_ns, end_ns, bytes, device)
         SELECT s.rank, 'kernel', 4242, 424242,
                (SELECT l.corr FROM spans l WHERE l.rank = s.rank AND l.kind = 'launch' ORDER BY l.begin_ns LIMIT 1),
                min(s.gpu_begin_ns), (min(s.gpu_begin_ns) + max(s.gpu_end_ns)) / 2, 0, 0
         FROM span s JOIN ops o ON o.id = s.op
         WHERE o.api = 'NCCL' AND o.kind IN ('coll', 'rooted', 'send', 'recv') AND s.gpu_begin_ns IS NOT NULL
         GROUP BY s.rank"
check "export --format kineto" "$COLLSCOPE" export "$T/r" --format kineto > "$T/export.out" 2>&1
K="$T/r/kineto"
[ -d "$K" ] || fail "no folder $K (the default)"

# ---- the files, against the store ----
q "$DB" "SELECT rank, op, count(*) FROM spans GROUP BY rank, op" > "$T/counts.txt"
q "$DB" "SELECT rank, op, comm, seq FROM spans WHERE kind IN ('coll', 'rooted') AND seq IS NOT NULL" > "$T/colls.txt"
q "$DB" "SELECT id, rank, comm_rank FROM comms WHERE how != 'self'" > "$T/comms.txt"
q "$DB" "SELECT rank, count(*) FROM spans WHERE op LIKE 'nccl%' AND kind IN ('coll', 'rooted', 'send', 'recv')
         AND gpu_begin_ns IS NOT NULL AND gpu_begin_ns != 0 GROUP BY rank" > "$T/ncclk.txt"
q "$DB" "SELECT rank, kind, count(*) FROM gpu_activity GROUP BY rank, kind" > "$T/act.txt"
q "$DB" "SELECT rank, count(*) FROM spans WHERE kind = 'marker' GROUP BY rank" > "$T/markers.txt"
"$PY" - "$K" "$T" << 'PYEOF' || fail "the kineto files do not hold (above)"
import collections, glob, json, os, re, sys
K, T = sys.argv[1], sys.argv[2]

def bad(msg):
    print("FAIL:", msg)
    sys.exit(1)

def rows(name):
    return [l.rstrip("\n").split("|") for l in open(os.path.join(T, name)) if l.strip()]

COLL = {"allreduce": "allreduce", "bcast": "broadcast", "broadcast": "broadcast", "reduce": "reduce",
        "allgather": "allgather", "reducescatter": "reduce_scatter", "alltoall": "all_to_all",
        "gather": "gather", "scatter": "scatter", "barrier": "barrier", "send": "send", "recv": "recv"}
def coll_of(op):
    s = op[4:] if op.startswith("MPI_") or op.startswith("nccl") else op
    return COLL.get(s.lower())

files = sorted(glob.glob(os.path.join(K, "*.json")))
if len(files) != 4:
    bad("%d files in %s, want 4" % (len(files), K))
members = collections.defaultdict(dict)
for cid, r, cr in rows("comms.txt"):
    members[cid][int(cr)] = int(r)
groups = {tuple(m[i] for i in sorted(m)) for m in members.values()}
counts = collections.Counter()
for r, op, n in rows("counts.txt"):
    counts[(int(r), op)] = int(n)
seqs = collections.defaultdict(list)
for r, op, comm, seq in rows("colls.txt"):
    seqs[(int(r), coll_of(op))].append(int(seq))
ncclk = {int(r): int(n) for r, n in rows("ncclk.txt")}
act = collections.Counter()
for r, kind, n in rows("act.txt"):
    act[(int(r), kind)] = int(n)
markers = {int(r): int(n) for r, n in rows("markers.txt")}
seen = set()
for path in files:
    d = json.load(open(path))
    info = d.get("distributedInfo")
    if not isinstance(info, dict) or d.get("schemaVersion") != 1:
        bad("%s: no distributedInfo or schemaVersion" % path)
    rank = info["rank"]
    seen.add(rank)
    # HTA takes the rank from the first line matching this
    with open(path) as f:
        m = next((re.search(r'"rank":\s+(\d+)', l) for l in f if re.search(r'"rank":\s+(\d+)', l)), None)
    if not m or int(m.group(1)) != rank:
        bad("%s: HTA would read rank %s, distributedInfo says %d" % (path, m and m.group(1), rank))
    if info.get("world_size") != 4 or info.get("backend") != "nccl":
        bad("%s: world_size %r, backend %r" % (path, info.get("world_size"), info.get("backend")))
    pgs = {tuple(p["ranks"]) for p in info["pg_config"]}
    want = {g for g in groups if rank in g}
    if pgs != want or info.get("pg_count") != len(members):
        bad("rank %d: pg_config %r, the store's communicators %r" % (rank, sorted(pgs), sorted(want)))
    if not d.get("deviceProperties"):
        bad("rank %d: no deviceProperties" % rank)
    ev = d["traceEvents"]
    x = [e for e in ev if e.get("ph") == "X"]
    cpu_corr = {e["args"]["correlation"] for e in x if e["cat"] == "cuda_runtime" and "correlation" in e["args"]}
    # every span one event, by op
    got = collections.Counter(e["args"]["collscope op"] for e in x if "collscope op" in e["args"] and e["cat"] != "kernel")
    want = collections.Counter({op: n for (r, op), n in counts.items() if r == rank})
    if got != want:
        bad("rank %d: events per op %r, the store's spans %r" % (rank, dict(got), dict(want)))
    # collectives: record_param_comms and their seqs
    pc = [e for e in x if e["name"] == "record_param_comms"]
    got = collections.defaultdict(list)
    for e in pc:
        a = e["args"]
        for k in ("Collective name", "In msg nelems", "Out msg nelems", "Group size", "Process Group Name",
                  "Process Group Ranks", "dtype"):
            if k not in a:
                bad("rank %d: record_param_comms without %r: %r" % (rank, k, e))
        if "Seq" in a:
            got[(rank, a["Collective name"])].append(a["Seq"])
    for key in set(got) | {k for k in seqs if k[0] == rank}:
        if sorted(got.get(key, [])) != sorted(seqs.get(key, [])):
            bad("rank %d %s: seqs %r, the store's %r" % (rank, key[1], sorted(got.get(key, [])), sorted(seqs.get(key, []))))
    # GPU: NCCL kernels, CUPTI records, each tied to a CPU call
    kern = [e for e in x if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")]
    nk = sum(1 for e in kern if e["name"].startswith("ncclDevKernel_"))
    if nk != ncclk.get(rank, 0) or nk == 0:
        bad("rank %d: %d NCCL kernels, the store has %d NCCL calls with GPU times" % (rank, nk, ncclk.get(rank, 0)))
    for cat, kind in (("kernel", "kernel"), ("gpu_memcpy", "memcpy"), ("gpu_memset", "memset")):
        n = sum(1 for e in kern if e["cat"] == cat and not e["name"].startswith("ncclDevKernel_"))
        if n != act[(rank, kind)]:
            bad("rank %d: %d %s events, the store has %d %s records" % (rank, n, cat, act[(rank, kind)], kind))
    loose = [e for e in kern if e["args"].get("correlation") not in cpu_corr or not e["args"].get("stream", 0) > 0]
    if loose:
        bad("rank %d: %d GPU events without a CPU call or stream, e.g. %r" % (rank, len(loose), loose[0]))
    steps = [e for e in x if e["name"].startswith("ProfilerStep#")]
    if len(steps) != markers.get(rank, 0) or not steps:
        bad("rank %d: %d ProfilerStep events, %d step markers" % (rank, len(steps), markers.get(rank, 0)))
    print("ok: rank %d: %d events, %d collectives, %d GPU events, %d steps, %d process groups" %
          (rank, len(ev), len(pc), len(kern), len(steps), len(pgs)))
if seen != {0, 1, 2, 3}:
    bad("ranks %r" % sorted(seen))
PYEOF

# ---- HTA ----
cat > "$T/run_hta.py" << 'PYEOF'
import sys
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=sys.argv[2] == "all")
tb = a.get_temporal_breakdown(visualize=False)
ov = a.get_comm_comp_overlap(visualize=False)
for _, r in tb.iterrows():
    print("breakdown %d %.3f %.3f %.3f %.3f" % (r["rank"], r["kernel_time(us)"], r["idle_time(us)"],
                                                 r["compute_time(us)"], r["non_compute_time(us)"]))
for _, r in ov.iterrows():
    print("overlap %d %.2f" % (r["rank"], r["comp_comm_overlap_pctg"]))
PYEOF
# HTA rounds nanosecond timestamps inward to whole microseconds unless told
# not to: GPU events shorter than a microsecond (most of the stand-ins')
# then get negative durations, and its breakdown can fail an assertion.
export HTA_DISABLE_NS_ROUNDING=1
"$VPY" "$T/run_hta.py" "$K" default > "$T/hta0.txt" 2> "$T/hta0.err" ||
  { tail "$T/hta0.err"; fail "HTA with its default window (the last step left out) failed"; }
cat "$T/hta0.txt"
expect_eq "HTA (last step left out): breakdown rows" "$(grep -c '^breakdown' "$T/hta0.txt")" 4
expect_eq "HTA (last step left out): overlap rows" "$(grep -c '^overlap' "$T/hta0.txt")" 4
"$VPY" "$T/run_hta.py" "$K" all > "$T/hta.txt" 2> "$T/hta.err" || { tail "$T/hta.err"; fail "HTA (last step kept) failed"; }
cat "$T/hta.txt"

# collscope's figures: the report's GPU overlap; the breakdown from the
# store's GPU times (NCCL calls) and CUPTI records, aligned.
"$COLLSCOPE" report "$T/r" > "$T/rep.txt" || fail "report failed"
sed -n '/^GPU overlap/,/^$/p' "$T/rep.txt" | grep -E '^ +[0-9]+ ' > "$T/overlap.txt"
expect_eq "report: GPU overlap lines" "$(wc -l < "$T/overlap.txt")" 4
q "$DB" "SELECT s.rank, 'comm', s.gpu_begin_ns, s.gpu_end_ns FROM spans s
         WHERE s.op LIKE 'nccl%' AND s.kind IN ('coll', 'rooted', 'send', 'recv') AND s.gpu_begin_ns IS NOT NULL
           AND s.gpu_begin_ns != 0
         UNION ALL
         SELECT a.rank, a.kind, a.begin_ns + COALESCE(k.offset_ns, 0) + CAST(COALESCE(k.drift_ppm, 0) * 1e-6 * (a.begin_ns - COALESCE(k.ref_ns, 0)) AS INTEGER),
                a.end_ns + COALESCE(k.offset_ns, 0) + CAST(COALESCE(k.drift_ppm, 0) * 1e-6 * (a.end_ns - COALESCE(k.ref_ns, 0)) AS INTEGER)
         FROM gpu_activity a LEFT JOIN clocks k ON k.rank = a.rank" > "$T/gpu.txt"
"$PY" - "$T/hta.txt" "$T/overlap.txt" "$T/gpu.txt" << 'PYEOF' || fail "HTA and collscope disagree (above)"
import collections, sys
hta_b, hta_o = {}, {}
for l in open(sys.argv[1]):
    w = l.split()
    if w[0] == "breakdown":
        hta_b[int(w[1])] = [float(v) for v in w[2:]]
    elif w[0] == "overlap":
        hta_o[int(w[1])] = float(w[2])
ours_o = {}
for l in open(sys.argv[2]):
    w = l.split()
    ours_o[int(w[0])] = 100.0 - float(w[-1].rstrip("%"))

def union(iv):
    out = []
    for b, e in sorted(iv):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out

iv = collections.defaultdict(list)
for l in open(sys.argv[3]):
    r, kind, b, e = l.strip().split("|")
    iv[(int(r), kind)].append((int(b), int(e)))
ok = True
for rank in sorted(hta_b):
    every = [x for (r, k), v in iv.items() if r == rank for x in v]
    span = (max(e for b, e in every) - min(b for b, e in every)) / 1e3
    busy = sum(e - b for b, e in union(every)) / 1e3
    compute = sum(e - b for b, e in union(iv[(rank, "kernel")])) / 1e3
    ours = [span, span - busy, compute, busy - compute]
    for name, h, o in zip(("GPU span", "idle", "compute", "other (communication, copies)"), hta_b[rank], ours):
        good = abs(h - o) <= 0.05 * max(abs(o), 1e-9)
        ok &= good
        print("%s: rank %d %s: HTA %.1f us, collscope %.1f us" % ("ok" if good else "FAIL", rank, name, h, o))
    good = abs(hta_o[rank] - ours_o[rank]) <= 5.0
    ok &= good
    print("%s: rank %d communication overlapped by compute: HTA %.2f %%, collscope report %.2f %%" %
          ("ok" if good else "FAIL", rank, hta_o[rank], ours_o[rank]))
if sorted(hta_b) != [0, 1, 2, 3] or sorted(hta_o) != [0, 1, 2, 3] or not any(v > 10 for v in ours_o.values()):
    print("FAIL: HTA ranks %r %r, overlaps %r" % (sorted(hta_b), sorted(hta_o), ours_o))
    ok = False
sys.exit(0 if ok else 1)
PYEOF

# the GPU time per rank of the report (table gpu_time, from the trace's own
# capture: the NCCL calls' GPU times and the CUPTI records) against HTA,
# within 2 points of percentage of the window (of NCCL time, the overlap)
"$COLLSCOPE" report "$T/r" --format json -o "$T/rep.json" || fail "report --format json failed"
"$PY" - "$T/hta.txt" "$T/rep.json" << 'PYEOF' || fail "HTA and the report's GPU time disagree (above)"
import json, sys
hb, ho = {}, {}
for l in open(sys.argv[1]):
    w = l.split()
    if w[0] == "breakdown":
        hb[int(w[1])] = [float(v) for v in w[2:]]
    elif w[0] == "overlap":
        ho[int(w[1])] = float(w[2])
rows = {g["rank"]: g for g in json.load(open(sys.argv[2]))["gpu_time"]}
ok = sorted(rows) == sorted(hb)
for r in sorted(hb):
    g = rows.get(r)
    if not g:
        continue
    span, idle, comp, other = hb[r]
    comm = g["comm_exposed_ns"] + g["comm_overlapped_ns"]
    for name, h, c in (("window (us)", span, g["window_ns"] / 1e3),
                       ("idle %", 100 * idle / span, 100 * g["idle_share"]),
                       ("compute %", 100 * comp / span, 100 * g["compute_share"]),
                       ("comm exposed + memory %", 100 * other / span, 100 * (g["comm_exposed_share"] + g["memory_share"])),
                       ("comm overlapped, % of comm", ho[r], 100.0 * g["comm_overlapped_ns"] / comm if comm else 0)):
        good = abs(h - c) <= (0.02 * span if name.startswith("window") else 2.0)
        ok &= good
        print("%s: rank %d GPU time %s: HTA %.2f, collscope %.2f" % ("ok" if good else "FAIL", r, name, h, c))
sys.exit(0 if ok else 1)
PYEOF
pass
