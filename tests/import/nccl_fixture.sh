#!/bin/sh
# nccl_fixture.sh: a real GPU job's trace imported. tests/data/kineto/
# nccl_2rank_rank0.json.gz is rank 0 of a 2-rank DDP job on NCCL, written by
# PyTorch's profiler on an A100 (HTA's public test data, see its README).
# `collscope import`: exit 1 with rank 1 named as missing, rank 0 imported
# (world size 2, from distributedInfo); its process group (pg_config
# "default_pg", ranks 0 and 1) a communicator of that name and size; every
# NCCL kernel with comm args one collective span of its kind (ncclAllReduce,
# ncclBroadcast; counts from the file), in that communicator, numbered
# 0..N-1 in issue order, with the CPU times of its record_param_comms and
# the kernel's GPU times (to the ns the file gives), and its bytes from In
# msg nelems x dtype; every other kernel a compute span; the ProfilerStep#N
# the steps. The expected figures are read from the file with Python's json.
. "$srcdir/tests/lib.sh"
if ! "$COLLSCOPE" --help 2>&1 | grep -q '^  import '; then
  [ "${CI:-}" = true ] && fail "collscope has no import command"
  skip "collscope has no import command in this build"
fi
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
TRACE="$S/tests/data/kineto/nccl_2rank_rank0.json.gz"
[ -s "$TRACE" ] || fail "no $TRACE"

rc=0
"$COLLSCOPE" import -o "$T/imp" "$TRACE" > "$T/import.out" 2>&1 || rc=$?
cat "$T/import.out"
expect_eq "import exit status (a rank missing)" "$rc" 1
grep -q 'rank 1' "$T/import.out" || fail "the import does not name the missing rank 1"
echo "ok: rank 1 named as missing"
DB="$T/imp/trace.db"
[ -s "$DB" ] || fail "no $DB"
expect_eq "ranks imported, world size" "$(q "$DB" "SELECT group_concat(rank || '/' || world_size) FROM processes")" "0/2"
expect_eq "communicators: name, size, rank 0's place" \
  "$(q "$DB" "SELECT group_concat(name || ' ' || size || ' ' || comm_rank, ';') FROM comms WHERE rank=0")" "default_pg 2 0"

# The store's NCCL spans, in issue order, against the file's kernels.
q "$DB" "SELECT s.op, s.seq, c.name, s.bytes, s.raw_begin_ns, s.gpu_begin_ns, s.gpu_dur_ns FROM spans s
         JOIN comms c ON c.id = s.comm AND c.rank = s.rank WHERE s.op LIKE 'nccl%' ORDER BY s.begin_ns" > "$T/nccl.txt"
q "$DB" "SELECT op, count(*) FROM spans GROUP BY op" > "$T/ops.txt"
"$PY" - "$TRACE" "$T/nccl.txt" "$T/ops.txt" << 'PYEOF' || fail "the store does not hold the trace (above)"
import collections, gzip, json, sys
doc = json.load(gzip.open(sys.argv[1], "rt"))
base = doc["baseTimeNanoseconds"]
ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
rpc = {e["args"]["External id"]: e for e in ev if e["name"] == "record_param_comms"}
kinds = {"allreduce": "ncclAllReduce", "broadcast": "ncclBroadcast"}
size = {"Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Int": 4, "Long": 8, "Byte": 1, "Char": 1}
want = []
compute = 0
for e in ev:
    if e.get("cat") != "kernel":
        continue
    a = e["args"]
    if not e["name"].startswith(("ncclKernel", "ncclDevKernel")) or "Collective name" not in a:
        compute += 1
        continue
    cpu = rpc[a["External id"]]  # the kernel's record_param_comms
    want.append((cpu["ts"], kinds[a["Collective name"]], a["Process Group Description"],
                 a["In msg nelems"] * size[a["dtype"]], round(cpu["ts"] * 1000) + base,
                 round(e["ts"] * 1000) + base, round(e["dur"] * 1000)))
want.sort()
got = [l.split("|") for l in open(sys.argv[2]).read().split("\n") if l]
assert len(want) == 21, "the fixture has %d NCCL kernels, not 21" % len(want)
assert len(got) == len(want), "%d NCCL spans in the store, %d kernels in the trace" % (len(got), len(want))
for i, (w, g) in enumerate(zip(want, got)):
    _, op, comm, nbytes, cpu_ns, gpu_ns, gpu_dur = w
    gop, gseq, gcomm, gbytes, gcpu, ggpu, gdur = g
    assert (gop, gcomm) == (op, comm), "span %d: %s in %s, want %s in %s" % (i, gop, gcomm, op, comm)
    assert int(gseq) == i, "span %d (%s): seq %s, want %d" % (i, op, gseq, i)
    assert int(gbytes) == nbytes, "span %d (%s): %s bytes, want %d" % (i, op, gbytes, nbytes)
    for what, x, y in (("CPU begin", gcpu, cpu_ns), ("GPU begin", ggpu, gpu_ns), ("GPU duration", gdur, gpu_dur)):
        assert x != "" and abs(int(x) - y) <= 1, "span %d (%s): %s %s ns, want %d" % (i, op, what, x or "none", y)
per_op = collections.Counter(w[1] for w in want)
print("ok: %d NCCL collectives (%s) with their record_param_comms' CPU times and their kernels' GPU times"
      % (len(want), ", ".join("%s %d" % kv for kv in sorted(per_op.items()))))
ops = dict(l.split("|") for l in open(sys.argv[3]).read().split("\n") if l)
steps = sum(1 for e in ev if e["name"].startswith("ProfilerStep#"))
assert int(ops.get("compute_gpu", 0)) == compute, "compute_gpu spans: %s, other kernels: %d" % (ops.get("compute_gpu"), compute)
assert int(ops.get("ProfilerStep", 0)) == steps, "ProfilerStep spans: %s, want %d" % (ops.get("ProfilerStep"), steps)
print("ok: %d compute kernels, %d steps" % (compute, steps))
PYEOF

# The report reads it as any trace: the steps and the communicator.
"$COLLSCOPE" report "$T/imp" --format json > "$T/report.json" || fail "collscope report failed"
"$PY" - "$T/report.json" << 'PYEOF' || fail "the report does not hold (above)"
import json, sys
rep = json.load(open(sys.argv[1]))
assert rep["steps"]["count"] == 3, "steps: %s, want 3" % rep["steps"]["count"]
ops = {o["op"]: o["calls"] for o in rep["ops"]}
assert ops.get("ncclAllReduce") == 15 and ops.get("ncclBroadcast") == 6, "ops in the report: %s" % ops
print("ok: the report: 3 steps, ncclAllReduce 15, ncclBroadcast 6")
PYEOF
pass
