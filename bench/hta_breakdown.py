#!/usr/bin/env python3
"""hta_breakdown.py TRACE_DIR: HTA's load and temporal breakdown of a folder
of Kineto traces, timed, for bench/import_scale.sh. Prints one line:
  hta load_s breakdown_s ranks
(its peak memory is measured from outside, by /usr/bin/time)."""
import sys
import time

t0 = time.monotonic()
from hta.trace_analysis import TraceAnalysis  # noqa: E402

t1 = time.monotonic()
a = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
t2 = time.monotonic()
df = a.get_temporal_breakdown(visualize=False)
t3 = time.monotonic()
print("hta %.2f %.2f %d (import of hta itself %.2f s, not counted)" % (t2 - t1, t3 - t2, len(df), t1 - t0))
