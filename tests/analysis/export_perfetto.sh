#!/bin/sh
# export_perfetto.sh: `collscope export --format perfetto` of a traced
# 4-rank run of the example trainer (Open MPI; halo exchange, split
# communicators, rank 2 late every step) and of the NCCL trainer under the
# CPU stand-ins. Each file is decoded with Python's protobuf from our
# analyzer/formats/perfetto_trace.proto (protoc --python_out at test time; a pass
# needs a real decode of every packet) and checked against the store: every
# span one begin/end pair on its rank's thread track (per rank and op, the
# store's counts), every track's slices nesting in time order, every
# interned id defined before use on the one packet sequence, a process
# track per rank and a thread track per traced thread (ThreadDescriptor),
# a track per GPU stream with the store's GPU times, every flow id started
# once and ended once on span slices (one per matched message, one per
# other member of each collective instance), communicators by name, the
# report's verdicts (rank 2's persistent straggler among them; on a loaded
# machine another rank may have one too, in the report and the export
# alike) and rank 2's imposed wait on the analysis process. `-o -`
# gives the same bytes. Perfetto's trace processor is not used: its Python
# package downloads its binary at run time, which CI cannot.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
command -v protoc > /dev/null || skip "protoc not installed (protobuf-compiler)"
"$PY" -c 'import google.protobuf' 2> /dev/null || skip "Python protobuf not installed (python3-protobuf)"
grep -q '^#define HAVE_PROTOBUF_C 1' "$B/config.h" || {
  # Without protobuf-c the format is left out, with one message.
  _rc=0
  "$COLLSCOPE" export "$T/none" --format perfetto 2> "$T/no.err" || _rc=$?
  [ "$_rc" = 1 ] && grep -q "protobuf-c" "$T/no.err" || fail "a build without protobuf-c: exit $_rc, $(cat "$T/no.err")"
  skip "collscope built without protobuf-c: $(cat "$T/no.err")"
}

"$COLLSCOPE" export --help | grep -q 'perfetto' || fail "collscope export --help does not name perfetto"
mkdir "$T/pb" && protoc --proto_path="$S/analyzer/formats" --python_out="$T/pb" "$S/analyzer/formats/perfetto_trace.proto" ||
  fail "protoc cannot compile analyzer/formats/perfetto_trace.proto"

# check.py TRACE DIR: the trace against the store's figures in DIR.
cat > "$T/check.py" << 'PYEOF'
import collections, json, os, sys
sys.path.insert(0, os.environ["PB"])
import perfetto_trace_pb2 as pb

def bad(msg):
    print("FAIL:", msg)
    sys.exit(1)

path, d = sys.argv[1], sys.argv[2]
gpu_job = len(sys.argv) > 3 and sys.argv[3] == "gpu"
tr = pb.Trace()
tr.ParseFromString(open(path, "rb").read())
P = tr.packet
if not P:
    bad("no packets")
TE = pb.TrackEvent
# One sequence; its first packet clears the incremental state; interned
# ids are defined before they are used.
if any(p.trusted_packet_sequence_id != 1 for p in P):
    bad("a packet off sequence 1")
if not P[0].sequence_flags & 1:
    bad("the first packet does not clear the incremental state")
names, cats, anames, strs = {}, {}, {}, {}
tracks = {}
events = []
for i, p in enumerate(P):
    if p.HasField("interned_data"):
        for x in p.interned_data.event_names: names[x.iid] = x.name
        for x in p.interned_data.event_categories: cats[x.iid] = x.name
        for x in p.interned_data.debug_annotation_names: anames[x.iid] = x.name
        for x in p.interned_data.debug_annotation_string_values: strs[x.iid] = x.str.decode()
    if p.HasField("track_descriptor"):
        t = p.track_descriptor
        if t.uuid in tracks:
            bad("track %d described twice" % t.uuid)
        tracks[t.uuid] = t
    if p.HasField("track_event"):
        e = p.track_event
        if e.track_uuid not in tracks:
            bad("packet %d: event on track %d before its descriptor" % (i, e.track_uuid))
        if e.type in (TE.TYPE_SLICE_BEGIN, TE.TYPE_INSTANT):
            if not p.sequence_flags & 2:
                bad("packet %d: interned ids without SEQ_NEEDS_INCREMENTAL_STATE" % i)
            if e.HasField("name_iid") and e.name_iid not in names:
                bad("packet %d: undefined name iid %d" % (i, e.name_iid))
            for c in e.category_iids:
                if c not in cats:
                    bad("packet %d: undefined category iid %d" % (i, c))
            for a in e.debug_annotations:
                if a.HasField("name_iid") and a.name_iid not in anames:
                    bad("packet %d: undefined annotation name iid %d" % (i, a.name_iid))
                if a.HasField("string_value_iid") and a.string_value_iid not in strs:
                    bad("packet %d: undefined string iid %d" % (i, a.string_value_iid))
        if not p.HasField("timestamp"):
            bad("packet %d: an event without a timestamp" % i)
        events.append((p.timestamp, i, e))
print("ok: %d packets decoded, %d tracks, %d events; %d names, %d categories, %d annotation names, %d strings interned"
      % (len(P), len(tracks), len(events), len(names), len(cats), len(anames), len(strs)))

def root(u):
    while tracks[u].HasField("parent_uuid"):
        u = tracks[u].parent_uuid
    return u
procs = {u: t.process.process_name for u, t in tracks.items() if t.HasField("process")}
rank_of = {}
for u, name in procs.items():
    if name.startswith("rank "):
        rank_of[u] = int(name.split()[1])
if sorted(rank_of.values()) != list(range(4)):
    bad("process tracks: %r" % sorted(procs.values()))
analysis = [u for u, n in procs.items() if n == "analysis"]
if len(analysis) != 1:
    bad("no analysis process: %r" % sorted(procs.values()))
threads = {u for u, t in tracks.items() if t.HasField("thread")}
for u in threads:
    t = tracks[u]
    if root(u) not in rank_of or t.thread.pid != tracks[root(u)].process.pid or not t.thread.thread_name.startswith("thread "):
        bad("thread track not under its rank's process: %r" % t)
if len({(tracks[u].thread.pid, tracks[u].thread.tid) for u in threads}) != len(threads):
    bad("two thread tracks with the same pid and tid")
print("ok: a process per rank %s, %d thread tracks (pid/tid unique)" % (sorted(procs.values()), len(threads)))

def cat(e):
    return cats[e.category_iids[0]] if e.category_iids else (e.categories[0] if e.categories else "")

def ann(e):
    out = {}
    for a in e.debug_annotations:
        k = anames[a.name_iid] if a.HasField("name_iid") else a.name
        for f in ("int_value", "bool_value", "string_value"):
            if a.HasField(f):
                out[k] = getattr(a, f)
        if a.HasField("string_value_iid"):
            out[k] = strs[a.string_value_iid]
    return out

# Slices nest on every track, in time order (a stable sort, as Perfetto's).
events.sort(key=lambda x: (x[0], x[1]))
stack = collections.defaultdict(list)
slices = []  # (track, begin, end, event)
for ts, i, e in events:
    if e.type == TE.TYPE_SLICE_BEGIN:
        stack[e.track_uuid].append((ts, e))
    elif e.type == TE.TYPE_SLICE_END:
        if not stack[e.track_uuid]:
            bad("packet %d: an end without a begin on track %d" % (i, e.track_uuid))
        b, be = stack[e.track_uuid].pop()
        slices.append((e.track_uuid, b, ts, be))
open_ = [u for u, s in stack.items() if s]
if open_:
    bad("slices never ended on tracks %r" % open_[:5])
spans = [s for s in slices if root(s[0]) in rank_of and cat(s[3]) != "gpu"]
got = collections.Counter((rank_of[root(u)], names[e.name_iid]) for u, b, x, e in spans)
want = collections.Counter()
for line in open(os.path.join(d, "counts.txt")):
    r, op, n = line.strip().split("|")
    want[(int(r), op)] = int(n)
if got != want:
    bad("slices per rank and op differ from the store: export %s, store %s" % (sorted((got - want).items())[:5], sorted((want - got).items())[:5]))
if not all(u in threads or "overlapping" in tracks[u].name for u, b, x, e in spans):
    bad("a span's slice off its thread's tracks")
ids = {ann(e).get("span") for u, b, x, e in spans}
if len(ids) != len(spans):
    bad("span ids not one per slice")
print("ok: %d span slices, per rank and op as in the store, every slice nested on its track" % len(spans))

comms = collections.Counter(ann(e).get("comm") for u, b, x, e in spans)
if not gpu_job:
    for c in ("MPI_COMM_WORLD", "split(MPI_COMM_WORLD, color 0)", "dup(MPI_COMM_WORLD)"):
        if c not in comms:
            bad("communicator %s not in the annotations: %s" % (c, sorted(k for k in comms if k)))
    if not any("seq" in ann(e) and "bytes" in ann(e) for u, b, x, e in spans if cat(e) == "coll"):
        bad("no collective with seq and bytes")
    if not any("callsite" in ann(e) for u, b, x, e in spans):
        bad("no call site in the annotations")
print("ok: communicators by name: %s" % sorted(k for k in comms if k))

gpu = [s for s in slices if cat(s[3]) == "gpu"]
if gpu_job:
    want = collections.Counter()
    for line in open(os.path.join(d, "gpu.txt")):
        r, stream, b, e = map(int, line.strip().split("|"))
        want[(r, stream, b, e)] += 1
    got = collections.Counter()
    for u, b, x, e in gpu:
        n = tracks[u].name
        if not n.startswith("GPU ") or u in threads:
            bad("a GPU slice on track %r" % n)
        stream = 0 if n.startswith("GPU default stream") else int(n.split()[2], 16)
        got[(rank_of[root(u)], stream, b, x)] += 1
    if got != want:
        bad("GPU slices differ from the store's GPU times: export %s, store %s" % (list((got - want).items())[:3], list((want - got).items())[:3]))
    print("ok: %d GPU slices on %d stream tracks, at the store's GPU times" % (len(gpu), len({u for u, b, x, e in gpu})))

# Flows: each id started once and ended once, on the begin events of span
# slices (ids from 2^51 on: collective instances; below: messages).
starts, ends = collections.Counter(), collections.Counter()
kinds = collections.Counter()
for ts, i, e in events:
    if not e.flow_ids and not e.terminating_flow_ids:
        continue
    if e.type != TE.TYPE_SLICE_BEGIN or root(e.track_uuid) not in rank_of or cat(e) == "gpu":
        bad("flows on an event other than a span's slice (packet %d)" % i)
    for f in e.flow_ids:
        starts[f] += 1
        kinds["collective" if f >= 1 << 51 else "p2p"] += 1
    for f in e.terminating_flow_ids:
        ends[f] += 1
if set(starts) != set(ends) or any(v != 1 for v in starts.values()) or any(v != 1 for v in ends.values()):
    bad("flow ids not started and ended once each: %d started, %d ended" % (len(starts), len(ends)))
p2p = int(open(os.path.join(d, "p2p.txt")).read())
coll = int(open(os.path.join(d, "collflows.txt")).read())
if kinds["p2p"] != p2p or kinds["collective"] != coll or (not gpu_job and p2p == 0):
    bad("flows: %d p2p (store: %d matched messages), %d collective (store: %d members after the last)" % (kinds["p2p"], p2p, kinds["collective"], coll))
print("ok: %d flows paired, each on its span's slices: %d messages, %d collective" % (len(starts), p2p, coll))

if not gpu_job:
    a = analysis[0]
    ver = [s for s in slices if root(s[0]) == a and cat(s[3]) == "verdict"]
    vs = [(ann(e).get("kind"), ann(e).get("rank"), e.name) for u, b, x, e in ver]
    # the export's verdicts are the analysis's (the report's stragglers),
    # among them rank 2's persistent one (its 100 ms delay); another rank
    # may get one of its own on a loaded machine, in both alike
    rep = json.load(open(os.path.join(d, "report.json")))
    want = sorted((s["kind"], s["rank"]) for s in rep["stragglers"])
    if sorted(v[:2] for v in vs) != want or not any(v[:2] == ("persistent", 2) and "rank 2" in v[2] for v in vs):
        bad("verdicts on the analysis process: %r (the report's: %r)" % (vs, want))
    steps = [s for s in slices if root(s[0]) == a and cat(s[3]) == "step"]
    if len(steps) < 10:
        bad("%d steps on the analysis process" % len(steps))
    imp = [u for u, t in tracks.items() if t.HasField("counter") and root(u) == a and "rank 2" in t.name]
    vals = [e.counter_value for ts, i, e in events if e.type == TE.TYPE_COUNTER and e.track_uuid in imp]
    if not vals or max(vals) < 30000000:
        bad("rank 2's imposed wait counter: %r" % vals[-1:])
    waits = [u for u, t in tracks.items() if t.HasField("counter") and root(u) in rank_of]
    if len(waits) < 3:
        bad("wait counters on %d ranks" % len(waits))
    print("ok: %s on the analysis process, %d steps, rank 2's imposed wait up to %d ns, wait counters on %d ranks" % (vs[0][2], len(steps), max(vals), len(waits)))
PYEOF

# store_figures DB DIR: what the checker compares with.
store_figures() {
  q "$1" "SELECT rank, op, count(*) FROM spans GROUP BY rank, op" > "$2/counts.txt"
  q "$1" "SELECT count(*) FROM p2p" > "$2/p2p.txt" 2> /dev/null || echo 0 > "$2/p2p.txt"
  q "$1" "SELECT count(*) FROM span s JOIN instances i ON i.comm = s.comm AND i.seq = s.seq
          WHERE (s.flags & 8) != 0 AND i.last_rank >= 0 AND s.rank != i.last_rank" > "$2/collflows.txt"
  q "$1" "SELECT rank, COALESCE(stream, 0), gpu_begin_ns, gpu_end_ns FROM spans
          WHERE gpu_begin_ns IS NOT NULL AND gpu_begin_ns != 0 AND gpu_end_ns IS NOT NULL AND gpu_end_ns != 0" > "$2/gpu.txt"
}

"$COLLSCOPE" run -o "$T/run" -- "$MPIRUN" -np 4 "$TRAINER" --steps 12 --compute-us 500 --buckets 2 --halo --split \
  --delay-us 100000 --delay-ranks 2 > "$T/run.out" 2>&1 || fail "traced run failed (see $T/run.out)"
check "export --format perfetto" "$COLLSCOPE" export "$T/run" --format perfetto
OUT="$T/run/trace.perfetto-trace"
[ -s "$OUT" ] || fail "no $OUT"
store_figures "$T/run/trace.db" "$T/run"
"$COLLSCOPE" report "$T/run" --format json -o "$T/run/report.json" || fail "report of the MPI job failed"
PB="$T/pb" "$PY" "$T/check.py" "$OUT" "$T/run" || fail "the MPI job's perfetto export does not hold (above)"

"$COLLSCOPE" export "$T/run" --format perfetto -o - > "$T/stdout.pb" 2> "$T/stdout.err" ||
  fail "export -o - failed: $(cat "$T/stdout.err")"
cmp -s "$T/stdout.pb" "$OUT" || fail "export --format perfetto -o - differs from the file"
echo "ok: -o - gives the same trace"

# The NCCL trainer under the CPU stand-ins: GPU stream tracks (where the
# stand-ins are built: they need the NCCL headers and nvcc).
. "$S/tests/nccl/nccl_lib.sh"
if [ -e "$SI/libcudart.so.13" ] && [ -e "$SI/libnccl.so.2" ] && [ -x "$TRAINER" ]; then
  need_standins
  run_trainer "$T/g" "$T/g.out" --steps 4 --buckets 3 --split
  check "export --format perfetto of the NCCL job" "$COLLSCOPE" export "$T/g" --format perfetto -o "$T/g.pb"
  store_figures "$T/g/trace.db" "$T/g"
  [ -s "$T/g/gpu.txt" ] || fail "no span with GPU times in the NCCL trace"
  PB="$T/pb" "$PY" "$T/check.py" "$T/g.pb" "$T/g" gpu || fail "the NCCL job's perfetto export does not hold (above)"
else
  echo "note: the NCCL part not run: the CPU stand-ins or examples/nccl_trainer are not built"
fi

_rc=0
"$COLLSCOPE" export "$T/none" --format perfetto > /dev/null 2> "$T/bad.err" || _rc=$?
[ "$_rc" = 1 ] && [ "$(wc -l < "$T/bad.err")" = 1 ] && grep -q "$T/none" "$T/bad.err" ||
  fail "export of a missing trace: exit $_rc, $(cat "$T/bad.err")"
echo "ok: a missing trace: $(cat "$T/bad.err")"
pass
