#!/bin/sh
# roundtrip_kineto.sh: a traced 4-rank MPI job (the example trainer on
# Open MPI: split, dup and create communicators, rank 2 late in every
# step) exported with `collscope export --format kineto` and read back
# with `collscope import`: the imported trace has, per rank, the same
# number of calls of each collective and p2p kind (MPI_Allreduce and the
# imported allreduce are one kind), the same seqs on each communicator,
# the same communicators (by name, size and members, with the same calls
# on each), the same steps, and the same straggler verdict (kind, rank,
# steps; its cost within 5 %).
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
"$COLLSCOPE" import --help > /dev/null 2>&1 || skip "this collscope has no import command"

"$COLLSCOPE" run -o "$T/run" -- "$MPIRUN" -np 4 "$TRAINER" --steps 12 --compute-us 500 --buckets 2 --split \
  --delay-us 100000 --delay-ranks 2 > "$T/run.out" 2>&1 || fail "traced run failed (see $T/run.out)"
check "export --format kineto" "$COLLSCOPE" export "$T/run" --format kineto -o "$T/kineto"
check "import of the export" "$COLLSCOPE" import -o "$T/back" "$T/kineto"
for d in run back; do
  "$COLLSCOPE" report "$T/$d" --format json > "$T/$d.json" || fail "report of $d failed"
  q "$T/$d/trace.db" "SELECT rank, op, count(*) FROM spans WHERE kind IN ('coll', 'rooted', 'send', 'recv', 'sendrecv')
                      GROUP BY rank, op" > "$T/$d.ops"
  q "$T/$d/trace.db" "SELECT rank, comm, seq FROM spans WHERE seq IS NOT NULL ORDER BY rank, comm, seq" > "$T/$d.seqs"
  q "$T/$d/trace.db" "SELECT id, rank FROM comms ORDER BY id, comm_rank" > "$T/$d.members"
done
"$PY" - "$T" << 'PYEOF' || fail "the round trip lost something (above)"
import collections, json, os, re, sys
T = sys.argv[1]

def bad(msg):
    print("FAIL:", msg)
    sys.exit(1)

def kind(op):
    s = re.sub(r"^(MPI_I?|nccl|c10d_)", "", op).lower().replace("_", "")
    return {"bcast": "broadcast", "allgatherv": "allgather", "reducescatterblock": "reducescatter"}.get(s, s)

def load(d):
    rep = json.load(open(os.path.join(T, d + ".json")))
    name = {c["comm_id"]: c["comm_name"] for c in rep["comms"]}
    ops = collections.Counter()
    for l in open(os.path.join(T, d + ".ops")):
        r, op, n = l.strip().split("|")
        ops[(int(r), kind(op))] += int(n)
    seqs = collections.defaultdict(list)
    for l in open(os.path.join(T, d + ".seqs")):
        r, comm, seq = l.strip().split("|")
        seqs[(int(r), name.get(int(comm), "?"))].append(int(seq))
    members = collections.defaultdict(list)
    for l in open(os.path.join(T, d + ".members")):
        cid, r = l.strip().split("|")
        if int(cid) in name:
            members[name[int(cid)]].append(int(r))
    comms = sorted((c["comm_name"], c["size"], c["calls"]) for c in rep["comms"])
    return rep, ops, dict(seqs), {k: sorted(v) for k, v in members.items()}, comms

a, b = load("run"), load("back")
for i, what in ((1, "calls per rank and kind"), (2, "seqs per rank and communicator"),
                (3, "communicator members"), (4, "communicators (name, size, calls)")):
    if a[i] != b[i]:
        bad("%s differ:\n  traced   %r\n  imported %r" % (what, a[i], b[i]))
    n = len(a[i])
    print("ok: %s equal (%d entries)" % (what, n))
ra, rb = a[0], b[0]
if len(ra["steps"]) != len(rb["steps"]):
    bad("steps: traced %d, imported %d" % (len(ra["steps"]), len(rb["steps"])))
va = [(s["kind"], s["rank"], s["first_step"], s["last_step"]) for s in ra["stragglers"]]
vb = [(s["kind"], s["rank"], s["first_step"], s["last_step"]) for s in rb["stragglers"]]
# rank 2's persistent verdict (its 100 ms delay), in both alike; another
# rank may get one of its own on a loaded machine (in both alike)
k = [i for i, v in enumerate(va) if v[:2] == ("persistent", 2)]
if va != vb or not k:
    bad("straggler verdicts: traced %r, imported %r" % (va, vb))
    k = [0]
ca, cb = ra["stragglers"][k[0]]["cost_ns"], rb["stragglers"][k[0]]["cost_ns"]
if abs(ca - cb) > 0.05 * ca:
    bad("straggler cost: traced %d ns, imported %d ns" % (ca, cb))
print("ok: %d steps; verdict %r, cost %d ns traced, %d ns imported" % (len(ra["steps"]), va[k[0]], ca, cb))
PYEOF
pass
