#!/usr/bin/env python3
"""gpu_pipe_gen.py: write per-rank PyTorch profiler (Kineto) traces of a
simulated Megatron-style GPU training job whose slowdown is known, for the
tests of the slowdown attribution on GPU streams
(tests/import/gpu_slowdown.sh).

  gpu_pipe_gen.py OUTDIR [--dp 4] [--pp 4] [--micro 4] [--steps 6]
                  [--slow-rank R] [--slow-stage S] [--slow-link R] [--factor 2.0]
                  [--jitter 0.02] [--seed 1] [--truth FILE]

The job: dp x pp ranks (rank = stage * dp + replica, as Megatron numbers
them with tp 1); groups dp_group_S (the replicas of stage S) and
pp_group_I (the stages of replica I). Each step, each rank runs a 1F1B
schedule of MICRO microbatches on compute stream 7 (a forward: three
kernels; a backward: three kernels twice as long); stage S > 0 receives
each forward's input from stage S - 1, and stage S < pp - 1 each
backward's gradient from S + 1, by NCCL send/receive kernels (ncclDevKernel
_SendRecv) on stream 21 (forward direction) and 22 (backward direction),
in program order; a receive kernel starts as soon as its stream reaches it
and waits inside the kernel for its sender; the compute that needs it waits
for its end (a stream wait). After the last backward, the gradient
allreduce of the stage's replicas on stream 20 (waits for the last
backward kernel), then an optimizer kernel on stream 7 (waits for the
allreduce); then the host synchronises and launches the next step 300 us
later. Every kernel's duration is its nominal times (1 +- jitter); the
slow rank's compute kernels (or the slow stage's) are FACTOR times longer;
with --slow-link R, every transfer rank R takes part in (its sends,
receives and allreduces).

The simulation: every op starts at the latest of its stream predecessor's
end, the end of the op it waits for, and its launch; a transfer (a
send/receive pair, an allreduce) ends a fixed time after its last member
started. The truth (--truth, JSON): the median step time (between the
earliest starts of consecutive steps, the last step left out) of this run
(actual) and of the same job with nominal durations and no slow rank or
stage (ideal), S = actual / ideal, and the culprit (rank, stage or none).
Times are whole nanoseconds written as microseconds with 3 decimals.
"""
import argparse
import json
import os
import random
import statistics
import sys

BASE_NS = 1700000000000000000
FWD = (("ampere_fp16_s16816gemm_fwd_qkv", 300000), ("flash_fwd_kernel", 250000),
       ("ampere_fp16_s16816gemm_fwd_mlp", 450000))
BWD = (("ampere_fp16_s16816gemm_bwd_mlp", 900000), ("flash_bwd_kernel", 500000),
       ("ampere_fp16_s16816gemm_bwd_qkv", 600000))
P2P_NS = 60000
AR_NS = 800000
OPT_NS = 200000
HOST_GAP = 300000
KERNEL_GAP = 2000


class Op:
    __slots__ = ("rank", "stream", "name", "kind", "dur", "deps", "group", "start", "end", "step", "extra")

    def __init__(self, rank, stream, name, kind, dur, step):
        self.rank, self.stream, self.name, self.kind, self.dur = rank, stream, name, kind, dur
        self.deps = []  # (op, lag): start no earlier than op's end + lag
        self.group = None  # communication: its members (list), the transfer time
        self.start = self.end = None
        self.step = step
        self.extra = {}


def build(a, slow_rank, slow_stage, factor, jitter, rng, slow_link=-1):
    dp, pp, m = a.dp, a.pp, a.micro
    R = dp * pp
    ops = {r: [] for r in range(R)}  # program order per rank
    last_opt = {}
    for step in range(a.steps):
        sends = {}  # (direction, src, mb) -> op
        for st in range(pp):
            for i in range(dp):
                r = st * dp + i
                slow = (r == slow_rank or st == slow_stage)

                def kern(name, nominal, st=st, r=r, slow=slow):
                    d = nominal * (1 + rng.uniform(-jitter, jitter)) * (factor if slow else 1.0)
                    o = Op(r, 7, name, "compute", int(d), step)
                    ops[r].append(o)
                    return o

                def p2p(direction, peer, kind):
                    o = Op(r, 21 if direction == "f" else 22, "ncclDevKernel_SendRecv", kind, 0, step)
                    o.extra["peer"] = peer
                    ops[r].append(o)
                    return o
                warm = min(pp - st - 1, m)
                order = ["F"] * warm
                f, b = warm, 0
                while f < m:
                    order += ["F", "B"]
                    f += 1
                    b += 1
                order += ["B"] * (m - b)
                fi = bi = 0
                n0 = len(ops[r])
                for w in order:
                    if w == "F":
                        rv = p2p("f", r - dp, "recv") if st > 0 else None
                        ks = [kern(n, d) for n, d in FWD]
                        if rv:
                            ks[0].deps.append((rv, 0))
                            rv.extra["mb"] = fi
                        if st < pp - 1:
                            sd = p2p("f", r + dp, "send")
                            sd.deps.append((ks[-1], 0))
                            sd.extra["mb"] = fi
                        fi += 1
                    else:
                        rv = p2p("b", r + dp, "recv") if st < pp - 1 else None
                        ks = [kern(n, d) for n, d in BWD]
                        if rv:
                            ks[0].deps.append((rv, 0))
                            rv.extra["mb"] = bi
                        if st > 0:
                            sd = p2p("b", r - dp, "send")
                            sd.deps.append((ks[-1], 0))
                            sd.extra["mb"] = bi
                        bi += 1
                if r in last_opt:  # the host launches the step after its synchronisation
                    seen = set()
                    for o in ops[r][n0:]:
                        if o.stream not in seen:
                            seen.add(o.stream)
                            o.deps.append((last_opt[r], HOST_GAP))
                ar = Op(r, 20, "ncclDevKernel_AllReduce_Sum_f16_RING_LL", "allreduce", 0, step)
                ar.deps.append((ops[r][-1] if ops[r][-1].stream == 7 else [o for o in ops[r] if o.stream == 7][-1], 0))
                ops[r].append(ar)
                opt = Op(r, 7, "multi_tensor_apply_kernel_adam", "compute", int(OPT_NS * (1 + rng.uniform(-jitter, jitter))), step)
                opt.deps.append((ar, 0))
                ops[r].append(opt)
                last_opt[r] = opt
        # pair the p2p ops of this step, group the allreduces
        for r in range(R):
            for o in ops[r]:
                if o.step == step and o.kind in ("send", "recv"):
                    d = "f" if o.stream == 21 else "b"
                    key = (d, r, o.extra["peer"], o.extra["mb"]) if o.kind == "send" else \
                        (d, o.extra["peer"], r, o.extra["mb"])
                    sends.setdefault(key, []).append(o)
        for key, pair in sends.items():
            assert len(pair) == 2, key
            x = P2P_NS * (factor if any(o.rank == slow_link for o in pair) else 1.0)
            for o in pair:
                o.group = (pair, int(x))
        for st in range(pp):
            members = [o for i in range(dp) for o in ops[st * dp + i] if o.step == step and o.kind == "allreduce"]
            x = AR_NS * (factor if any(o.rank == slow_link for o in members) else 1.0)
            for o in members:
                o.group = (members, int(x))
    return ops


def simulate(ops):
    """Kahn's order over the ops: an op is ready when its stream predecessor
    and its dependencies have ended; a communication ends when all its
    members have started."""
    pred = {}
    waiters = {}
    count = {}
    allops = [o for r in ops for o in ops[r]]
    for r in ops:
        last = {}
        for o in ops[r]:
            p = last.get(o.stream)
            pred[id(o)] = p
            last[o.stream] = o
            need = [x for x, _ in o.deps] + ([p] if p else [])
            count[id(o)] = len(need)
            for x in need:
                waiters.setdefault(id(x), []).append(o)
    started = {}
    todo = [o for o in allops if count[id(o)] == 0]
    t0 = 1_000_000_000

    def finish(o):
        for w in waiters.get(id(o), []):
            count[id(w)] -= 1
            if count[id(w)] == 0:
                todo.append(w)
    n = 0
    while todo:
        o = todo.pop()
        n += 1
        s = t0
        p = pred[id(o)]
        if p:
            s = max(s, p.end + KERNEL_GAP)
        for x, lag in o.deps:
            s = max(s, x.end + lag + KERNEL_GAP)
        o.start = s
        if o.group is None:
            o.end = s + o.dur
            finish(o)
            continue
        members, xfer = o.group
        key = id(members)
        started[key] = started.get(key, 0) + 1
        if started[key] == len(members):
            last = max(x.start for x in members)
            for x in members:
                x.end = last + xfer
            for x in members:
                finish(x)
    if n != len(allops):
        sys.exit("gpu_pipe_gen.py: the schedule deadlocked")


def step_time(ops, steps):
    begin = [min(o.start for r in ops for o in ops[r] if o.step == k) for k in range(steps)]
    return statistics.median(begin[k + 1] - begin[k] for k in range(steps - 1)), begin


def us(ns):
    return "%.3f" % (ns / 1000.0)


def write(a, ops, outdir):
    dp, pp = a.dp, a.pp
    R = dp * pp
    groups = [{"pg_name": "0", "pg_desc": "default_pg", "ranks": list(range(R))}]
    for st in range(pp):
        groups.append({"pg_name": str(1 + st), "pg_desc": "dp_group_%d" % st,
                       "ranks": [st * dp + i for i in range(dp)]})
    for i in range(dp):
        groups.append({"pg_name": str(1 + pp + i), "pg_desc": "pp_group_%d" % i,
                       "ranks": [st * dp + i for st in range(pp)]})
    for g in groups:
        g["pg_size"] = len(g["ranks"])
        g["backend_config"] = "cuda:nccl"
    dp_of = {r: next(g for g in groups if g["pg_desc"].startswith("dp_") and r in g["ranks"]) for r in range(R)}
    pp_of = {r: next(g for g in groups if g["pg_desc"].startswith("pp_") and r in g["ranks"]) for r in range(R)}
    seq = {g["pg_name"]: 0 for g in groups}
    os.makedirs(outdir, exist_ok=True)
    # the allreduces' Seq: per group, in step order (every member issues them alike)
    ar_seq = {}
    for st in range(pp):
        g = groups[1 + st]
        for k in range(a.steps):
            ar_seq[(st, k)] = seq[g["pg_name"]]
            seq[g["pg_name"]] += 1
    for r in range(R):
        pid = 1000 + r
        ev = []
        ext = 100
        st = r // dp
        prog = ops[r]
        for k in range(a.steps):
            mine = [o for o in prog if o.step == k]
            first = min(o.start for o in mine)
            c0 = first - HOST_GAP + 20000
            nxt = [o for o in prog if o.step == k + 1]
            c1 = (min(o.start for o in nxt) - HOST_GAP + 20000) if nxt else max(o.end for o in mine) + 20000
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (k + 1), "pid": pid,
                       "tid": pid, "ts": float(us(c0)), "dur": round((c1 - c0) / 1000.0, 3)})
            for j, o in enumerate(mine):
                ext += 1
                launch = c0 + 1000 + 2000 * j
                assert launch < o.start, "a launch after its kernel"
                base = {"External id": ext, "device": 0, "stream": o.stream, "correlation": ext + 50000}
                if o.kind == "compute":
                    ev.append({"ph": "X", "cat": "kernel", "name": o.name, "pid": 0, "tid": o.stream,
                               "ts": float(us(o.start)), "dur": round((o.end - o.start) / 1000.0, 3), "args": base})
                    continue
                if o.kind == "allreduce":
                    g = dp_of[r]
                    args = {"Collective name": "allreduce", "dtype": "Half", "In msg nelems": 1 << 24,
                            "Out msg nelems": 1 << 24, "Group size": len(g["ranks"]),
                            "Process Group Name": g["pg_name"], "Process Group Description": g["pg_desc"],
                            "Process Group Ranks": str(g["ranks"]), "Seq": ar_seq[(st, k)]}
                else:
                    g = pp_of[r]
                    peer = o.extra["peer"]
                    args = {"Collective name": o.kind, "dtype": "Half", "In msg nelems": 1 << 20,
                            "Out msg nelems": 1 << 20, "Group size": len(g["ranks"]),
                            "Process Group Name": g["pg_name"], "Process Group Description": g["pg_desc"],
                            "Process Group Ranks": str(g["ranks"]),
                            ("Dst Rank" if o.kind == "send" else "Src Rank"): peer}
                args["External id"] = ext
                ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": pid, "tid": pid,
                           "ts": float(us(launch)), "dur": 1.0, "args": args})
                kargs = dict(args)
                kargs.update(base)
                ev.append({"ph": "X", "cat": "kernel", "name": o.name + "(ncclDevKernelArgsStorage<4096ul>)",
                           "pid": 0, "tid": o.stream, "ts": float(us(o.start)),
                           "dur": round((o.end - o.start) / 1000.0, 3), "args": kargs})
        doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Generated GPU"}],
               "distributedInfo": {"backend": "nccl", "rank": r, "world_size": R, "pg_count": len(groups),
                                   "pg_config": groups, "nccl_version": "2.21.5"},
               "traceEvents": sorted(ev, key=lambda e: (e["tid"] != pid, e["ts"])),
               "traceName": "rank%d.json" % r, "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS}
        with open(os.path.join(outdir, "rank%d.json" % r), "w") as f:
            json.dump(doc, f)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--dp", type=int, default=4)
    ap.add_argument("--pp", type=int, default=4)
    ap.add_argument("--micro", type=int, default=4)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-stage", type=int, default=-1)
    ap.add_argument("--slow-link", type=int, default=-1)
    ap.add_argument("--factor", type=float, default=2.0)
    ap.add_argument("--jitter", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--truth")
    a = ap.parse_args(argv[1:])
    if a.dp < 1 or a.pp < 1 or a.dp * a.pp < 2 or a.steps < 4:
        sys.exit("gpu_pipe_gen.py: need dp * pp >= 2 ranks and 4 steps or more")
    ops = build(a, a.slow_rank, a.slow_stage, a.factor, a.jitter, random.Random(a.seed), a.slow_link)
    simulate(ops)
    ideal = build(a, -1, -1, 1.0, 0.0, random.Random(a.seed))
    simulate(ideal)
    t_act, _ = step_time(ops, a.steps)
    t_ideal, _ = step_time(ideal, a.steps)
    write(a, ops, a.out)
    culprit = "rank %d" % a.slow_rank if a.slow_rank >= 0 else "rank %d" % a.slow_link if a.slow_link >= 0 else "pp stage %d" % a.slow_stage if a.slow_stage >= 0 \
        else "none"
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump({"actual_ns": t_act, "ideal_ns": t_ideal, "S": t_act / t_ideal, "culprit": culprit,
                       "slow_rank": a.slow_rank, "slow_stage": a.slow_stage, "dp": a.dp, "pp": a.pp,
                       "ranks": a.dp * a.pp}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
