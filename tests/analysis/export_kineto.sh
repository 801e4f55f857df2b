#!/bin/sh
# export_kineto.sh: `collscope export --format kineto` of a traced 4-rank
# MPI run of the example trainer (Open MPI; halo exchange with
# MPI_Sendrecv, split/dup/create communicators, rank 2 late every step),
# checked with Python's json against the store: a file per rank
# (DIR/kineto/rank-R.pt.trace.json by default); distributedInfo with the
# rank (also on the first line holding "rank": N, where HTA looks),
# world_size, backend and pg_config equal to the store's communicators
# (MPI_COMM_WORLD as PyTorch's default group "0"); every span one event
# at its aligned time (baseTimeNanoseconds + ts); per rank the
# collectives and p2p calls as record_param_comms with PyTorch's args,
# the store's counts per collective, seqs, group ranks and peers;
# ProfilerStep#N from each step marker to the next (without markers, the
# analysis's steps); no GPU parts.
# A rank file in the folder that is of no rank of the trace is named.
# Bad input: standard output, an output through a symbolic link, onto a
# file, into a folder whose rank file is a link (the files written before
# it are removed); a missing trace.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"

"$COLLSCOPE" export --help | grep -q 'kineto' || fail "collscope export --help does not name the kineto format"
"$COLLSCOPE" run -o "$T/run" -- "$MPIRUN" -np 4 "$TRAINER" --steps 8 --compute-us 500 --buckets 2 --halo --split \
  --delay-us 20000 --delay-ranks 2 > "$T/run.out" 2>&1 || fail "traced run failed (see $T/run.out)"
DB="$T/run/trace.db"
check "export --format kineto with the defaults" "$COLLSCOPE" export "$T/run" --format kineto
K="$T/run/kineto"
[ -d "$K" ] || fail "no folder $K"

q "$DB" "SELECT rank, op, begin_ns, kind, COALESCE(comm, 0), COALESCE(seq, -1), COALESCE(peer, -1),
                COALESCE(peer2, -1) FROM spans" > "$T/spans.txt"
q "$DB" "SELECT id, rank, comm_rank, size FROM comms WHERE how != 'self'" > "$T/comms.txt"
q "$DB" "SELECT id FROM comms WHERE how = 'world' LIMIT 1" > "$T/world.txt"
"$PY" - "$K" "$T" << 'PYEOF' || fail "the kineto files do not hold (above)"
import collections, glob, json, math, os, re, sys
K, T = sys.argv[1], sys.argv[2]

def bad(msg):
    print("FAIL:", msg)
    sys.exit(1)

COLL = {"allreduce": "allreduce", "bcast": "broadcast", "reduce": "reduce", "allgather": "allgather",
        "allgatherv": "allgather", "reduce_scatter": "reduce_scatter", "alltoall": "all_to_all",
        "gather": "gather", "scatter": "scatter", "barrier": "barrier", "send": "send", "recv": "recv",
        "sendrecv": "sendrecv", "isend": "send", "irecv": "recv", "iallreduce": "allreduce"}
def coll_of(op):
    return COLL.get(op[4:].lower()) if op.startswith("MPI_") else None

members = collections.defaultdict(dict)
for l in open(os.path.join(T, "comms.txt")):
    cid, r, cr, size = map(int, l.strip().split("|"))
    members[cid][cr] = r
ranks_of = {cid: [m[i] for i in sorted(m)] for cid, m in members.items()}
world = int(open(os.path.join(T, "world.txt")).read().strip())
spans = collections.defaultdict(list)
for l in open(os.path.join(T, "spans.txt")):
    r, op, b, kind, comm, seq, peer, peer2 = l.strip().split("|")
    spans[int(r)].append((op, int(b), kind, int(comm), int(seq), int(peer), int(peer2)))
files = sorted(glob.glob(os.path.join(K, "*")))
if [os.path.basename(f) for f in files] != ["rank-%d.pt.trace.json" % r for r in range(4)]:
    bad("files %r, want rank-0..3.pt.trace.json" % [os.path.basename(f) for f in files])
need = {"X": ("ph", "cat", "name", "pid", "tid", "ts", "dur", "args"), "M": ("name", "ph", "pid", "tid", "args"),
        "s": ("id", "pid", "tid", "ts", "cat", "name"), "f": ("id", "pid", "tid", "ts", "cat", "name", "bp")}
for path in files:
    d = json.load(open(path), parse_constant=lambda c: bad("non-finite number %s" % c))
    info = d["distributedInfo"]
    rank = info["rank"]
    if os.path.basename(path) != "rank-%d.pt.trace.json" % rank:
        bad("%s holds rank %d" % (path, rank))
    with open(path) as f:
        m = next((re.search(r'"rank":\s+(\d+)', l) for l in f if re.search(r'"rank":\s+(\d+)', l)), None)
    if not m or int(m.group(1)) != rank:
        bad("%s: HTA would read rank %s" % (path, m and m.group(1)))
    if d.get("schemaVersion") != 1 or info.get("world_size") != 4 or info.get("backend") != "mpi":
        bad("rank %d: schemaVersion %r, world_size %r, backend %r" % (rank, d.get("schemaVersion"),
            info.get("world_size"), info.get("backend")))
    if "deviceProperties" in d:
        bad("rank %d: deviceProperties in a trace without GPU work" % rank)
    base = d["baseTimeNanoseconds"]
    pgs = {p["pg_name"]: p for p in info["pg_config"]}
    if len(pgs) != len(info["pg_config"]) or info["pg_count"] != len(ranks_of):
        bad("rank %d: pg_config names not unique, or pg_count %r is not the job's %d groups" %
            (rank, info["pg_count"], len(ranks_of)))
    got = sorted(tuple(p["ranks"]) for p in info["pg_config"])
    want = sorted(tuple(v) for v in ranks_of.values() if rank in v)
    if got != want or any(p["pg_size"] != len(p["ranks"]) for p in info["pg_config"]):
        bad("rank %d: pg_config %r, the store's communicators %r" % (rank, got, want))
    if pgs.get("0", {}).get("pg_desc") != "MPI_COMM_WORLD" or pgs["0"]["ranks"] != ranks_of[world]:
        bad("rank %d: the default group \"0\" is not MPI_COMM_WORLD: %r" % (rank, pgs.get("0")))
    ev = d["traceEvents"]
    for e in ev:
        for k in need.get(e.get("ph"), ("?",)):
            if k not in e:
                bad("rank %d: event without %r: %r" % (rank, k, e))
        if e["ph"] == "X" and e["dur"] < 0:
            bad("rank %d: negative duration: %r" % (rank, e))
    x = [e for e in ev if e["ph"] == "X"]
    if any(e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset") for e in x):
        bad("rank %d: GPU events in a trace without GPU work" % rank)
    # every span one event, at its aligned time
    got = collections.Counter((e["args"]["collscope op"], base + round(e["ts"] * 1000)) for e in x
                              if "collscope op" in e["args"])
    want = collections.Counter((op, b) for op, b, *_ in spans[rank])
    if got != want:
        bad("rank %d: events (op, time) differ from the store's spans: only in the file %r, only in the store %r" %
            (rank, list((got - want).items())[:3], list((want - got).items())[:3]))
    # collectives and p2p with PyTorch's args
    byname = {p["pg_name"]: p for p in info["pg_config"]}
    got, used = collections.Counter(), set()
    for e in x:
        if e["name"] != "record_param_comms":
            continue
        a = e["args"]
        g = byname.get(a["Process Group Name"])
        if not g or a["Process Group Ranks"] != "[%s]" % ", ".join(map(str, g["ranks"])) or a["Group size"] != g["pg_size"]:
            bad("rank %d: record_param_comms of a group not in pg_config, or with other ranks: %r" % (rank, a))
        if e["cat"] != "cpu_op" or a["Process Group Description"] != g["pg_desc"]:
            bad("rank %d: record_param_comms: %r" % (rank, e))
        got[(a["Collective name"], a.get("Seq", -1), a.get("Dst Rank", -1), a.get("Src Rank", -1), tuple(g["ranks"]))] += 1
        used.add(g["pg_name"])
    want, comms = collections.Counter(), set()
    for op, b, kind, comm, seq, peer, peer2 in spans[rank]:
        c = coll_of(op)
        if not c or comm == 0:
            continue
        gr = ranks_of[comm]
        dst = gr[peer] if c in ("send", "sendrecv") and peer >= 0 else -1
        src = gr[peer] if c == "recv" and peer >= 0 else gr[peer2] if c == "sendrecv" and peer2 >= 0 else -1
        want[(c, seq if kind in ("coll", "rooted") else -1, dst, src, tuple(gr))] += 1
        comms.add(comm)
    if got != want or len(used) != len(comms):
        bad("rank %d: record_param_comms differ from the store: only in the file %r, only in the store %r;"
            " %d groups used, %d communicators" % (rank, list((got - want).items())[:4],
                                                   list((want - got).items())[:4], len(used), len(comms)))
    # steps from the markers
    marks = sorted(b for op, b, kind, *_ in spans[rank] if kind == "marker")
    steps = sorted((e["ts"], e["dur"], e["name"]) for e in x if e["name"].startswith("ProfilerStep#"))
    if [base + round(s[0] * 1000) for s in steps] != marks or not marks:
        bad("rank %d: ProfilerStep starts %r, markers %r" % (rank, [s[0] for s in steps], marks))
    if [s[2] for s in steps] != ["ProfilerStep#%d" % i for i in range(len(steps))]:
        bad("rank %d: steps %r" % (rank, [s[2] for s in steps]))
    for a, b in zip(steps, steps[1:]):
        if abs(a[0] + a[1] - b[0]) > 0.002:
            bad("rank %d: %s does not end where %s begins" % (rank, a[2], b[2]))
    print("ok: rank %d: %d events, %d record_param_comms, %d steps, %d process groups" %
          (rank, len(ev), sum(got.values()), len(steps), len(pgs)))
PYEOF

# the same again: the files are replaced, the same bytes
cp "$K/rank-1.pt.trace.json" "$T/r1.json"
check "export again over the folder" "$COLLSCOPE" export "$T/run" --format kineto
cmp -s "$K/rank-1.pt.trace.json" "$T/r1.json" || fail "a second export wrote another rank-1 file"
check "export -o FOLDER" "$COLLSCOPE" export "$DB" --format kineto -o "$T/other"
cmp -s "$T/other/rank-1.pt.trace.json" "$T/r1.json" || fail "export -o FOLDER wrote another rank-1 file"

# a rank file of an earlier, larger export is named (readers would take it)
cp "$T/r1.json" "$T/other/rank-9.pt.trace.json"
"$COLLSCOPE" export "$DB" --format kineto -o "$T/other" 2> "$T/err" || fail "export over a folder with a stray file"
grep -q "rank-9.pt.trace.json is of no rank of this trace" "$T/err" || fail "the stray rank file not named: $(cat "$T/err")"
echo "ok: a stray rank file named"

# without step markers: the analysis's steps, the same on every rank
"$COLLSCOPE" run -o "$T/np" -- "$MPIRUN" -np 4 "$TRAINER" --steps 10 --compute-us 500 --buckets 2 --no-pcontrol --delay-us 20000 --delay-ranks 1 \
  > "$T/np.out" 2>&1 || fail "traced run without markers failed (see $T/np.out)"
check "export of a trace without markers" "$COLLSCOPE" export "$T/np" --format kineto
q "$T/np/trace.db" "SELECT begin_ns, end_ns FROM steps ORDER BY step" > "$T/steps.txt"
[ -s "$T/steps.txt" ] || fail "the analysis found no steps without markers"
"$PY" - "$T/np/kineto" "$T/steps.txt" << 'PYEOF' || fail "the steps of a trace without markers do not hold (above)"
import glob, json, sys
want = [tuple(map(int, l.split("|"))) for l in open(sys.argv[2]) if l.strip()]
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(path))
    base = d["baseTimeNanoseconds"]
    got = sorted((base + round(e["ts"] * 1000), base + round((e["ts"] + e["dur"]) * 1000))
                 for e in d["traceEvents"] if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
    if got != want:
        print("FAIL: %s: ProfilerStep %r, the analysis's steps %r" % (path, got[:3], want[:3]))
        sys.exit(1)
print("ok: %d ProfilerStep events a rank, the analysis's steps" % len(want))
PYEOF

# ---- bad input ----
"$COLLSCOPE" export "$T/run" --format kineto -o - > "$T/out" 2> "$T/err"
expect_eq "-o - (standard output): exit status" "$?" 2
grep -q 'writes a folder, not standard output' "$T/err" || fail "-o -: message: $(cat "$T/err")"
[ -s "$T/out" ] && fail "-o -: something written to standard output"
mkdir "$T/target"
ln -s "$T/target" "$T/link"
"$COLLSCOPE" export "$T/run" --format kineto -o "$T/link" 2> "$T/err"
expect_eq "-o a symbolic link: exit status" "$?" 1
grep -q "$T/link is a symbolic link" "$T/err" || fail "-o link: message: $(cat "$T/err")"
[ -z "$(ls "$T/target")" ] || fail "-o link: files written through the link"
: > "$T/afile"
"$COLLSCOPE" export "$T/run" --format kineto -o "$T/afile" 2> "$T/err"
expect_eq "-o a file: exit status" "$?" 1
grep -q "$T/afile is not a folder" "$T/err" || fail "-o file: message: $(cat "$T/err")"
mkdir "$T/trap"
echo keep > "$T/kept"
ln -s "$T/kept" "$T/trap/rank-0.pt.trace.json"
"$COLLSCOPE" export "$T/run" --format kineto -o "$T/trap" 2> "$T/err"
expect_eq "a rank file that is a symbolic link: exit status" "$?" 1
grep -q "rank-0.pt.trace.json is a symbolic link" "$T/err" || fail "rank file link: message: $(cat "$T/err")"
expect_eq "the link's target untouched" "$(cat "$T/kept")" keep
mkdir "$T/trap3"
ln -s "$T/kept" "$T/trap3/rank-3.pt.trace.json"
"$COLLSCOPE" export "$T/run" --format kineto -o "$T/trap3" 2> "$T/err"
expect_eq "the last rank's file a symbolic link: exit status" "$?" 1
expect_eq "the files written before it removed" "$(ls "$T/trap3")" rank-3.pt.trace.json
"$COLLSCOPE" export "$T/nothing" --format kineto -o "$T/k2" 2> "$T/err"
expect_eq "a missing trace: exit status" "$?" 1
[ -e "$T/k2" ] && fail "a missing trace: $T/k2 made"
pass
