#!/usr/bin/env python3
"""sim_facts.py: checks of the reference simulator (tests/gpusim/sim.py)
against facts it did not compute: its traces read back as a profiler's
reader would, the textbook pipeline formulas, HTA and collscope.

  sim_facts.py trace JOB [--report REPORT.json]
  sim_facts.py formula JOB
  sim_facts.py hta JOB
  sim_facts.py same-noise CLEAN_JOB FAULT_JOB

trace: from JOB/traces alone (no engine code): every rank's ProfilerStep
spans give back truth.json's step times (step k ends at the last rank's
ProfilerStep#k end); kernels on one stream never overlap; a kernel starts
after its launch call began (cudaLaunchKernel/ExC by correlation); the
members of each collective (its group and Seq, as the kernels' args say)
are the group's ranks and end together, not before the last one started;
each send ends with its receive (matched in order per sender, receiver and
group), not before the later one started; the compute kernel launched
after a receive or a tensor-parallel allreduce starts after that kernel's
end; a NCCL kernel but a receive starts after the compute kernel launched
before it;
each rank's NCCL waiting (kernel start to the last member's start) and GPU
time breakdown, recomputed here by a sweep of this file's own, equal
truth.json's; with --report, collscope's gpu_time[] (docs/report-json.md)
agrees with truth.json within 0.5 point of the window and 1 %.

formula: a job with no communication time, no noise, one replica and no
tensor parallelism has the pipeline's textbook step: (M + P - 1) x (F + B)
for 1F1B and GPipe, (M V + P - 1) x (F + B) for interleaved 1F1B (F, B a
chunk's forward and backward; plus the last stage's M loss kernels and
the launch latencies, under 0.1 ms).

hta: Holistic Trace Analysis's temporal breakdown (idle, compute,
non-compute over its window) and its communication/computation overlap on
JOB/traces agree with truth.json's within 2 points.

same-noise: the fault-free replay of FAULT_JOB (S_fixed, its steps) is
CLEAN_JOB's actual run: same seed, the same noise draws.

Exit status: 0 all checks hold, 1 one fails (the line says which).
"""
import collections
import glob
import json
import os
import re
import sys

BAD = []


def fail(msg):
    BAD.append(msg)
    print("FAIL: " + msg)


def ns(us):
    return int(round(float(us) * 1000))


def load(job):
    with open(os.path.join(job, "truth.json")) as f:
        truth = json.load(f)
    ranks = {}
    for p in glob.glob(os.path.join(job, "traces", "rank*.json")):
        with open(p) as f:
            d = json.load(f)
        ranks[d["distributedInfo"]["rank"]] = d
    return truth, ranks


def sweep(ivs):
    """(start, end, is_compute) intervals -> window, compute, comm_exposed,
    comm_overlapped, idle: each instant the first that applies."""
    pts = sorted({p for b, e, _ in ivs for p in (b, e)})
    out = dict(window=0, compute=0, comm_exposed=0, comm_overlapped=0, idle=0)
    if not pts:
        return out
    out["window"] = pts[-1] - pts[0]
    # difference arrays over the points: running counts of each class
    idx = {p: i for i, p in enumerate(pts)}
    dc = [0] * (len(pts) + 1)
    dn = [0] * (len(pts) + 1)
    for b, e, comp in ivs:
        if e <= b:
            continue
        d = dc if comp else dn
        d[idx[b]] += 1
        d[idx[e]] -= 1
    c = n = 0
    for i in range(len(pts) - 1):
        c += dc[i]
        n += dn[i]
        span = pts[i + 1] - pts[i]
        if c:
            out["compute"] += span
            if n:
                out["comm_overlapped"] += span
        elif n:
            out["comm_exposed"] += span
        else:
            out["idle"] += span
    return out


def check_trace(job, report=None):
    truth, ranks = load(job)
    W = truth["world"]
    if sorted(ranks) != list(range(W)):
        fail("ranks in the traces %s, truth says %d" % (sorted(ranks)[:8], W))
        return
    steps = truth["config"]["steps"]
    first = truth["config"]["first_step"]
    # 1. steps from ProfilerStep spans
    ends = collections.defaultdict(list)
    begins = collections.defaultdict(list)
    for r, d in ranks.items():
        for e in d["traceEvents"]:
            m = re.match(r"ProfilerStep#(\d+)$", e.get("name", ""))
            if m and e.get("cat") == "user_annotation":
                k = int(m.group(1)) - first
                begins[k].append(ns(e["ts"]))
                ends[k].append(ns(e["ts"]) + ns(e["dur"]))
    if sorted(ends) != list(range(steps)) or any(len(ends[k]) != W for k in ends):
        fail("ProfilerStep spans: steps %s, want %d on each of %d ranks" % (sorted(ends), steps, W))
        return
    got, prev = [], min(begins[0])
    for k in range(steps):
        got.append(max(ends[k]) - prev)
        prev = max(ends[k])
    if any(abs(g - t) > 2 for g, t in zip(got, truth["steps_ns"])):
        fail("step times from the ProfilerStep spans %s, truth %s" % (got[:4], truth["steps_ns"][:4]))
    else:
        print("ok: %d steps from the ProfilerStep spans equal the truth's (median %.3f ms)" %
              (steps, truth["step_median_ns"] / 1e6))
    # 2. kernels, launches, collectives
    colls = collections.defaultdict(list)  # (pg, seq) -> [(rank, start, end)]
    p2p = collections.defaultdict(list)  # (src, dst, pg, kind) -> [(start, end)]
    n_overlap = n_early = n_dep = n_nccl_dep = 0
    nk = 0
    for r, d in ranks.items():
        kern = {}
        launch = {}
        rpc = []
        for e in d["traceEvents"]:
            if e.get("ph") != "X":
                continue
            a = e.get("args", {})
            if e.get("cat") == "kernel":
                kern[a["correlation"]] = e
            elif e.get("cat") == "cuda_runtime" and e["name"].startswith("cudaLaunchKernel"):
                launch[a["correlation"]] = e
        by_stream = collections.defaultdict(list)
        for c, k in kern.items():
            by_stream[k["args"]["stream"]].append((ns(k["ts"]), ns(k["ts"]) + ns(k["dur"])))
            if c not in launch:
                fail("rank %d: kernel %s (correlation %d) has no launch" % (r, k["name"][:30], c))
            elif ns(k["ts"]) < ns(launch[c]["ts"]):
                n_early += 1
            nk += 1
        for s, iv in by_stream.items():
            iv.sort()
            n_overlap += sum(1 for a, b in zip(iv, iv[1:]) if b[0] < a[1])
        # the program order: the launches by CPU time
        order = sorted(launch.values(), key=lambda e: ns(e["ts"]))
        last_compute_end = None
        wait_for = []  # ends the next compute kernel must come after
        for L in order:
            k = kern[L["args"]["correlation"]]
            b, e = ns(k["ts"]), ns(k["ts"]) + ns(k["dur"])
            a = k["args"]
            if k["name"].startswith("nccl"):
                coll = a["Collective name"]
                if coll != "recv" and last_compute_end is not None and b < last_compute_end:
                    n_nccl_dep += 1
                if coll in ("send", "recv"):
                    src, dst = (r, a["Dst Rank"]) if coll == "send" else (a["Src Rank"], r)
                    p2p[(src, dst, a["Process Group Name"], coll)].append((b, e))
                    if coll == "recv":
                        wait_for.append(e)
                else:
                    colls[(a["Process Group Name"], a["Seq"])].append((r, b, e, a["Group size"]))
                    if a["Process Group Description"] == "TENSOR_MODEL_PARALLEL_GROUP":
                        wait_for.append(e)
            else:
                if any(b < w for w in wait_for):
                    n_dep += 1
                wait_for = []
                last_compute_end = e
    if n_overlap or n_early or n_dep or n_nccl_dep:
        fail("kernels: %d overlap on a stream, %d start before their launch, %d compute kernels before the "
             "receive or tensor-parallel allreduce before them ended, %d NCCL kernels before the compute before "
             "them ended" % (n_overlap, n_early, n_dep, n_nccl_dep))
    else:
        print("ok: %d kernels: one at a time on each stream, each after its launch; the compute after a receive "
              "or a tensor-parallel allreduce after its end, a NCCL kernel after the compute before it" % nk)
    groups = {g["pg_name"]: g for g in ranks[0]["distributedInfo"]["pg_config"]}
    bad_c = 0
    wait = collections.Counter()
    for (pg, seq), mem in colls.items():
        rs = sorted(m[0] for m in mem)
        last = max(m[1] for m in mem)
        if rs != sorted(groups[pg]["ranks"]) or len({m[2] for m in mem}) != 1 or mem[0][2] < last:
            bad_c += 1
        for m in mem:
            wait[m[0]] += last - m[1]
    bad_p = 0
    np2p = 0
    for (src, dst, pg, kind), iv in p2p.items():
        if kind != "send":
            continue
        rv = p2p.get((src, dst, pg, "recv"), [])
        if len(rv) != len(iv):
            bad_p += 1
            continue
        for (sb, se), (rb, re_) in zip(iv, rv):
            np2p += 1
            if se != re_ or se < max(sb, rb):
                bad_p += 1
            wait[src] += max(sb, rb) - sb
            wait[dst] += max(sb, rb) - rb
    if bad_c or bad_p:
        fail("%d collectives whose members are not the group or do not end together after the last start; %d "
             "sends that do not end with their receives" % (bad_c, bad_p))
    else:
        print("ok: %d collectives end together after their last member's start; %d sends with their receives" %
              (len(colls), np2p))
    tw = {row["rank"]: row["nccl_wait_ns"] for row in truth["ranks"]}
    off = [r for r in range(W) if wait[r] != tw[r]]
    if off:
        fail("NCCL waiting from the traces differs from the truth's on ranks %s (rank %d: %d, truth %d)" %
             (off[:8], off[0], wait[off[0]], tw[off[0]]))
    else:
        print("ok: each rank's NCCL waiting from the traces equals the truth's (rank 0: %.3f ms)" % (wait[0] / 1e6))
    # 3. the GPU time breakdown, by this file's own sweep
    for r, d in ranks.items():
        ivs = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), not e["name"].startswith("nccl"))
               for e in d["traceEvents"] if e.get("cat") == "kernel"]
        mine = sweep(ivs)
        theirs = truth["ranks"][r]["gpu"]
        if mine != theirs:
            fail("rank %d: GPU time by sweep %s, truth %s" % (r, mine, theirs))
            break
    else:
        print("ok: every rank's GPU time breakdown by an independent sweep equals the truth's")
    if report:
        with open(report) as f:
            rep = json.load(f)
        rows = {g["rank"]: g for g in rep.get("gpu_time", [])}
        if sorted(rows) != list(range(W)):
            fail("collscope's gpu_time has ranks %s, want 0..%d" % (sorted(rows)[:8], W - 1))
            return
        worst = 0.0
        for r in range(W):
            t, g = truth["ranks"][r]["gpu"], rows[r]
            if abs(g["window_ns"] - t["window"]) > 0.01 * t["window"]:
                fail("rank %d: collscope's GPU window %d ns, truth %d" % (r, g["window_ns"], t["window"]))
            for part in ("compute", "comm_exposed", "comm_overlapped", "idle"):
                dv = abs(g[part + "_ns"] - t[part]) / t["window"]
                worst = max(worst, dv)
                if dv > 0.005:
                    fail("rank %d: collscope's %s %d ns, truth %d (window %d)" %
                         (r, part, g[part + "_ns"], t[part], t["window"]))
        print("ok: collscope's gpu_time of %d ranks within %.3f points of the truth's" % (W, 100 * worst))


def check_formula(job):
    truth, _ = load(job)
    c = truth["config"]
    P, M = c["pp"], c["micro"]
    V = c["chunks"] if c["schedule"] == "interleaved" else 1
    F = c["layers"] * c["fwd_us"] * 1000
    B = F * c["bwd_ratio"]
    loss = M * int(c["fwd_us"] * 0.1 * 1000)
    want = (M * V + P - 1) * (F + B) + loss
    got = truth["ideal_median_ns"]
    if not (want <= got <= want + 100000):
        fail("%s: ideal step %.3f ms, the formula %.3f ms (+ up to 0.1 ms)" % (c["schedule"], got / 1e6, want / 1e6))
    else:
        print("ok: %s, pp %d, %d microbatches%s: ideal step %.3f ms, the formula %.3f ms" %
              (c["schedule"], P, M, ", %d chunks" % V if V > 1 else "", got / 1e6, want / 1e6))


def check_hta(job):
    from hta.trace_analysis import TraceAnalysis
    truth, _ = load(job)
    a = TraceAnalysis(trace_dir=os.path.join(job, "traces"), include_last_profiler_step=True)
    tb = a.get_temporal_breakdown(visualize=False)
    ov = a.get_comm_comp_overlap(visualize=False)
    hb = {int(r["rank"]): r for _, r in tb.iterrows()}
    ho = {int(r["rank"]): float(r["comp_comm_overlap_pctg"]) for _, r in ov.iterrows()}
    worst = 0.0
    for row in truth["ranks"]:
        r, t = row["rank"], row["gpu"]
        if r not in hb or r not in ho:
            fail("HTA has no row for rank %d" % r)
            continue
        h = hb[r]
        span = float(h["kernel_time(us)"])
        comm = t["comm_exposed"] + t["comm_overlapped"]
        pairs = (("idle", 100 * float(h["idle_time(us)"]) / span, 100.0 * t["idle"] / t["window"]),
                 ("compute", 100 * float(h["compute_time(us)"]) / span, 100.0 * t["compute"] / t["window"]),
                 ("non-compute", 100 * float(h["non_compute_time(us)"]) / span,
                  100.0 * t["comm_exposed"] / t["window"]),
                 ("comm overlapped, % of comm", ho[r], 100.0 * t["comm_overlapped"] / comm if comm else 0.0))
        for name, hv, tv in pairs:
            worst = max(worst, abs(hv - tv))
            if abs(hv - tv) > 2.0:
                fail("rank %d %s: HTA %.2f %%, truth %.2f %%" % (r, name, hv, tv))
    print("ok: HTA's breakdown and overlap of %d ranks within %.3f points of the truth's" %
          (len(truth["ranks"]), worst))


def check_same_noise(clean, faulty):
    t0, _ = load(clean)
    t1, _ = load(faulty)
    if t1["fixed_steps_ns"] != t0["steps_ns"] or t1["ideal_steps_ns"] != t0["ideal_steps_ns"]:
        fail("the fault-free replay of %s %s, the clean job's steps %s" %
             (faulty, t1["fixed_steps_ns"][:3], t0["steps_ns"][:3]))
    elif not t1["S"] > t1["S_fixed"]:
        fail("%s: S %.3f not above its S without the fault %.3f" % (faulty, t1["S"], t1["S_fixed"]))
    else:
        print("ok: the fault-free replay is the clean job's run (S %.3f; with the fault %.3f)" %
              (t1["S_fixed"], t1["S"]))


def main(argv):
    if len(argv) < 3 or argv[1] not in ("trace", "formula", "hta", "same-noise"):
        sys.stderr.write(__doc__)
        return 2
    if argv[1] == "trace":
        rep = argv[argv.index("--report") + 1] if "--report" in argv else None
        check_trace(argv[2], rep)
    elif argv[1] == "formula":
        check_formula(argv[2])
    elif argv[1] == "hta":
        check_hta(argv[2])
    else:
        check_same_noise(argv[2], argv[3])
    return 1 if BAD else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
