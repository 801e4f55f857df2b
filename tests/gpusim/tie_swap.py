#!/usr/bin/env python3
"""tie_swap.py: rewrite the traces of a 2-rank simulated job (sim.py
--dp 2 --pp 1 --tp 1) so that collscope's CPU what-if replay deadlocks,
for tests/gpusim/deadlock.sh.

  tie_swap.py TRACES-DIR

In every step where both ranks' CPUs call the last gradient allreduce
(DATA_PARALLEL_GROUP, X) at the same time, X and the world allreduce
(default_pg, Y) are called back to back: X then Y on rank 0, Y then X on
rank 1 (NCCL allows it: each communicator has its stream), each call's
end equal to the next one's begin to the nanosecond, as in a trace whose
times are rounded to microseconds. The replay takes a call that ended at
or after its last member's begin for one that waited for it: rank 0's X
waits for rank 1's, which comes after rank 1's Y, which waits for rank
0's, which comes after rank 0's X. The GPU kernels are left as they were.
Exit status 1 when no step could be rewritten.
"""
import json
import os
import sys


def calls(doc):
    """Per process group description: (call, its record_param_comms, the
    events of the CPU thread inside the call), in the order called."""
    ev = doc["traceEvents"]
    cpu = [e for e in ev if e.get("ph") in ("X", "s") and e.get("pid") == e.get("tid") and e.get("cat") != "user_annotation"]
    c10d = {e["args"].get("External id"): e for e in ev if e.get("cat") == "cpu_op" and e["name"].startswith("c10d::")}
    out = {}
    for e in ev:
        if e.get("cat") == "cpu_op" and e.get("name") == "record_param_comms":
            call = c10d[e["args"]["External id"]]
            inside = [x for x in cpu if call["ts"] <= x["ts"] <= call["ts"] + call["dur"]]
            out.setdefault(e["args"]["Process Group Description"], []).append((call, e, inside))
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: tie_swap.py TRACES-DIR")
    docs = {}
    for r in (0, 1):
        with open(os.path.join(argv[1], "rank%d.json" % r)) as f:
            docs[r] = json.load(f)
    G = {r: calls(docs[r]) for r in (0, 1)}
    steps = len(G[0]["default_pg"])
    nb = len(G[0]["DATA_PARALLEL_GROUP"]) // steps
    done = 0
    for k in range(steps):
        xs = {r: G[r]["DATA_PARALLEL_GROUP"][(k + 1) * nb - 1] for r in (0, 1)}
        ys = {r: G[r]["default_pg"][k] for r in (0, 1)}
        at = xs[0][0]["ts"]
        if at != xs[1][0]["ts"]:
            continue  # the ranks' CPUs apart in this step: no tie to make
        done += 1
        dur = xs[0][0]["dur"]
        for r in (0, 1):
            order = (xs[r], ys[r]) if r == 0 else (ys[r], xs[r])
            for (call, rpc, inside), b in zip(order, (at, round(at + dur, 3))):
                delta = b - call["ts"]
                for x in inside:
                    x["ts"] = round(x["ts"] + delta, 3)
                rpc["ts"], rpc["dur"] = call["ts"], call["dur"]
    for r in (0, 1):
        with open(os.path.join(argv[1], "rank%d.json" % r), "w") as f:
            json.dump(docs[r], f)
    print("tie_swap.py: %d of %d steps rewritten" % (done, steps))
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
