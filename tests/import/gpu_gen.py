#!/usr/bin/env python3
"""gpu_gen.py: write per-rank PyTorch profiler (Kineto) traces of a
simulated data-parallel GPU job whose GPU time breakdown is known, for the
tests of the GPU time analysis (tests/import/gpu_breakdown.sh).

  gpu_gen.py OUTDIR [--ranks 8] [--steps 4] [--slow-rank R] [--seed 1]
             [--truth FILE]

Each step (ProfilerStep#N, N from 1) of each rank: a host-to-device copy
and a memset on stream 21; six compute kernels on stream 7 (durations drawn
per rank and step; the slow rank's twice as long); after the third, an
NCCL allreduce on stream 20 that runs beside the later kernels, and after
the last kernel a second allreduce; then a device-to-host copy on stream 21
and an idle gap before the next step. The allreduces of all ranks end
together (the last rank to start them sets their end), so the others wait
in NCCL while the slow rank computes. Every kernel, copy and set has its
cudaLaunchKernel / cudaMemcpyAsync / cudaMemsetAsync on the main thread
(correlation id, ac2g flow) inside its step; every NCCL kernel its
record_param_comms (External id, Seq). Times are whole microseconds.

The truth, per rank, goes to --truth as JSON: window (first GPU start to
last GPU end), compute (union of compute kernels), comm_exposed (NCCL
running and no compute), comm_overlapped (NCCL and compute), memory (a copy
or set and neither compute nor NCCL), idle (nothing), in ns; and the same
for each step (its ProfilerStep window clipped to the rank's GPU window);
computed here by a sweep of this generator's own, from the intervals it
wrote.
"""
import argparse
import json
import os
import random
import sys

BASE_NS = 1700000000000000000
COMPUTE_NAMES = ("sm80_xmma_gemm_f16f16_f32_nn_n_tilesize128x128x32", "elementwise_kernel_add_f32",
                 "layer_norm_fwd_kernel", "softmax_warp_forward")
NCCL_NAME = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
COMPUTE, COMM, MEMORY = 0, 1, 2


def truth_of(intervals, lo=None, hi=None):
    """The breakdown of a rank's (cls, b, e) intervals, in us: a sweep over
    the sorted begin and end points; compute wins, then NCCL, then memory.
    With lo, hi: of the part of the rank's window in [lo, hi)."""
    pts = sorted({p for _, b, e in intervals for p in (b, e)})
    out = {"window": 0, "compute": 0, "comm_exposed": 0, "comm_overlapped": 0, "memory": 0, "idle": 0}
    if not pts:
        return out
    if lo is not None:
        first, last = max(pts[0], lo), min(pts[-1], hi)
        pts = sorted({p for p in pts if first <= p <= last} | {first, last}) if first < last else []
        if not pts:
            return out
    out["window"] = pts[-1] - pts[0]
    for a, b in zip(pts, pts[1:]):
        running = {c for c, x, y in intervals if x <= a and b <= y}
        if COMPUTE in running:
            out["compute"] += b - a
            if COMM in running:
                out["comm_overlapped"] += b - a
        elif COMM in running:
            out["comm_exposed"] += b - a
        elif MEMORY in running:
            out["memory"] += b - a
        else:
            out["idle"] += b - a
    return out


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--truth")
    a = ap.parse_args(argv[1:])
    R = a.ranks
    if R < 1:
        sys.exit("gpu_gen.py: --ranks must be at least 1")
    pg = {"pg_name": "0", "pg_desc": "default_pg", "ranks": list(range(R)), "pg_size": R,
          "backend_config": "cuda:nccl"}
    ev = {r: [] for r in range(R)}
    iv = {r: [] for r in range(R)}  # (cls, begin us, end us)
    pid = {r: 1000 + r for r in range(R)}
    corr = {r: 100000 for r in range(R)}  # large: HTA narrows small correlation ids to int8
    ext = {r: 100 for r in range(R)}
    seq = [0]

    def launch(r, name, t_us, dev_ev):
        """A runtime call on the main thread at t_us for the device event
        dev_ev (a dict), tied to it by correlation id and an ac2g flow."""
        corr[r] += 1
        c = corr[r]
        ev[r].append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": pid[r], "tid": pid[r], "ts": t_us,
                      "dur": 4, "args": {"correlation": c, "External id": dev_ev["args"].get("External id", 0)}})
        dev_ev["args"]["correlation"] = c
        ev[r].append({"ph": "s", "id": c, "pid": pid[r], "tid": pid[r], "ts": t_us + 1, "cat": "ac2g",
                      "name": "ac2g"})
        ev[r].append({"ph": "f", "id": c, "pid": 0, "tid": dev_ev["tid"], "ts": dev_ev["ts"], "cat": "ac2g",
                      "name": "ac2g", "bp": "e"})

    def device(r, cat, name, stream, b, e, cls, host_t, args=None):
        d = {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": b, "dur": e - b,
             "args": dict(args or {}, device=0, stream=stream)}
        ev[r].append(d)
        iv[r].append((cls, b, e))
        launch(r, {"kernel": "cudaLaunchKernel", "gpu_memcpy": "cudaMemcpyAsync",
                   "gpu_memset": "cudaMemsetAsync"}[cat], host_t, d)

    def allreduce(starts, host, xfer_us, nbytes):
        """An allreduce of every rank: NCCL kernels from each rank's start
        to the common end (the last start + the transfer)."""
        end = max(starts.values()) + xfer_us
        s = seq[0]
        seq[0] += 1
        for r in range(R):
            ext[r] += 1
            args = {"External id": ext[r], "Collective name": "allreduce", "dtype": "Float",
                    "In msg nelems": nbytes // 4, "Out msg nelems": nbytes // 4, "In split size": "[]",
                    "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Group size": R,
                    "Process Group Name": "0", "Process Group Description": "default_pg",
                    "Process Group Ranks": str(pg["ranks"]), "Seq": s}
            ev[r].append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": pid[r], "tid": pid[r],
                          "ts": host[r], "dur": 3, "args": args})
            device(r, "kernel", NCCL_NAME, 20, starts[r], end, COMM, host[r] + 1, args)
        return end

    t = 1_000_000  # us: the common start of the step
    bounds = []  # each step's [begin, end)
    for step in range(1, a.steps + 1):
        step_begin = t
        last = {}
        c3 = {}
        for r in range(R):
            rnd = random.Random(a.seed * 1_000_003 + r * 1009 + step)
            slow = 2 if r == a.slow_rank else 1
            h = t + 1  # host time of the next launch
            b = t + 10
            e = b + rnd.randint(30, 60)
            device(r, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 21, b, e, MEMORY, h)
            h += 5
            ms = e + rnd.randint(0, 5)
            device(r, "gpu_memset", "Memset (Device)", 21, ms, ms + rnd.randint(5, 10), MEMORY, h)
            h += 5
            k = t + 20 + rnd.randint(0, 30)  # the first kernel overlaps the copy
            for i in range(6):
                d = rnd.randint(80, 200) * slow
                device(r, "kernel", COMPUTE_NAMES[i % len(COMPUTE_NAMES)], 7, k, k + d, COMPUTE, h)
                h += 5
                k += d
                if i == 2:
                    c3[r] = (k, h)
                k += rnd.randint(5, 15)
            last[r] = (k, h)
        # the first bucket's allreduce after the third kernel, beside the others
        ar1 = allreduce({r: c3[r][0] for r in range(R)}, {r: c3[r][1] + 2 for r in range(R)}, 150, 32 << 20)
        # the second after the last kernel and the first allreduce
        starts = {r: max(last[r][0], ar1) for r in range(R)}
        ar2 = allreduce(starts, {r: last[r][1] + 10 for r in range(R)}, 100, 16 << 20)
        end = ar2
        for r in range(R):
            rnd = random.Random(a.seed * 7919 + r * 31 + step)
            b = ar2 + rnd.randint(2, 10)
            e = b + rnd.randint(15, 30)
            device(r, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 21, b, e, MEMORY, last[r][1] + 20)
            end = max(end, e)
        t = end + 60  # idle before the next step
        bounds.append((step_begin, t))
        for r in range(R):
            ev[r].append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": pid[r],
                          "tid": pid[r], "ts": step_begin, "dur": t - step_begin})
    os.makedirs(a.out, exist_ok=True)
    truth = {}
    for r in range(R):
        doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Generated GPU"}],
               "distributedInfo": {"backend": "nccl", "rank": r, "world_size": R, "pg_count": 1, "pg_config": [pg],
                                   "nccl_version": "2.21.5"},
               "record_shapes": 1, "with_stack": 0,
               "traceEvents": sorted(ev[r], key=lambda e: (e["pid"] != pid[r], e["tid"], e["ts"])),
               "traceName": "rank%d.json" % r, "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS}
        with open(os.path.join(a.out, "rank%d.json" % r), "w") as f:
            json.dump(doc, f, indent=1)
        truth[str(r)] = {k: v * 1000 for k, v in truth_of(iv[r]).items()}
        truth[str(r)]["steps"] = [{k: v * 1000 for k, v in truth_of(iv[r], b, e).items()} for b, e in bounds]
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump({"ranks": R, "slow_rank": a.slow_rank, "truth": truth}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
