#!/usr/bin/env python3
"""imbalance_ref.py: reference slowdowns of a random per-microbatch
imbalance job of the simulator (tests/gpusim/sim.py), computed by the
simulator's own engine, not by collscope.

  imbalance_ref.py SIM-OPTIONS...     (the options given to sim.py, --fault
                                       imbalance among them; no folder)

The imbalance multiplies the compute of each microbatch of each
data-parallel replica by 1 + (F - 1) u, u uniform in [0, 1), drawn per
step (docs/gpusim.md). Its truth (sim.py's S) takes as the ideal every
microbatch at factor 1: the floor of that spread, which no operation of
the trace has. Printed, as one JSON object:

- "S": the truth's S (actual median step over the ideal's, as sim.py);
- "S_q": for q in 0.25 and 0.5, the actual median step over the median
  step of the same job with no noise and every microbatch's compute at
  the factor 1 + (F - 1) q: each operation at that quantile of its own
  spread. q = 0.25 is collscope's ideal as docs/analysis.md defines it
  (each operation at the lower quartile of its durations over the ranks
  and steps); q = 0.5 the microbatches balanced at their median.

Used by tests/gpusim/imbalance.sh; bench/README.md ("gpusim") and
docs/analysis.md give the figures.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sim  # noqa: E402  (the simulator's engine: no collscope code)


def main(argv):
    a = sim.parse([os.devnull] + argv[1:])
    if a.fault != "imbalance":
        sys.exit("imbalance_ref.py: needs --fault imbalance")
    job = sim.Job(a)
    base = sim.Job.apply_durations
    const = {"f": None}

    def durations(self):
        base(self)
        if const["f"] is not None:
            for r in range(self.L.world):
                for op in self.ops[r]:
                    if op.kind == sim.COMPUTE and op.cls in "fb":
                        op.dur = int(round(op.typ * const["f"]))

    sim.Job.apply_durations = durations
    actual = sim.median(job.run(True, True))
    ideal = sim.median(job.run(False, False))
    out = {"S": actual / ideal, "factor": a.factor, "S_q": {}}
    for q in (0.25, 0.5):
        const["f"] = 1 + (a.factor - 1) * q
        out["S_q"]["%.2f" % q] = actual / sim.median(job.run(False, False))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
