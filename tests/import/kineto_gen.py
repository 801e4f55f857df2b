#!/usr/bin/env python3
"""kineto_gen.py: write per-rank PyTorch profiler (Kineto) traces of a
simulated data/tensor-parallel job with known answers, for the tests of
`collscope import`.

  kineto_gen.py OUTDIR [--ranks 4] [--steps 12] [--late-rank 3]
                [--delay-us 20000] [--style gloo|nccl] [--no-seq] [--gzip]
                [--answers FILE]

The job: world of R ranks (R even); process groups default_pg (all),
tp_group_K (ranks 2K, 2K+1) and dp_group_K (ranks K, K + R/2). Each step
(ProfilerStep#N, N from 1): a compute CPU op (the late rank's is DELAY
longer; with --style nccl also a GEMM kernel), then an allreduce on
default_pg, one on the rank's tp group, one on its dp group, and rank 0 sends
to rank 1 on default_pg. A broadcast on default_pg starts the job. Rank r's
clock is r * SKEW us ahead (--skew-us, 37 unless given), rank R's by US
more with --shift R:US, and every time of rank R's is off by a random
amount within +-US with --clock-noise R:US (a clock no offset explains). With --style gloo, collectives are
record_param_comms CPU ops (the issue) and gloo:NAME annotations on the gloo
threads (the work: one worker thread per group, p2p on the calling thread);
with --style nccl, record_param_comms and NCCL kernels on stream 7 linked by
External id. --no-seq leaves out the Seq arg; --no-rpc leaves out
record_param_comms (as PyTorch's gloo CPU runs do).

The answers (per-rank counts, group membership) go to --answers as JSON.
"""
import argparse
import gzip
import json
import os
import random
import sys

BASE_NS = 1700000000000000000


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--late-rank", type=int, default=3)
    ap.add_argument("--delay-us", type=float, default=20000.0)
    ap.add_argument("--style", choices=("gloo", "nccl"), default="gloo")
    ap.add_argument("--no-seq", action="store_true")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--no-rpc", action="store_true")
    ap.add_argument("--answers")
    ap.add_argument("--skew-us", type=float, default=37.0)
    ap.add_argument("--shift", action="append", default=[], metavar="R:US")
    ap.add_argument("--clock-noise", action="append", default=[], metavar="R:US")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv[1:])
    R = a.ranks
    if R < 2 or R % 2:
        sys.exit("kineto_gen.py: --ranks must be even and at least 2")
    groups = [{"pg_name": "0", "pg_desc": "default_pg", "ranks": list(range(R))}]
    for k in range(R // 2):
        groups.append({"pg_name": str(1 + k), "pg_desc": "tp_group_%d" % k, "ranks": [2 * k, 2 * k + 1]})
    for k in range(R // 2):
        groups.append({"pg_name": str(1 + R // 2 + k), "pg_desc": "dp_group_%d" % k, "ranks": [k, k + R // 2]})
    for g in groups:
        g["pg_size"] = len(g["ranks"])
        g["backend_config"] = "cpu:gloo" if a.style == "gloo" else "cuda:nccl"

    def group_of(r, prefix):
        return next(g for g in groups if g["pg_desc"].startswith(prefix) and r in g["ranks"])

    ev = {r: [] for r in range(R)}
    pid = {r: 1000 + r for r in range(R)}
    skew = {r: int(r * a.skew_us * 1000) for r in range(R)}  # ns
    for spec in a.shift:
        r, v = spec.split(":")
        skew[int(r)] += int(float(v) * 1000)
    noise = {}
    for spec in a.clock_noise:
        r, v = spec.split(":")
        noise[int(r)] = float(v) * 1000
    rng = random.Random(a.seed)
    seq = {g["pg_name"]: 0 for g in groups}
    ext = {r: [100] for r in range(R)}
    counts = {r: {"collectives": 0, "p2p": 0, "steps": 0, "compute": 0, "kernels": 0, "nccl_kernels": 0}
              for r in range(R)}
    t = {r: 1_000_000_000 for r in range(R)}  # ns, true time

    def us(ns_true, r):
        jitter = rng.uniform(-noise[r], noise[r]) if r in noise else 0.0
        return "%.3f" % ((ns_true + skew[r] + jitter) / 1000.0)

    def add(r, ph, cat, name, t0, t1, tid=None, args=None):
        e = {"ph": ph, "cat": cat, "name": name, "pid": pid[r] if cat != "kernel" else 0,
             "tid": pid[r] if tid is None else tid, "ts": float(us(t0, r)), "dur": round((t1 - t0) / 1000.0, 3)}
        if args:
            e["args"] = args
        ev[r].append(e)

    def next_ext(r):
        ext[r][0] += 1
        return ext[r][0]

    def collective(name, gloo_name, kname, g, nbytes_per_rank, xfer_ns):
        members = g["ranks"]
        arrive = {m: t[m] for m in members}
        start = max(arrive.values())
        end = start + xfer_ns
        s = seq[g["pg_name"]]
        seq[g["pg_name"]] += 1
        for m in members:
            x = next_ext(m)
            args = {"External id": x, "Collective name": name, "dtype": "Float",
                    "In msg nelems": nbytes_per_rank // 4, "Out msg nelems": nbytes_per_rank // 4,
                    "In split size": "[]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1,
                    "Group size": len(members), "Process Group Name": g["pg_name"],
                    "Process Group Description": g["pg_desc"], "Process Group Ranks": str(members)}
            if not a.no_seq:
                args["Seq"] = s
            c0 = arrive[m]
            add(m, "X", "cpu_op", "c10d::" + name + "_", c0 - 3000, c0 + 20000)
            if not a.no_rpc:
                add(m, "X", "cpu_op", "record_param_comms", c0 - 2000, c0 + 15000, args=args)
            if a.style == "gloo":
                # each group's work on its own worker thread, made with the group
                add(m, "X", "user_annotation", "gloo:" + gloo_name, c0, end, tid=pid[m] + 10 + groups.index(g),
                    args={"Input Dims": [[nbytes_per_rank // 4]], "Input type": ["float"]})
            else:
                kargs = dict(args)
                kargs.update({"External id": x, "device": 0, "stream": 7, "correlation": x + 50000})
                add(m, "X", "kernel", "ncclDevKernel_%s_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)" % kname,
                    c0, end, tid=7, args=kargs)
                counts[m]["kernels"] += 1
                counts[m]["nccl_kernels"] += 1
            counts[m]["collectives"] += 1
            t[m] = end + 30000

    def p2p(src, dst, nbytes):
        g = groups[0]
        start = max(t[src], t[dst])
        end = start + 500000
        for r, name, key, peer in ((src, "send", "Dst Rank", dst), (dst, "recv", "Src Rank", src)):
            x = next_ext(r)
            args = {"External id": x, "Collective name": name, "dtype": "Float", "In msg nelems": nbytes // 4,
                    "Out msg nelems": nbytes // 4, "Group size": R, "Process Group Name": "0",
                    "Process Group Description": "default_pg", "Process Group Ranks": str(g["ranks"]), key: peer}
            if not a.no_rpc:
                add(r, "X", "cpu_op", "record_param_comms", t[r], t[r] + 15000, args=args)
            if a.style == "gloo":  # p2p runs on the calling thread
                add(r, "X", "user_annotation", "gloo:" + name, t[r], end,
                    args={"Input Dims": [[nbytes // 4]], "Input type": ["float"]})
            else:
                kargs = dict(args)
                kargs.update({"device": 0, "stream": 7, "correlation": x + 50000})
                add(r, "X", "kernel", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", t[r], end, tid=7,
                    args=kargs)
                counts[r]["kernels"] += 1
                counts[r]["nccl_kernels"] += 1
            counts[r]["p2p"] += 1
            t[r] = end + 30000

    collective("broadcast", "broadcast", "Broadcast", groups[0], 4 << 20, 2_000_000)
    for step in range(1, a.steps + 1):
        step_begin = dict(t)
        for r in range(R):
            c = 50_000_000 + (int(a.delay_us * 1000) if r == a.late_rank else 0)
            add(r, "X", "cpu_op", "aten::mm", t[r], t[r] + c)
            add(r, "X", "cpu_op", "aten::addmm", t[r] + 1000, t[r] + c - 1000)
            counts[r]["compute"] += 1
            if a.style == "nccl":
                add(r, "X", "kernel", "volta_sgemm_128x64_nn", t[r] + 5000, t[r] + c - 5000, tid=7,
                    args={"External id": next_ext(r), "device": 0, "stream": 7, "correlation": 1})
                counts[r]["compute"] += 1
                counts[r]["kernels"] += 1
            t[r] += c
        collective("allreduce", "all_reduce", "AllReduce", groups[0], 64 << 20, 5_000_000)
        for k in range(R // 2):
            collective("allreduce", "all_reduce", "AllReduce", groups[1 + k], 16 << 20, 2_000_000)
        for k in range(R // 2):
            collective("allreduce", "all_reduce", "AllReduce", groups[1 + R // 2 + k], 32 << 20, 3_000_000)
        p2p(0, 1, 1 << 20)
        for r in range(R):
            add(r, "X", "user_annotation", "ProfilerStep#%d" % step, step_begin[r], t[r])
            counts[r]["steps"] += 1
    os.makedirs(a.out, exist_ok=True)
    for r in range(R):
        doc = {"schemaVersion": 1,
               "deviceProperties": [] if a.style == "gloo" else [{"id": 0, "name": "Generated GPU"}],
               "distributedInfo": {"backend": a.style, "rank": r, "world_size": R, "pg_count": len(groups),
                                   "pg_config": groups, "nccl_version": "2.21.5"},
               "record_shapes": 1, "with_stack": 0,
               "traceEvents": sorted(ev[r], key=lambda e: (e["tid"] != pid[r], e["ts"])),
               "traceName": "rank%d.json" % r, "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS}
        path = os.path.join(a.out, "rank%d.json%s" % (r, ".gz" if a.gzip else ""))
        opener = gzip.open if a.gzip else open
        with opener(path, "wt") as f:
            json.dump(doc, f, indent=1)
    if a.answers:
        with open(a.answers, "w") as f:
            json.dump({"counts": counts, "groups": groups, "delay_ns": int(a.delay_us * 1000),
                       "late_rank": a.late_rank, "ranks": R}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
