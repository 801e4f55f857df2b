#!/bin/sh
# export_chrome_gpu.sh: the chrome export of the NCCL trainer traced under
# the CPU stand-ins (4 ranks): every span with GPU times is also one "X"
# event on a GPU stream track of its rank (thread_name "GPU stream 0x..."),
# with the span's GPU begin and duration, apart from the threads' tracks;
# NCCL communicators by name (nccl comm 1, split(nccl comm 1, color C)).
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
run_trainer "$T/r" "$T/run.out" --steps 4 --buckets 3 --split
DB="$T/r/trace.db"
check "export" "$COLLSCOPE" export "$T/r" -o "$T/r.json"
# rank|stream|gpu begin - origin (us, 3 decimals)|gpu duration (ns)
origin=$(q "$DB" "SELECT min(p.start_ns + COALESCE(k.offset_ns, 0)) FROM processes p LEFT JOIN clocks k ON k.rank = p.rank")
q "$DB" "SELECT rank, COALESCE(stream, 0), printf('%.3f', (gpu_begin_ns - $origin) / 1000.0), gpu_end_ns - gpu_begin_ns
         FROM spans WHERE gpu_begin_ns IS NOT NULL AND gpu_begin_ns != 0 AND gpu_end_ns IS NOT NULL AND gpu_end_ns != 0" > "$T/gpu.txt"
[ -s "$T/gpu.txt" ] || fail "no span with GPU times in the trace"
"$PY" - "$T/r.json" "$T/gpu.txt" << 'PYEOF' || fail "the GPU tracks do not hold (above)"
import collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
gpu = [e for e in ev if e["ph"] == "X" and e["cat"] == "gpu"]
want = collections.Counter()
for line in open(sys.argv[2]):
    r, stream, b, dur = line.strip().split("|")
    want[(int(r), int(stream), b, int(dur))] += 1
got = collections.Counter()
for e in gpu:
    track = names.get((e["pid"], e["tid"]), "")
    if not track.startswith("GPU "):
        print("FAIL: GPU event on a track not named for a stream: %r (%r)" % (e, track))
        sys.exit(1)
    stream = 0 if track == "GPU default stream" else int(track.split()[-1], 16)
    got[(e["pid"], stream, "%.3f" % e["ts"], round(e["dur"] * 1000))] += 1
if got != want:
    print("FAIL: GPU events differ from the store's GPU times: only in the export %s, only in the store %s" %
          (list((got - want).items())[:3], list((want - got).items())[:3]))
    sys.exit(1)
threads = {k for k, v in names.items() if v.startswith("thread ")}
if any((e["pid"], e["tid"]) in threads for e in gpu):
    print("FAIL: a GPU event on a thread's track")
    sys.exit(1)
comms = {e["args"].get("comm") for e in ev if e["ph"] == "X" and e["args"].get("op", "").startswith("nccl")}
if "nccl comm 1" not in comms or not any(c and c.startswith("split(nccl comm 1, color ") for c in comms):
    print("FAIL: NCCL communicators not by name: %r" % comms)
    sys.exit(1)
streams = sorted({v for v in names.values() if v.startswith("GPU ")})
print("ok: %d GPU events on %d stream tracks (%s), as the store's GPU times; communicators %s" %
      (len(gpu), len(streams), ", ".join(streams), sorted(c for c in comms if c)))
PYEOF
pass
