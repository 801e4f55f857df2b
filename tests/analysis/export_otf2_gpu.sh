#!/bin/sh
# export_otf2_gpu.sh: the OTF2 export of the NCCL trainer traced under the
# CPU stand-ins (4 ranks), read back with otf2-print: each rank with GPU
# times has an accelerator location group (created by its process) with a
# location per stream, of type ACCELERATOR_STREAM; the Enter/Leave pairs on
# a rank's stream locations (nested where the calls of an NCCL group share
# their GPU times) are the spans with GPU times (per rank and stream, at the
# span's GPU begin and end); NCCL calls carry no MPI records (the MPI
# collectives of the bootstrap do).
. "$srcdir/tests/lib.sh"
grep -q '^#define HAVE_OTF2 1' "$B/config.h" || skip "collscope was built without libotf2 (libotf2-trace-dev)"
command -v otf2-print > /dev/null || skip "otf2-print not installed (Debian otf2-tools)"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
run_trainer "$T/r" "$T/run.out" --steps 4 --buckets 3 --split
DB="$T/r/trace.db"
check "export --format otf2" "$COLLSCOPE" export "$T/r" --format otf2 -o "$T/a"
otf2-print "$T/a/traces.otf2" > "$T/events.txt" 2> "$T/print.err" || fail "otf2-print failed: $(cat "$T/print.err")"
otf2-print -G "$T/a/traces.otf2" > "$T/defs.txt" 2>> "$T/print.err" || fail "otf2-print -G failed"
[ -s "$T/print.err" ] && fail "otf2-print warns: $(head -5 "$T/print.err")"
# rank|stream|gpu begin|gpu end (aligned ns, as the spans view gives them)
q "$DB" "SELECT rank, COALESCE(stream, 0), gpu_begin_ns, gpu_end_ns FROM spans
         WHERE gpu_begin_ns IS NOT NULL AND gpu_begin_ns != 0 AND gpu_end_ns IS NOT NULL AND gpu_end_ns != 0" > "$T/gpu.txt"
[ -s "$T/gpu.txt" ] || fail "no span with GPU times in the trace"
ncoll=$(q "$DB" "SELECT count(*) FROM span s JOIN ops o ON o.id = s.op WHERE o.name LIKE 'MPI_%' AND o.kind IN ('coll', 'rooted')")
"$PY" - "$T/defs.txt" "$T/events.txt" "$T/gpu.txt" "$ncoll" << 'PYEOF' || fail "the GPU locations do not hold (above)"
import collections, re, sys
def bad(msg):
    print("FAIL:", msg)
    sys.exit(1)
groups, locs = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'(LOCATION_GROUP|LOCATION)\s+(\d+)\s+(.*)', line)
    if not m:
        continue
    ref, rest = int(m.group(2)), m.group(3)
    if m.group(1) == "LOCATION_GROUP":
        groups[ref] = (re.search(r'Name: "(.*?)"', rest).group(1), re.search(r'Type: (\w+)', rest).group(1),
                       re.search(r'Creator: (.*)$', rest).group(1))
    else:
        name = re.search(r'Name: "(.*?)"', rest).group(1)
        locs[ref] = (name, re.search(r'Type: (\w+)', rest).group(1), int(re.search(r'Group: ".*?" <(\d+)>', rest).group(1)))
streams = {}
for ref, (name, ltype, g) in locs.items():
    m = re.match(r'rank (\d+) GPU (?:stream 0x([0-9a-f]+)|default stream)$', name)
    if not m:
        continue
    if ltype != "ACCELERATOR_STREAM":
        bad("stream location %r of type %s" % (name, ltype))
    gname, gtype, creator = groups[g]
    if gtype != "ACCELERATOR" or not creator.startswith('"rank %s"' % m.group(1)):
        bad("stream location %r in group %r (%s, creator %s)" % (name, gname, gtype, creator))
    streams[ref] = (int(m.group(1)), int(m.group(2) or "0", 16))
if not streams:
    bad("no GPU stream locations")
got = collections.Counter()
enter = collections.defaultdict(list)
mpi = 0
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) < 3 or not f[1].isdigit():
        continue
    loc, ts = int(f[1]), int(f[2])
    if f[0].startswith("MPI_") or f[0].startswith("NON_BLOCKING"):
        mpi += 1 # the MPI_Bcast of the NCCL unique id only
    if loc not in streams:
        continue
    if f[0] == "ENTER":
        enter[loc].append(ts)
    elif f[0] == "LEAVE":
        got[streams[loc] + (enter[loc].pop(), ts)] += 1
want = collections.Counter()
for line in open(sys.argv[3]):
    r, s, b, e = (int(x) for x in line.strip().split("|"))
    want[(r, s & 0xffffffffffffffff, b, e)] += 1
if got != want:
    bad("GPU Enter/Leave differ from the store's GPU times: only in the export %s, only in the store %s" %
        (list((got - want).items())[:3], list((want - got).items())[:3]))
if mpi != 2 * int(sys.argv[4]):
    bad("%d MPI records in an NCCL job with %s MPI collectives" % (mpi, sys.argv[4]))
print("ok: %d GPU spans on %d stream locations in accelerator groups, at their GPU times" % (sum(got.values()), len(streams)))
PYEOF
pass
