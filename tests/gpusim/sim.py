#!/usr/bin/env python3
"""sim.py: the reference simulator of GPU training jobs for collscope
(issue 31). It writes one PyTorch profiler (Kineto) JSON trace per rank
(OUTDIR/traces/rank<N>.json) of a Megatron-style dp x pp x tp job and,
by a discrete-event simulation of its own (no collscope code), the
truth: the step times, the ideal step times, the slowdown S and its
culprit (OUTDIR/truth.json).

  sim.py OUTDIR [--dp 2] [--pp 2] [--tp 2] [--schedule 1f1b] [--micro 4]
                [--steps 8] [--fault none] [--target N] [--factor F]
                [--noise 0.03] [--seed 1] ...     (sim.py --help: all)

The model (docs/gpusim.md has it in full):

- Ranks in Megatron-LM's order, tensor parallelism fastest, then data,
  then pipeline: rank = tp_i + tp * (dp_i + dp * pp_i).
- Process groups (pg_config, every rank lists them all): default_pg; the
  tensor-, data- and pipeline-parallel groups, named as Megatron-core
  names them (TENSOR_MODEL_PARALLEL_GROUP, DATA_PARALLEL_GROUP,
  PIPELINE_MODEL_PARALLEL_GROUP), and with pp > 1 the EMBEDDING_GROUP
  (first and last stage of each pipeline).
- Each rank's CPU runs its program in order: each operation costs it some
  CPU time (an aten op or a c10d call around a cudaLaunchKernel) and
  launches one GPU kernel; the kernel may start a launch latency after the
  launch call began. The CPU waits for the GPU only where it synchronises:
  at the end of each step (cudaDeviceSynchronize, then the next
  ProfilerStep), and with --p2p-sync after each pipeline exchange (as
  Megatron's batch_p2p_sync does: the sends and receives posted one after
  the other are one batch, waited for together).
- Streams are FIFO: compute kernels on stream 7; NCCL kernels on one
  stream per group (tensor 13, data 14, embedding 15, default 16) and on
  four for the pipeline (forward send 17, forward receive 18, backward
  send 19, backward receive 20).
- A NCCL kernel waits for the compute kernels launched before it
  (PyTorch makes its stream wait for the current one). A collective's
  kernels all end at the last member's kernel start plus the transfer
  time; a send and its receive likewise. The time a member's kernel runs
  before the last member starts is waiting. A compute kernel that needs
  a received activation or gradient, or the result of a tensor-parallel
  allreduce, waits for that kernel's end (a cross-stream dependency); the
  optimizer waits for the gradient collectives.
- A step: the microbatches' forwards and backwards in the schedule's
  order (1f1b, interleaved 1f1b with --chunks V, gpipe); per forward of a
  chunk, --layers layers of two compute kernels (attention, MLP), each
  followed by a tensor-parallel allreduce when tp > 1; the last stage
  adds the loss kernel; backwards take --bwd-ratio times as long; then the
  data-parallel gradient sync in --buckets buckets (allreduce, or with
  --dp-mode rs_ag a reduce-scatter before and an all-gather after the
  optimizer; with --overlap-grad launched during the rank's last backward,
  bucket b after its (b+1)/buckets part), the embedding allreduce, a world allreduce of the grad norm,
  the optimizer kernel, the CPU's synchronisation.
- Durations: each kernel's typical duration times a lognormal noise
  factor (median 1, sigma --noise), drawn per rank, step and operation
  from --seed; a collective's transfer times the noise of its lowest
  member rank's draw.
- Faults (--fault): slow_worker (rank --target's compute x F every step),
  slow_stage (every rank of stage --target x F), slow_link (every NCCL
  transfer rank --target takes part in x F), imbalance (the compute of
  each microbatch of each data-parallel replica x 1 + (F-1) u, u uniform
  in [0,1), drawn per step: no single culprit), transient (rank --target's
  compute x F in the steps --transient-steps only).

The truth (truth.json): the job's step time per step (step k ends when
the last rank's CPU returns from its step-end synchronisation: the
max over the ranks of their ProfilerStep#k ends; the first begins at the
common start), and their median; the same simulation with every duration
at its typical value (no fault, no noise): the ideal; S = median actual /
median ideal; the simulation without the fault but with the same noise
(S_fixed: "only the culprit fixed") and with the fault but no noise
(S_fault_only); the expected collscope verdict and culprit; per rank its
(dp, pp, tp), its GPU time breakdown as docs/analysis.md defines it
(compute, comm exposed, comm overlapped, idle over the first GPU start to
the last GPU end), its busy times and its waiting in NCCL kernels.
"""
import argparse
import collections
import json
import os
import re
import sys

import numpy as np

BASE_NS = 1700000000000000000
T0 = 1_000_000_000  # ns after BASE_NS: the job's start

# streams
S_COMPUTE, S_TP, S_DP, S_EMB, S_WORLD = 7, 13, 14, 15, 16
S_FSEND, S_FRECV, S_BSEND, S_BRECV = 17, 18, 19, 20

COMPUTE, COLL, P2P = 0, 1, 2

K_ATTN_F = "flash_fwd_kernel"
K_MLP_F = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel"
K_ATTN_B = "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel"
K_MLP_B = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel"
K_LOSS = "cross_entropy_loss_fwd_kernel"
K_OPT = "multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>"
NCCL_KERNEL = {
    "allreduce": "ncclDevKernel_AllReduce_Sum_%s_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "_reduce_scatter_base": "ncclDevKernel_ReduceScatter_Sum_%s_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "_allgather_base": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "send": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
    "recv": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
}
C10D = {"allreduce": "c10d::allreduce_", "_reduce_scatter_base": "c10d::_reduce_scatter_base_",
        "_allgather_base": "c10d::_allgather_base_", "send": "c10d::send", "recv": "c10d::recv_"}
DTYPE_TAG = {"BFloat16": "bf16", "Float": "f32"}
DTYPE_SIZE = {"BFloat16": 2, "Float": 4}


# ---------------------------------------------------------------- layout

class Layout:
    """dp x pp x tp ranks in Megatron's order and the process groups."""

    def __init__(self, dp, pp, tp):
        self.dp, self.pp, self.tp = dp, pp, tp
        self.world = dp * pp * tp
        self.groups = []  # dicts as pg_config lists them
        self.add_group("default_pg", list(range(self.world)))
        self.tp_g = {}
        self.dp_g = {}
        self.pp_g = {}
        self.emb_g = {}
        for p in range(pp):
            for d in range(dp):
                self.tp_g[(d, p)] = self.add_group("TENSOR_MODEL_PARALLEL_GROUP",
                                                   [self.rank(d, p, t) for t in range(tp)]) if tp > 1 else None
        for p in range(pp):
            for t in range(tp):
                self.dp_g[(p, t)] = self.add_group("DATA_PARALLEL_GROUP",
                                                   [self.rank(d, p, t) for d in range(dp)]) if dp > 1 else None
        for d in range(dp):
            for t in range(tp):
                self.pp_g[(d, t)] = self.add_group("PIPELINE_MODEL_PARALLEL_GROUP",
                                                   [self.rank(d, p, t) for p in range(pp)]) if pp > 1 else None
        for d in range(dp):
            for t in range(tp):
                self.emb_g[(d, t)] = self.add_group("EMBEDDING_GROUP", [self.rank(d, 0, t), self.rank(d, pp - 1, t)]) \
                    if pp > 1 else None

    def rank(self, d, p, t):
        return t + self.tp * (d + self.dp * p)

    def coords(self, r):
        """(dp, pp, tp) of rank r."""
        return (r // self.tp) % self.dp, r // (self.tp * self.dp), r % self.tp

    def add_group(self, desc, ranks):
        g = {"pg_name": str(len(self.groups)), "pg_desc": desc, "backend_config": "cuda:nccl",
             "pg_size": len(ranks), "ranks": ranks}
        self.groups.append(g)
        return g


# ---------------------------------------------------------------- schedules

def schedule(kind, P, s, M, V):
    """Stage s's sequence of ('F'|'B', microbatch, chunk), Megatron's order."""
    if kind == "gpipe":
        return [("F", m, 0) for m in range(M)] + [("B", m, 0) for m in range(M)]
    if kind == "1f1b":
        w = min(P - s - 1, M)
        out = [("F", m, 0) for m in range(w)]
        for i in range(M - w):
            out += [("F", w + i, 0), ("B", i, 0)]
        out += [("B", m, 0) for m in range(M - w, M)]
        return out
    # interleaved 1F1B (Megatron's forward_backward_pipelining_with_interleaving)
    total = M * V

    def mb_chunk(k, fwd):
        c = (k % (P * V)) // P
        return (k // (P * V)) * P + k % P, c if fwd else V - 1 - c

    w = total if M == P else min((P - s - 1) * 2 + (V - 1) * P, total)
    out = [("F",) + mb_chunk(k, True) for k in range(w)]
    for i in range(total - w):
        out.append(("F",) + mb_chunk(w + i, True))
        out.append(("B",) + mb_chunk(i, False))
    out += [("B",) + mb_chunk(k, False) for k in range(total - w, total)]
    return out


# ---------------------------------------------------------------- engine

class Op:
    """One GPU kernel and the CPU operation that launched it."""
    __slots__ = ("rank", "step", "stream", "kind", "name", "cpu_name", "dur", "typ", "deps", "wake", "inst", "cls",
                 "ready", "cpu_b", "cpu_cost", "start", "end", "args", "idx", "fault")

    def __init__(self, rank, step, stream, kind, name, typ, cpu_name, cpu_cost, cls):
        self.rank, self.step, self.stream, self.kind, self.name = rank, step, stream, kind, name
        self.typ = typ  # typical duration (compute) or transfer (communication), ns
        self.dur = typ
        self.cpu_name, self.cpu_cost, self.cls = cpu_name, cpu_cost, cls
        self.deps = []
        self.wake = []
        self.inst = None
        self.ready = self.cpu_b = self.start = self.end = None
        self.args = None
        self.idx = 0
        self.fault = 1.0


class Inst:
    """A collective instance or a send/receive pair: its members' kernels."""
    __slots__ = ("members", "transfer", "nstart", "key")

    def __init__(self, key):
        self.key = key
        self.members = []
        self.transfer = 0
        self.nstart = 0


class Stream:
    __slots__ = ("rank", "sid", "ops", "head", "last_end")

    def __init__(self, rank, sid):
        self.rank, self.sid, self.ops, self.head, self.last_end = rank, sid, [], 0, 0


class Cpu:
    __slots__ = ("rank", "actions", "idx", "pos", "t", "marks", "syncs")

    def __init__(self, rank):
        self.rank, self.actions, self.idx, self.pos, self.t, self.marks, self.syncs = rank, [], 0, 0, T0, [], []


US = 1000  # ns


class Job:
    """The job's programs (built once) and their simulation (run once per
    scenario: with or without noise, with or without the fault)."""

    def __init__(self, a):
        self.a = a
        self.L = Layout(a.dp, a.pp, a.tp)
        for g in self.L.groups:
            g["_ranks_text"] = str(g["ranks"])
        R = self.L.world
        self.cpus = [Cpu(r) for r in range(R)]
        self.streams = [dict() for _ in range(R)]
        self.ops = [[] for _ in range(R)]
        self.insts = {}
        self.seq = collections.defaultdict(int)  # (rank, pg_name) -> next Seq
        self.pending_wait = [[] for _ in range(R)]  # ops the compute stream must wait for before its next kernel
        self.last_compute = [None] * R
        self.step_ops = [[] for _ in range(R)]
        self.p2p_batch = [[] for _ in range(R)]
        self.build()
        # the wake lists: who to look at again when an op ends
        for r in range(R):
            for st in self.streams[r].values():
                for op in st.ops:
                    for d in op.deps:
                        d.wake.append(st)
            for act in self.cpus[r].actions:
                if act[0] == "sync":
                    for op in act[1]:
                        op.wake.append(self.cpus[r])

    # -- building

    def stream(self, r, sid):
        s = self.streams[r].get(sid)
        if s is None:
            s = self.streams[r][sid] = Stream(r, sid)
        return s

    def launch(self, op, deps=()):
        r = op.rank
        if op.kind != P2P:
            self.flush_p2p(r)
        op.idx = len(self.step_ops[r])
        self.step_ops[r].append(op)
        self.ops[r].append(op)
        self.stream(r, op.stream).ops.append(op)
        self.cpus[r].actions.append(("launch", op))
        for d in deps:
            if d is not None:
                op.deps.append(d)

    def compute(self, r, step, name, typ_ns, cpu_name, cls="c"):
        op = Op(r, step, S_COMPUTE, COMPUTE, name, typ_ns, cpu_name, self.a.cpu_op_us * US, cls)
        self.launch(op, self.pending_wait[r])
        self.pending_wait[r] = []
        self.last_compute[r] = op
        return op

    def p2p_half(self, step, r, peer, g, nelems, typ_ns, send, fwd, key):
        """Rank r's half of a pipeline exchange with peer (a global rank) on
        group g: a send (after the compute launched before it) or a receive
        (the next compute kernel waits for it); the two halves meet in the
        instance of key (sender, receiver, direction, microbatch, chunk)."""
        inst = self.insts.get(key)
        if inst is None:
            inst = self.insts[key] = Inst(key)
            inst.transfer = typ_ns
        coll = "send" if send else "recv"
        sid = (S_FSEND if send else S_FRECV) if fwd else (S_BSEND if send else S_BRECV)
        op = Op(r, step, sid, P2P, NCCL_KERNEL[coll], typ_ns, C10D[coll], self.a.cpu_comm_us * US, "p")
        op.inst = inst
        op.args = {"Collective name": coll, "dtype": "BFloat16", "In msg nelems": nelems, "Out msg nelems": nelems,
                   "In split size": "[]", "Out split size": "[]", "Global rank start": g["ranks"][0],
                   "Global rank stride": g["ranks"][1] - g["ranks"][0], "Group size": len(g["ranks"]),
                   "Process Group Name": g["pg_name"], "Process Group Description": g["pg_desc"],
                   "Process Group Ranks": g["_ranks_text"], ("Dst Rank" if send else "Src Rank"): peer}
        inst.members.append(op)
        self.launch(op, [self.last_compute[r]] if send else [])
        if not send:
            self.pending_wait[r].append(op)
        if self.a.p2p_sync:
            self.p2p_batch[r].append(op)
        return op

    def flush_p2p(self, r):
        """With --p2p-sync, the CPU waits for the sends and receives it
        posted together (Megatron batches a send with the next receive:
        send_forward_recv_backward, send_backward_recv_forward)."""
        if self.p2p_batch[r]:
            self.cpus[r].actions.append(("sync", self.p2p_batch[r]))
            self.p2p_batch[r] = []

    def build(self):
        a, L = self.a, self.L
        V = a.chunks if a.schedule == "interleaved" else 1
        P, M = L.pp, a.micro
        f_us = a.fwd_us
        seqs = {p: schedule(a.schedule, P, p, M, V) for p in range(P)}
        act = a.act_nelems
        for step in range(a.steps):
            for r in range(L.world):
                self.cpus[r].actions.append(("mark", step))
                self.step_ops[r] = []
            # programs are built rank by rank; the instances match members
            # by their keys (group, Seq; or the p2p's src, dst, direction,
            # microbatch, chunk), the same in every member's program order
            for r in range(L.world):
                d, p, t = L.coords(r)
                tpg = L.tp_g[(d, p)]
                ppg = L.pp_g[(d, t)]
                dpg = L.dp_g[(p, t)]
                coll = "allreduce" if a.dp_mode == "allreduce" else "_reduce_scatter_base"
                dp_us = a.dp_us if a.dp_mode == "allreduce" else a.dp_us / 2
                nk = 2 * a.layers  # compute kernels of a backward
                # with --overlap-grad, bucket b's collective right after kernel
                # trig[b] of the rank's last backward (its gradients are ready)
                trig = [max(0, (b + 1) * nk // a.buckets - 1) for b in range(a.buckets)]
                for i_op, (fb, m, c) in enumerate(seqs[p]):
                    fwd = fb == "F"
                    overlap = a.overlap_grad and dpg is not None and i_op == len(seqs[p]) - 1
                    kidx = 0
                    vstage = c * P + p  # the virtual stage
                    first, last = vstage == 0, vstage == V * P - 1
                    if fwd and not first:
                        src = L.rank(d, (p - 1) % P, t)
                        self.p2p_half(step, r, src, ppg, act, a.p2p_us * US, False, True,
                                      ("p", step, src, r, "F", m, c))
                    if not fwd and not last:
                        src = L.rank(d, (p + 1) % P, t)
                        self.p2p_half(step, r, src, ppg, act, a.p2p_us * US, False, False,
                                      ("p", step, src, r, "B", m, c))
                    mult = 1.0 if fwd else a.bwd_ratio
                    for layer in range(a.layers):
                        parts = ((K_ATTN_F, 0.45, "aten::_flash_attention_forward"),
                                 (K_MLP_F, 0.55, "aten::mm")) if fwd else \
                                ((K_MLP_B, 0.55, "aten::mm"), (K_ATTN_B, 0.45, "aten::_flash_attention_backward"))
                        for kname, share, cname in parts:
                            op = self.compute(r, step, kname, int(f_us * share * mult * US), cname, "f" if fwd else "b")
                            op.args = {"microbatch": m, "chunk": c}
                            if tpg is not None:
                                self.collective_member(step, tpg, r, "allreduce", "BFloat16", act, a.tp_us * US,
                                                       S_TP, True, "t")
                            if overlap:
                                for b in range(a.buckets):
                                    if trig[b] == kidx:
                                        self.collective_member(step, dpg, r, coll, "Float", a.bucket_nelems,
                                                               int(dp_us * US), S_DP, False, "d")
                            kidx += 1
                    if fwd and last:
                        op = self.compute(r, step, K_LOSS, int(f_us * 0.1 * US), "aten::cross_entropy_loss", "f")
                        op.args = {"microbatch": m, "chunk": c}
                    if fwd and not last:
                        dst = L.rank(d, (p + 1) % P, t)
                        self.p2p_half(step, r, dst, ppg, act, a.p2p_us * US, True, True,
                                      ("p", step, r, dst, "F", m, c + (1 if p == P - 1 else 0)))
                    if not fwd and not first:
                        dst = L.rank(d, (p - 1) % P, t)
                        self.p2p_half(step, r, dst, ppg, act, a.p2p_us * US, True, False,
                                      ("p", step, r, dst, "B", m, c - (1 if p == 0 else 0)))
                # the gradient sync (unless it overlapped the last backward:
                # then the optimizer waits for it), the embedding and
                # grad-norm allreduces
                if dpg is not None and not a.overlap_grad:
                    for b in range(a.buckets):
                        self.collective_member(step, dpg, r, coll, "Float", a.bucket_nelems, int(dp_us * US), S_DP,
                                               True, "d")
                elif dpg is not None:
                    self.pending_wait[r] += [o for o in self.step_ops[r] if o.cls == "d"]
                eg = L.emb_g[(d, t)]
                if eg is not None and r in eg["ranks"]:
                    self.collective_member(step, eg, r, "allreduce", "Float", a.emb_nelems, a.emb_us * US, S_EMB,
                                           True, "e")
                self.collective_member(step, L.groups[0], r, "allreduce", "Float", 1, a.world_us * US, S_WORLD,
                                       True, "w")
                self.compute(r, step, K_OPT, a.opt_us * US, "Optimizer.step#Adam.step", "o")
                if dpg is not None and a.dp_mode == "rs_ag":
                    for b in range(a.buckets):
                        self.collective_member(step, dpg, r, "_allgather_base", "BFloat16", a.bucket_nelems,
                                               int(a.dp_us / 2 * US), S_DP, True, "d")
                # the step ends when the CPU has waited for all of it
                self.cpus[r].actions.append(("sync", list(self.step_ops[r])))

    def collective_member(self, step, g, r, coll, dtype, nelems, typ_ns, sid, wait, cls):
        """Rank r's member of the next collective of g: the instance is the
        rank's n-th on the group (its Seq), as PyTorch numbers them."""
        s = self.seq[(r, g["pg_name"])]
        self.seq[(r, g["pg_name"])] += 1
        key = ("c", g["pg_name"], s)
        inst = self.insts.get(key)
        if inst is None:
            inst = self.insts[key] = Inst(key)
            inst.transfer = typ_ns
        kname = NCCL_KERNEL[coll] % DTYPE_TAG[dtype] if "%s" in NCCL_KERNEL[coll] else NCCL_KERNEL[coll]
        op = Op(r, step, sid, COLL, kname, typ_ns, C10D[coll], self.a.cpu_comm_us * US, cls)
        op.inst = inst
        op.args = {"Collective name": coll, "dtype": dtype, "In msg nelems": nelems, "Out msg nelems": nelems,
                   "In split size": "[]", "Out split size": "[]", "Global rank start": g["ranks"][0],
                   "Global rank stride": g["ranks"][1] - g["ranks"][0] if len(g["ranks"]) > 1 else 1,
                   "Group size": len(g["ranks"]), "Process Group Name": g["pg_name"],
                   "Process Group Description": g["pg_desc"], "Process Group Ranks": g["_ranks_text"], "Seq": s}
        inst.members.append(op)
        self.launch(op, [self.last_compute[r]])
        if wait:
            self.pending_wait[r].append(op)
        return op

    # -- durations

    def apply_durations(self):
        a, L = self.a, self.L
        sigma = a.noise if self.noise_on else 0.0
        imb = {}
        if self.fault_on and a.fault == "imbalance":
            for step in range(a.steps):
                u = np.random.default_rng([a.seed, 7, step]).random((L.dp, a.micro))
                imb[step] = 1.0 + (a.factor - 1.0) * u
        transient = set(a.transient_steps)
        for r in range(L.world):
            d, p, t = L.coords(r)
            by_step = collections.defaultdict(list)
            for op in self.ops[r]:
                by_step[op.step].append(op)
            for step, ops in by_step.items():
                draws = np.random.default_rng([a.seed, 1, r, step]).lognormal(0.0, 1.0, len(ops))
                for i, op in enumerate(ops):
                    noise = float(draws[i]) ** sigma if sigma > 0 else 1.0  # lognormal(0, sigma)
                    f = 1.0
                    if self.fault_on and op.kind == COMPUTE:
                        if a.fault == "slow_worker" and r == a.target:
                            f = a.factor
                        elif a.fault == "slow_stage" and p == a.target:
                            f = a.factor
                        elif a.fault == "transient" and r == a.target and step in transient:
                            f = a.factor
                        elif a.fault == "imbalance" and op.cls in "fb":
                            f = float(imb[step][d, op.args["microbatch"]])
                    op.fault = f
                    op.dur = int(round(op.typ * noise * f))
        # a transfer: typical x the noise of its lowest member's draw, x F
        # when the slow link's rank takes part
        for inst in self.insts.values():
            low = min(inst.members, key=lambda o: o.rank)
            noise = low.dur / low.typ if low.typ else 1.0
            f = 1.0
            if self.fault_on and a.fault == "slow_link" and any(o.rank == a.target for o in inst.members):
                f = a.factor
            inst.transfer = int(round(low.typ * noise * f))

    # -- simulation

    def run(self, noise_on, fault_on):
        """Simulate the job: its step times (self.steps, self.step_end) and
        every op's times, which stay until the next run."""
        a = self.a
        self.noise_on, self.fault_on = noise_on, fault_on
        for r in range(self.L.world):
            for op in self.ops[r]:
                op.ready = op.cpu_b = op.start = op.end = None
            for st in self.streams[r].values():
                st.head, st.last_end = 0, 0
            c = self.cpus[r]
            c.idx, c.pos, c.t, c.marks, c.syncs = 0, 0, T0, [], []
        for inst in self.insts.values():
            inst.nstart = 0
        self.apply_durations()
        work = collections.deque()
        queued = set()

        def push(x):
            if id(x) not in queued:
                queued.add(id(x))
                work.append(x)
        pre, lat, sync_cost = a.pre_us * US, a.launch_latency_us * US, a.sync_us * US

        def set_end(op, e):
            op.end = e
            push(self.streams[op.rank][op.stream])
            for w in op.wake:
                push(w)

        for c in self.cpus:
            push(c)
        while work:
            x = work.popleft()
            queued.discard(id(x))
            if isinstance(x, Cpu):
                while x.idx < len(x.actions):
                    kind, arg = x.actions[x.idx]
                    if kind == "launch":
                        arg.cpu_b = x.t
                        arg.ready = x.t + pre + lat
                        x.t += arg.cpu_cost
                        push(self.streams[x.rank][arg.stream])
                    elif kind == "sync":
                        while x.pos < len(arg) and arg[x.pos].end is not None:
                            x.pos += 1
                        if x.pos < len(arg):
                            break
                        x.pos = 0
                        b = x.t
                        x.t = max(x.t, max(o.end for o in arg)) + sync_cost
                        x.syncs.append((b, x.t))
                    else:
                        x.marks.append(x.t)
                    x.idx += 1
                continue
            s = x
            while s.head < len(s.ops):
                op = s.ops[s.head]
                if op.start is None:
                    if op.ready is None:
                        break
                    t = max(op.ready, s.last_end)
                    blocked = False
                    for d in op.deps:
                        if d.end is None:
                            blocked = True
                            break
                        if d.end > t:
                            t = d.end
                    if blocked:
                        break
                    op.start = t
                    if op.kind == COMPUTE:
                        set_end(op, t + op.dur)
                    else:
                        inst = op.inst
                        inst.nstart += 1
                        if inst.nstart == len(inst.members):
                            e = max(m.start for m in inst.members) + inst.transfer
                            for m in inst.members:
                                set_end(m, e)
                if op.end is None:
                    break
                s.last_end = op.end
                s.head += 1
        stuck = [c.rank for c in self.cpus if c.idx < len(c.actions)]
        if stuck:
            sys.exit("sim.py: the schedule deadlocks (ranks %s never finish): a bug in the simulator" % stuck[:8])
        # step ends: each rank's CPU after its step-end synchronisation
        self.step_end = [self.step_bounds(c) for c in self.cpus]
        ends = [max(self.step_end[r][k] for r in range(self.L.world)) for k in range(a.steps)]
        prev = [T0] + ends[:-1]
        self.steps = [e - b for b, e in zip(prev, ends)]
        return list(self.steps)

    def step_bounds(self, c):
        """A rank's step ends: the mark of the next step, or its last sync."""
        return [c.marks[k + 1] for k in range(len(c.marks) - 1)] + [c.syncs[-1][1]]


# ---------------------------------------------------------------- truth

def breakdown(ops):
    """GPU time of one rank's kernels as docs/analysis.md defines it:
    window, compute, comm_exposed, comm_overlapped, idle (ns)."""
    pts = []
    for o in ops:
        if o.end > o.start:
            pts.append((o.start, 1, o.kind == COMPUTE))
            pts.append((o.end, -1, o.kind == COMPUTE))
    pts.sort(key=lambda x: (x[0], x[1]))
    out = dict(window=0, compute=0, comm_exposed=0, comm_overlapped=0, idle=0)
    if not pts:
        return out
    ncomp = ncomm = 0
    last = pts[0][0]
    for t, delta, is_comp in pts:
        span = t - last
        if span:
            if ncomp:
                out["compute"] += span
                if ncomm:
                    out["comm_overlapped"] += span
            elif ncomm:
                out["comm_exposed"] += span
            else:
                out["idle"] += span
        last = t
        if is_comp:
            ncomp += delta
        else:
            ncomm += delta
    out["window"] = pts[-1][0] - pts[0][0]
    return out


def median(v):
    return float(np.median(np.array(v, dtype=float)))


def expected(a, L, S):
    """The verdict and culprit collscope should give (docs/gpusim.md)."""
    if S < 1.10 or a.fault in ("none", "transient"):
        return "none", ""
    if a.fault in ("slow_worker", "slow_link"):
        return "slow_worker", str(a.target)
    if a.fault == "slow_stage":
        return "slow_stage", "pp stage %d" % a.target
    return "scattered", ""


# ---------------------------------------------------------------- trace

def check_out(a, world):
    """Refuse an output folder that is a symlink or not a folder, a
    traces folder that is one, or one that holds rank files of another
    job (rank<N>.json with N beyond this job's ranks: collscope would
    import them too)."""
    for p in (a.out, os.path.join(a.out, "traces")):
        if os.path.islink(p) or (os.path.exists(p) and not os.path.isdir(p)):
            sys.exit("sim.py: %s is a symlink or not a folder: not written" % p)
    tdir = os.path.join(a.out, "traces")
    if os.path.isdir(tdir):
        stale = [f for f in os.listdir(tdir) if re.match(r"rank(\d+)\.json(\.gz)?$", f) and
                 (f.endswith(".gz") or int(re.match(r"rank(\d+)", f).group(1)) >= world)]
        if stale:
            sys.exit("sim.py: %s holds %s of another job: remove it first" % (tdir, ", ".join(sorted(stale)[:3])))


def write_file(path, text):
    """Write our file at path, never through a symlink."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)
    except OSError as e:
        sys.exit("sim.py: cannot write %s: %s" % (path, e.strerror))


def write_traces(a, job, out):
    L = job.L
    os.makedirs(out, exist_ok=True)
    offsets = {}
    for spec in a.clock_offset:
        r, v = spec.split(":")
        offsets[int(r)] = int(float(v) * 1000)

    pg_config = [{k: v for k, v in g.items() if not k.startswith("_")} for g in L.groups]
    for r in range(L.world):
        off = offsets.get(r, 0)
        pid = 4000 + r
        dev = r % 8

        def us(ns):
            return round((ns + off) / 1000.0, 3)

        ev = []
        corr = 200000
        ext = 1000
        for op in job.ops[r]:
            corr += 1
            ext += 1
            pre = a.pre_us * US
            cost = op.cpu_cost
            ev.append({"ph": "X", "cat": "cpu_op", "name": op.cpu_name, "pid": pid, "tid": pid, "ts": us(op.cpu_b),
                       "dur": round((cost - 1000) / 1000.0, 3), "args": {"External id": ext}})
            if op.kind == COMPUTE:
                kargs = {"External id": ext, "queued": 0, "device": dev, "context": 1, "stream": op.stream,
                         "correlation": corr, "grid": [132, 1, 1], "block": [256, 1, 1]}
                lname = "cudaLaunchKernel"
            else:
                rargs = dict(op.args, **{"External id": ext})
                ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": pid, "tid": pid,
                           "ts": us(op.cpu_b + 1000), "dur": round((cost - 3000) / 1000.0, 3), "args": rargs})
                kargs = dict(op.args, **{"External id": ext, "queued": 0, "device": dev, "context": 1,
                                         "stream": op.stream, "correlation": corr, "grid": [32, 1, 1],
                                         "block": [640, 1, 1]})
                lname = "cudaLaunchKernelExC"
            lb = op.cpu_b + pre
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": lname, "pid": pid, "tid": pid, "ts": us(lb),
                       "dur": a.launch_us, "args": {"External id": ext, "cbid": 211, "correlation": corr}})
            ev.append({"ph": "s", "id": corr, "pid": pid, "tid": pid, "ts": us(lb), "cat": "ac2g", "name": "ac2g"})
            ev.append({"ph": "f", "id": corr, "pid": dev, "tid": op.stream, "ts": us(op.start), "cat": "ac2g",
                       "name": "ac2g", "bp": "e"})
            ev.append({"ph": "X", "cat": "kernel", "name": op.name, "pid": dev, "tid": op.stream, "ts": us(op.start),
                       "dur": round((op.end - op.start) / 1000.0, 3), "args": kargs})
        c = job.cpus[r]
        bounds = job.step_bounds(c)
        for k in range(a.steps):
            b = c.marks[k]
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (a.first_step + k),
                       "pid": pid, "tid": pid, "ts": us(b), "dur": round((bounds[k] - b) / 1000.0, 3),
                       "args": {"External id": 1 + k}})
        for (b, e) in c.syncs:
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": pid, "tid": pid,
                       "ts": us(b), "dur": round((e - b) / 1000.0, 3), "args": {"cbid": 165}})
        ev.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
        meta = [{"name": "process_name", "ph": "M", "ts": us(T0), "pid": pid, "tid": 0, "args": {"name": "python3"}},
                {"name": "process_labels", "ph": "M", "ts": us(T0), "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
        for sid in sorted(job.streams[r]):
            meta.append({"name": "thread_name", "ph": "M", "ts": us(T0), "pid": dev, "tid": sid,
                         "args": {"name": "stream %d " % sid}})
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": i, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045395456,
                                     "computeMajor": 9, "computeMinor": 0, "numSms": 132} for i in range(8)],
               "distributedInfo": {"backend": "nccl", "rank": r, "world_size": L.world, "pg_count": len(L.groups),
                                   "pg_config": pg_config, "nccl_version": "2.21.5"},
               "record_shapes": 1, "with_stack": 0, "traceEvents": meta + ev,
               "traceName": "rank%d.json" % r, "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS}
        # laid out as PyTorch writes it: a key a line at the top, an event a
        # line ("rank": N with its space: HTA finds the rank by that text)
        events = doc.pop("traceEvents")
        head = ",\n".join("  %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in doc.items())
        # one dumps of the list (the C encoder's speed), then a line break
        # between events: no event holds a list of objects, so "}, {" is
        # only ever between two events
        body = json.dumps(events)[1:-1].replace('}, {"', '},\n  {"')
        write_file(os.path.join(out, "rank%d.json" % r), "{\n" + head + ',\n  "traceEvents": [\n  ' + body +
                   "\n]}\n")


# ---------------------------------------------------------------- main

def parse(argv):
    ap = argparse.ArgumentParser(prog="sim.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("out", help="output folder: traces/rank<N>.json per rank, truth.json")
    g = ap.add_argument_group("layout and schedule")
    g.add_argument("--dp", type=int, default=2)
    g.add_argument("--pp", type=int, default=2)
    g.add_argument("--tp", type=int, default=2)
    g.add_argument("--schedule", choices=("1f1b", "interleaved", "gpipe"), default="1f1b")
    g.add_argument("--chunks", type=int, default=2, help="model chunks per rank (interleaved)")
    g.add_argument("--micro", type=int, default=4, help="microbatches per step")
    g.add_argument("--steps", type=int, default=8)
    g.add_argument("--first-step", type=int, default=1, help="the first ProfilerStep#N")
    g.add_argument("--layers", type=int, default=2, help="layers per model chunk")
    g.add_argument("--buckets", type=int, default=3, help="gradient buckets (data-parallel collectives)")
    g.add_argument("--dp-mode", choices=("allreduce", "rs_ag"), default="allreduce")
    g.add_argument("--overlap-grad", action="store_true",
                   help="launch the gradient buckets during the last backward (Megatron's overlap_grad_reduce)")
    g.add_argument("--p2p-sync", action="store_true", help="the CPU waits for each pipeline exchange")
    g.add_argument("--act-nelems", type=int, default=4 << 20, help="elements of an activation (p2p, tp allreduce)")
    g.add_argument("--bucket-nelems", type=int, default=40 << 20, help="elements of a gradient bucket")
    g.add_argument("--emb-nelems", type=int, default=64 << 20, help="elements of the embedding gradient")
    g = ap.add_argument_group("typical durations (us)")
    g.add_argument("--fwd-us", type=float, default=400.0, help="forward compute of one layer and microbatch")
    g.add_argument("--bwd-ratio", type=float, default=2.0)
    g.add_argument("--tp-us", type=int, default=30, help="transfer of a tensor-parallel allreduce")
    g.add_argument("--p2p-us", type=int, default=60, help="transfer of a pipeline send/receive")
    g.add_argument("--dp-us", type=float, default=900.0, help="transfer of a gradient bucket's allreduce")
    g.add_argument("--emb-us", type=int, default=200)
    g.add_argument("--world-us", type=int, default=20)
    g.add_argument("--opt-us", type=int, default=500)
    g.add_argument("--cpu-op-us", type=int, default=12, help="CPU time of an op that launches a compute kernel")
    g.add_argument("--cpu-comm-us", type=int, default=20, help="CPU time of a c10d call")
    g.add_argument("--pre-us", type=int, default=3, help="CPU time in the op before its launch call")
    g.add_argument("--launch-us", type=float, default=5.0, help="the launch call's duration")
    g.add_argument("--launch-latency-us", type=int, default=6, help="launch call begin to earliest kernel start")
    g.add_argument("--sync-us", type=int, default=10, help="the step-end synchronisation's return")
    g = ap.add_argument_group("noise and faults")
    g.add_argument("--noise", type=float, default=0.03, help="lognormal sigma of every duration")
    g.add_argument("--fault", choices=("none", "slow_worker", "slow_stage", "slow_link", "imbalance", "transient"),
                   default="none")
    g.add_argument("--target", type=int, default=-1, help="the faulty rank (stage for slow_stage); -1: drawn")
    g.add_argument("--factor", type=float, default=1.5)
    g.add_argument("--transient-steps", default="", help="steps (from 0) of a transient fault, e.g. 2,5; "
                   "default: two steps, a third and two thirds in")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--clock-offset", action="append", default=[], metavar="R:US",
                   help="shift rank R's clock by US microseconds (repeatable)")
    g.add_argument("--no-traces", action="store_true", help="write truth.json only")
    a = ap.parse_args(argv)
    err = None
    if min(a.dp, a.pp, a.tp) < 1 or a.dp * a.pp * a.tp > 4096:
        err = "--dp, --pp, --tp must be at least 1 (and dp*pp*tp at most 4096)"
    elif a.micro < 1 or a.steps < 1 or a.layers < 1 or a.buckets < 1:
        err = "--micro, --steps, --layers, --buckets must be at least 1"
    elif a.schedule == "interleaved" and (a.pp < 2 or a.chunks < 2 or a.micro % a.pp):
        err = "--schedule interleaved needs --pp 2 or more, --chunks 2 or more and --micro a multiple of --pp"
    elif a.p2p_sync and a.schedule == "interleaved":
        err = "--p2p-sync is not modelled with --schedule interleaved (Megatron posts its receives ahead there)"
    elif a.fault == "slow_stage" and a.pp < 2:
        err = "--fault slow_stage needs --pp 2 or more"
    elif a.factor <= 0 or a.noise < 0:
        err = "--factor must be positive and --noise not negative"
    if err:
        ap.error(err)
    world = a.dp * a.pp * a.tp
    rng = np.random.default_rng([a.seed, 99])
    if a.target < 0:
        a.target = int(rng.integers(a.pp)) if a.fault == "slow_stage" else int(rng.integers(world))
    if a.fault == "slow_stage" and a.target >= a.pp or a.fault != "slow_stage" and a.target >= world:
        ap.error("--target %d is not a %s of the job" % (a.target, "stage" if a.fault == "slow_stage" else "rank"))
    if a.transient_steps:
        a.transient_steps = [int(x) for x in a.transient_steps.split(",")]
    else:
        a.transient_steps = sorted({a.steps // 3, (2 * a.steps) // 3})
    if a.fault in ("none", "imbalance"):
        a.target = -1
    return a


def main(argv):
    a = parse(argv[1:])
    check_out(a, a.dp * a.pp * a.tp)
    job = Job(a)
    ideal = job.run(False, False)
    fixed = job.run(True, False) if a.fault != "none" else None
    fonly = job.run(False, True) if a.fault != "none" else ideal
    actual = job.run(True, True)  # last: the ops keep its times for the traces
    fixed = fixed or actual
    L = job.L
    S = median(actual) / median(ideal)
    verdict, culprit = expected(a, L, S)
    truth = {
        "format": "collscope-gpusim-truth", "version": 1,
        "config": {k: v for k, v in vars(a).items() if k not in ("out", "no_traces")},
        "world": L.world, "layout": {"dp": L.dp, "pp": L.pp, "tp": L.tp,
                                      "rank_of": "rank = tp_i + tp * (dp_i + dp * pp_i)"},
        "steps_ns": actual, "step_median_ns": median(actual),
        "ideal_steps_ns": ideal, "ideal_median_ns": median(ideal),
        "S": S,
        "fixed_steps_ns": fixed, "S_fixed": median(fixed) / median(ideal),
        "S_fault_only": median(fonly) / median(ideal),
        "fault": a.fault, "factor": a.factor if a.fault != "none" else 1.0,
        "culprit": None, "expected_verdict": verdict, "expected_culprit": culprit,
        "step_ends_ns": [list(job.step_end[r]) for r in range(L.world)],
        "t0_ns": T0, "base_ns": BASE_NS,
        "ranks": [],
    }
    if a.fault in ("slow_worker", "slow_link", "transient"):
        d, p, t = L.coords(a.target)
        truth["culprit"] = {"rank": a.target, "dp": d, "pp": p, "tp": t}
        if a.fault == "transient":
            truth["culprit"]["steps"] = a.transient_steps
    elif a.fault == "slow_stage":
        truth["culprit"] = {"stage": a.target, "ranks": [r for r in range(L.world) if L.coords(r)[1] == a.target]}
    for r in range(L.world):
        d, p, t = L.coords(r)
        ops = job.ops[r]
        wait = sum(max(0, max(m.start for m in o.inst.members) - o.start) for o in ops if o.kind != COMPUTE)
        row = {"rank": r, "dp": d, "pp": p, "tp": t, "gpu": breakdown(ops),
               "compute_busy_ns": sum(o.end - o.start for o in ops if o.kind == COMPUTE),
               "nccl_busy_ns": sum(o.end - o.start for o in ops if o.kind != COMPUTE),
               "nccl_wait_ns": wait, "kernels": len(ops)}
        truth["ranks"].append(row)
    os.makedirs(a.out, exist_ok=True)
    if not a.no_traces:
        write_traces(a, job, os.path.join(a.out, "traces"))
    write_file(os.path.join(a.out, "truth.json"), json.dumps(truth, indent=1) + "\n")
    print("sim.py: %d ranks (dp %d x pp %d x tp %d, %s), %d steps: median step %.3f ms, ideal %.3f ms, S %.3f; "
          "fault %s%s; without it S %.3f; expect %s %s" %
          (L.world, L.dp, L.pp, L.tp, a.schedule, a.steps, truth["step_median_ns"] / 1e6,
           truth["ideal_median_ns"] / 1e6, S, a.fault,
           (" target %d" % a.target if a.fault not in ("none", "imbalance") else "") +
           (" x %.2f" % a.factor if a.fault != "none" else ""), truth["S_fixed"], verdict, culprit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
