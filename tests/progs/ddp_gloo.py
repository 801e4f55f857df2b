#!/usr/bin/env python3
"""tests/progs/ddp_gloo.py: a small multi-rank PyTorch DistributedDataParallel
job on the gloo backend (CPU), profiled with torch.profiler, one Kineto
Chrome-trace JSON per rank.

    python ddp_gloo.py --out DIR [--ranks 4] [--steps 8] [--slow-rank 2]
                       [--delay-ms 40] [--gzip]

Each rank runs --steps profiled training steps (ProfilerStep#2..#N+1: the
profiler's schedule skips one step and warms up in the next, so DDP's
first-iteration bucket rebuild, two broadcasts, stays out of the trace) of
a small MLP in DDP, its gradients in --buckets buckets (one all-reduce each,
through a comm hook that counts them). Each step also makes the
collectives a training loop typically adds: an all-reduce of the loss, a
broadcast from rank 0, an all-gather, an all-reduce in the rank's pair group
(a process group "pair_dp" of ranks 0-1, 2-3, ...; --no-pair leaves it out)
and a ring exchange (isend to the next rank, irecv from the previous). The
slow rank sleeps --delay-ms in every forward, so it enters every step's
first collective last.

Writes DIR/rank-R.pt.trace.json (.json.gz with --gzip) and prints, per rank:
    colls: rank R gloo:all_gather=N gloo:all_reduce=N gloo:broadcast=N ...
    groups: rank R default_pg=N pair_dp=N
    steps: rank R ms=T1,T2,...
    clean: rank R ms=T1,T2,...
the counts of the collectives and point-to-point calls the rank issued in
the profiled steps, named as the trace names them (gloo's "gloo:OP"
annotations; record_param_comms "Collective name" where the backend records
those), then per process group, then the wall time of each profiled step,
then of each of the --clean-steps run with no rank slow, half before them
and half after (the step time without the sleep: the truth of the
slowdown's ideal step).
Before printing, each rank reads its own trace back and fails (exit 1)
unless the trace holds exactly these counts. Exit 0 when every rank
finished.
"""
import argparse
import collections
import datetime
import gzip
import json
import os
import socket
import sys
import time

# One thread per rank: four ranks share two cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.multiprocessing.spawn import ProcessException  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder for the per-rank traces")
    p.add_argument("--ranks", type=int, default=4, help="world size (default 4)")
    p.add_argument("--steps", type=int, default=8, help="profiled steps (default 8)")
    p.add_argument("--slow-rank", type=int, default=2, help="the rank made slow (default 2; -1: none)")
    p.add_argument("--delay-ms", type=float, default=40.0, help="its sleep in every forward (default 40)")
    p.add_argument("--buckets", type=int, default=3, help="gradient buckets, each one all-reduce (default 3)")
    p.add_argument("--port", type=int, default=0, help="rendezvous port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-pair", action="store_true", help="no pair process groups")
    p.add_argument("--gzip", action="store_true", help="write .json.gz")
    p.add_argument("--clean-steps", type=int, default=0,
                   help="this many steps with no rank slow, not profiled, half before the profiled ones and half after (default 0)")
    a = p.parse_args(argv)
    if a.ranks < 2 or a.ranks % 2:
        p.error("--ranks must be even and at least 2")
    if a.steps < 1:
        p.error("--steps must be at least 1")
    if a.slow_rank >= a.ranks:
        p.error("--slow-rank must be below --ranks")
    if not 1 <= a.buckets <= 3:
        p.error("--buckets must be 1, 2 or 3")
    return a


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Layer widths: each of the three layers' gradients (weight and bias) is
# about 256 KiB, so a bucket cap of a layer's size gives one bucket per layer.
WIDTH = 256


class Net(nn.Module):
    def __init__(self, delay_s):
        super().__init__()
        self.l1 = nn.Linear(WIDTH, WIDTH)
        self.l2 = nn.Linear(WIDTH, WIDTH)
        self.l3 = nn.Linear(WIDTH, WIDTH)
        self.delay_s = delay_s

    def forward(self, x):
        if self.delay_s > 0:
            time.sleep(self.delay_s)
        return self.l3(torch.relu(self.l2(torch.relu(self.l1(x)))))


def counting_allreduce_hook(state, bucket):
    """DDP comm hook: the default averaging all-reduce, counted."""
    state["count"]("all_reduce", "default_pg")
    buf = bucket.buffer()
    buf.div_(state["world"])
    fut = dist.all_reduce(buf, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


def trace_counts(path):
    """A trace's communication events, per name: gloo's "gloo:OP" annotations,
    and record_param_comms events by their "Collective name"."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    colls = collections.Counter()
    for ev in doc.get("traceEvents", []):
        if ev.get("ph") != "X":
            continue
        name = ev.get("name", "")
        if name.startswith("gloo:"):
            colls[name] += 1
        elif name == "record_param_comms" and "Collective name" in ev.get("args", {}):
            colls[ev["args"]["Collective name"]] += 1
    return colls


def worker(rank, a, port):
    t_start = time.time()
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=a.ranks, timeout=datetime.timedelta(seconds=120))
    world = a.ranks
    # Pair groups 0-1, 2-3, ...: every rank creates every group (new_group
    # is collective over the world), and keeps its own.
    pair = None
    for first in range(0, 0 if a.no_pair else world, 2):
        g = dist.new_group([first, first + 1], group_desc="pair_dp")
        if rank in (first, first + 1):
            pair = g

    t_init = time.time()
    torch.manual_seed(0)
    delay = a.delay_ms / 1000.0 if rank == a.slow_rank else 0.0
    layer_mb = (WIDTH * WIDTH + WIDTH) * 4 / (1024 * 1024)
    cap_mb = layer_mb * (3.0 / a.buckets) * 0.999
    model = DDP(Net(delay), bucket_cap_mb=cap_mb)
    colls = collections.Counter()
    groups = collections.Counter()
    counting = [False]

    def count(op, group):
        if counting[0]:
            colls["gloo:" + op] += 1
            groups[group] += 1

    state = {"world": world, "count": count}
    model.register_comm_hook(state, counting_allreduce_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(16, WIDTH, generator=torch.Generator().manual_seed(rank))
    y = torch.randn(16, WIDTH, generator=torch.Generator().manual_seed(100 + rank))

    ext = ".pt.trace.json.gz" if a.gzip else ".pt.trace.json"
    path = os.path.join(a.out, "rank-%d%s" % (rank, ext))

    t_export = [0.0, 0.0]

    def ready(prof):
        t_export[0] = time.time()
        prof.export_chrome_trace(path)
        t_export[1] = time.time()

    def one_step(it):
        """One training step, and the collectives a loop adds around it."""
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # the bucket all-reduces, through the hook
        opt.step()
        # What a training loop adds around the step.
        l = loss.detach().clone()
        dist.all_reduce(l)
        count("all_reduce", "default_pg")
        seed = torch.tensor([it], dtype=torch.int64)
        dist.broadcast(seed, src=0)
        count("broadcast", "default_pg")
        parts = [torch.zeros(4) for _ in range(world)]
        dist.all_gather(parts, torch.full((4,), float(rank)))
        count("all_gather", "default_pg")
        if pair is not None:
            p = torch.ones(1024)
            dist.all_reduce(p, group=pair)
            count("all_reduce", "pair_dp")
        # A ring exchange: send to the next rank, receive from the previous.
        sbuf = torch.full((256,), float(rank))
        rbuf = torch.empty(256)
        reqs = [dist.isend(sbuf, (rank + 1) % world), dist.irecv(rbuf, (rank - 1) % world)]
        count("send", "default_pg")
        count("recv", "default_pg")
        for r in reqs:
            r.wait()

    # The same steps with no rank slow, half before the profiled ones and
    # half after (traced by nothing, counted by nothing, the load of a
    # shared machine moving in between): the job's own step time without
    # the sleep, the truth of the slowdown's ideal step.
    clean_ms = []

    def clean_steps(n, it0):
        model.module.delay_s = 0.0
        for it in range(n):
            t0 = time.perf_counter()
            one_step(it0 + it)
            clean_ms.append((time.perf_counter() - t0) * 1000.0)
        model.module.delay_s = delay

    clean_steps(a.clean_steps // 2, -a.clean_steps)
    step_ms = []
    sched = torch.profiler.schedule(wait=1, warmup=1, active=a.steps, repeat=1)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched, on_trace_ready=ready, record_shapes=True
    ) as prof:
        for it in range(a.steps + 2):
            counting[0] = it >= 2  # iterations 0 and 1 are not recorded
            t0 = time.perf_counter()
            one_step(it)
            if counting[0]:
                step_ms.append((time.perf_counter() - t0) * 1000.0)
            prof.step()
    counting[0] = False
    clean_steps(a.clean_steps - a.clean_steps // 2, a.steps + 2)

    t_steps = time.time()
    dist.barrier()
    dist.destroy_process_group()

    traced = trace_counts(path)
    lines = [
        "colls: rank %d %s" % (rank, " ".join("%s=%d" % kv for kv in sorted(colls.items()))),
        "groups: rank %d %s" % (rank, " ".join("%s=%d" % kv for kv in sorted(groups.items()))),
        "steps: rank %d ms=%s" % (rank, ",".join("%.1f" % t for t in step_ms)),
        "clean: rank %d ms=%s" % (rank, ",".join("%.1f" % t for t in clean_ms)),
        "time: rank %d setup=%.1fs run=%.1fs export=%.1fs"
        % (rank, t_init - t_start, t_steps - t_init, t_export[1] - t_export[0]),
    ]
    sys.stdout.write("".join(s + "\n" for s in lines))  # one write: lines of ranks do not mix
    sys.stdout.flush()
    rc = 0
    if traced != colls:
        sys.stderr.write(
            "ddp_gloo: rank %d: the trace %s holds %s, the rank issued %s\n" % (rank, path, dict(traced), dict(colls))
        )
        sys.stderr.flush()
        rc = 1
    # No interpreter teardown: with the profiler's and gloo's threads about,
    # it took 10 s here, a third of the run.
    os._exit(rc)


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    port = a.port or free_port()
    try:
        mp.spawn(worker, args=(a, port), nprocs=a.ranks, join=True)
    except ProcessException as e:
        sys.stderr.write("ddp_gloo: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
