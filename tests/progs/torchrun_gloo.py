#!/usr/bin/env python3
"""tests/progs/torchrun_gloo.py: a small DistributedDataParallel job written
for torchrun, on the gloo backend (CPU), as docs/guide.md launches one:

    torchrun --standalone --nproc_per_node 2 torchrun_gloo.py --out DIR
             [--steps 6] [--slow-rank 1] [--delay-ms 30]

Each rank (RANK and WORLD_SIZE from torchrun's environment) trains a small
MLP in DDP under torch.profiler: one step skipped, one warm-up step, then
--steps recorded steps (ProfilerStep#2...), and writes its Kineto trace to
DIR/rank-R.pt.trace.json. The slow rank sleeps --delay-ms in every
forward, so it enters every step's gradient all-reduce last. Prints
"done: rank R steps N" when its trace is written; exit 0 when every rank
finished.
"""
import argparse
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder of the traces (rank-R.pt.trace.json)")
    ap.add_argument("--steps", type=int, default=6, help="recorded steps")
    ap.add_argument("--slow-rank", type=int, default=1)
    ap.add_argument("--delay-ms", type=float, default=30.0)
    a = ap.parse_args()
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        sys.exit("torchrun_gloo.py: run me under torchrun (RANK and WORLD_SIZE are not set)")
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randn(32, 8)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "rank-%d.pt.trace.json" % rank)
    sched = torch.profiler.schedule(wait=1, warmup=1, active=a.steps, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched,
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(a.steps + 2):
            if rank == a.slow_rank:
                time.sleep(a.delay_ms / 1e3)
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()
    # one write: print() writes the text and its newline apart, and the two
    # ranks' lines mixed ("done: rank 1 steps 6done: rank 0 steps 6")
    sys.stdout.write("done: rank %d steps %d\n" % (rank, a.steps))
    sys.stdout.flush()
    return 0 if os.path.exists(path) else 1


if __name__ == "__main__":
    sys.exit(main())
