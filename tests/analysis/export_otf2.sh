#!/bin/sh
# export_otf2.sh: `collscope export --format otf2` of two traced 4-rank
# Open MPI runs, read back with otf2-print (libotf2's own reader): the
# example trainer with every collective, its MPI_I* form, every
# point-to-point call and split/dup/create communicators, and nbloop's
# nonblocking buckets on a split communicator named with MPI_Comm_set_name.
# otf2-print reads the archive without a warning; per rank and op the
# Enter and Leave records equal the store's spans; per rank the collective
# begin/end records equal the store's blocking MPI collectives, the
# nonblocking collective request/complete records its nonblocking ones
# (and their completions), the send/receive records its sends and
# receives (Sendrecv one of each; their bytes summed), the isend/irecv
# request records its nonblocking sends/receives and their completions;
# the OTF2 communicators are the store's MPI ones (members in
# communicator rank order, MPI_COMM_SELF once), the named one by its name.
# Bad output paths: a folder that holds other files, a symlink, a regular
# file, standard output: refused, one message, nothing changed or left
# behind; an archive of ours is replaced.
. "$srcdir/tests/lib.sh"
grep -q '^#define HAVE_OTF2 1' "$B/config.h" || {
  "$COLLSCOPE" export "$T" --format otf2 > /dev/null 2> "$T/err" && fail "export --format otf2 without OTF2: exit 0"
  grep -q "built without OTF2" "$T/err" || fail "export --format otf2 without OTF2: $(cat "$T/err")"
  skip "collscope was built without libotf2 (libotf2-trace-dev); the refusal was checked"
}
command -v otf2-print > /dev/null || skip "otf2-print not installed (Debian otf2-tools)"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
NBLOOP="$B/tests/progs/nbloop_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
[ -x "$NBLOOP" ] || skip "$NBLOOP not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"

"$COLLSCOPE" export --help | grep -q 'otf2' || fail "collscope export --help does not name otf2"

"$COLLSCOPE" run -o "$T/tr" -- "$MPIRUN" -np 4 "$TRAINER" --steps 3 --all-ops --split --nonblocking --halo \
  --buckets 2 > "$T/tr.out" 2>&1 || fail "traced trainer run failed (see $T/tr.out)"
"$COLLSCOPE" run -o "$T/nb" -- "$MPIRUN" -np 4 "$NBLOOP" --steps 5 --buckets 4 --compute-us 200 --comm split \
  --name grads > "$T/nb.out" 2>&1 || fail "traced nbloop run failed (see $T/nb.out)"

# The store's figures: spans per rank and op; per rank and kind of record;
# communicators and members.
store_figures() {
  db=$1/trace.db
  q "$db" "SELECT rank, op, count(*) FROM spans GROUP BY rank, op" > "$1/spans.txt"
  # MPI communicators (not NCCL's), so that a span's MPI records count.
  mpi="s.comm IN (SELECT id FROM comms WHERE how NOT LIKE 'nccl%') AND (s.flags & 64) = 0"
  nb="((s.flags & 1) != 0 OR o.nonblocking != 0)"
  coll="o.kind IN ('coll', 'rooted') AND o.name LIKE 'MPI_%'"
  done_="EXISTS (SELECT 1 FROM completions c WHERE c.rank = s.rank AND c.req = s.req AND c.span IS NOT NULL)"
  q "$db" "SELECT s.rank, 'coll', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND $coll AND NOT $nb GROUP BY s.rank
           UNION ALL SELECT s.rank, 'nbcoll', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND $coll AND $nb AND s.req != 0 GROUP BY s.rank
           UNION ALL SELECT s.rank, 'nbcoll_done', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND $coll AND $nb AND s.req != 0 AND $done_ GROUP BY s.rank
           UNION ALL SELECT s.rank, 'send', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND ((o.kind = 'send' AND NOT $nb) OR o.kind = 'sendrecv') AND (s.flags & 16) != 0 GROUP BY s.rank
           UNION ALL SELECT s.rank, 'send_bytes', sum(s.bytes) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND ((o.kind = 'send' AND NOT $nb) OR o.kind = 'sendrecv') AND (s.flags & 16) != 0 GROUP BY s.rank
           UNION ALL SELECT s.rank, 'recv', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND ((o.kind = 'recv' AND NOT $nb) OR o.kind = 'sendrecv') AND (s.flags & 16) != 0 GROUP BY s.rank
           UNION ALL SELECT s.rank, 'isend', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND o.kind = 'send' AND $nb AND s.req != 0 GROUP BY s.rank
           UNION ALL SELECT s.rank, 'isend_done', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND o.kind = 'send' AND $nb AND s.req != 0 AND $done_ GROUP BY s.rank
           UNION ALL SELECT s.rank, 'irecv', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND o.kind = 'recv' AND $nb AND s.req != 0 GROUP BY s.rank
           UNION ALL SELECT s.rank, 'irecv_done', count(*) FROM span s JOIN ops o ON o.id = s.op
             WHERE $mpi AND o.kind = 'recv' AND $nb AND s.req != 0 AND $done_ GROUP BY s.rank" > "$1/records.txt"
  q "$db" "SELECT id, how, COALESCE(name, ''), group_concat(rank, ',') FROM
             (SELECT * FROM comms WHERE how NOT LIKE 'nccl%' ORDER BY id, comm_rank) GROUP BY id" > "$1/comms.txt"
}

check_archive() {
  dir=$1 want_name=$2
  [ -s "$dir/otf2/traces.otf2" ] || fail "no anchor file $dir/otf2/traces.otf2"
  otf2-print "$dir/otf2/traces.otf2" > "$dir/events.txt" 2> "$dir/print.err" || fail "otf2-print failed: $(cat "$dir/print.err")"
  otf2-print -G "$dir/otf2/traces.otf2" > "$dir/defs.txt" 2>> "$dir/print.err" || fail "otf2-print -G failed: $(cat "$dir/print.err")"
  [ -s "$dir/print.err" ] && fail "otf2-print warns: $(head -5 "$dir/print.err")"
  store_figures "$dir"
  "$PY" - "$dir" "$want_name" << 'PYEOF' || fail "the OTF2 archive of $dir does not hold the trace (above)"
import collections, re, sys
d, want_name = sys.argv[1], sys.argv[2]

def bad(msg):
    print("FAIL:", msg)
    sys.exit(1)

strings, locs, regions, groups, comms = {}, {}, {}, {}, {}
for line in open(d + "/defs.txt"):
    m = re.match(r'(\w+)\s+(\d+)\s+(.*)', line)
    if not m:
        continue
    kind, ref, rest = m.group(1), int(m.group(2)), m.group(3)
    name = re.match(r'(?:\d+\s+)?"(.*?)"|Name: "(.*?)"', rest)
    if kind == "LOCATION":
        n = re.search(r'Name: "rank (\d+) (thread|GPU)', rest)
        ev = int(re.search(r'# Events: (\d+)', rest).group(1))
        locs[ref] = (int(n.group(1)), n.group(2), ev)
    elif kind == "REGION":
        regions[ref] = re.search(r'Name: "(.*?)"', rest).group(1)
    elif kind == "GROUP":
        gtype = re.search(r'Type: (\w+)', rest).group(1)
        members = [int(x) for x in re.findall(r'(\d+) \("rank', rest)]
        groups[ref] = (gtype, members, re.search(r'Name: "(.*?)"', rest).group(1))
    elif kind == "COMM":
        cname = re.search(r'Name: "(.*?)"', rest).group(1)
        g = int(re.search(r'Group: ".*?" <(\d+)>', rest).group(1))
        comms[ref] = (cname, g)
if not locs or not regions or not comms:
    bad("definitions missing: %d locations, %d regions, %d comms" % (len(locs), len(regions), len(comms)))

# Events: per location and kind; Enter per (rank, region).
enter = collections.Counter()
leave = collections.Counter()
rec = collections.Counter()
send_bytes = collections.Counter()
per_loc = collections.Counter()
kinds = {"MPI_COLLECTIVE_BEGIN": "coll", "MPI_COLLECTIVE_END": "coll_end",
         "NON_BLOCKING_COLLECTIVE_REQUEST": "nbcoll", "NON_BLOCKING_COLLECTIVE_COMPLETE": "nbcoll_done",
         "MPI_SEND": "send", "MPI_RECV": "recv", "MPI_ISEND": "isend", "MPI_ISEND_COMPLETE": "isend_done",
         "MPI_IRECV_REQUEST": "irecv", "MPI_IRECV": "irecv_done"}
last = {}
for line in open(d + "/events.txt"):
    f = line.split()
    if len(f) < 3 or not f[1].isdigit():
        continue
    ev, loc, ts = f[0], int(f[1]), int(f[2])
    if loc not in locs:
        bad("event on an undefined location: %s" % line)
    if ts < last.get(loc, 0):
        bad("time goes back on location %d: %s" % (loc, line))
    last[loc] = ts
    per_loc[loc] += 1
    rank, what, _ = locs[loc]
    if ev in ("ENTER", "LEAVE"):
        region = regions[int(re.search(r'<(\d+)>', line).group(1))]
        if what == "thread":
            (enter if ev == "ENTER" else leave)[(rank, region)] += 1
    elif ev in kinds:
        rec[(rank, kinds[ev])] += 1
        if ev == "MPI_SEND":
            send_bytes[rank] += int(re.search(r'Length: (\d+)', line).group(1))
for loc, (rank, what, n) in locs.items():
    if per_loc[loc] != n:
        bad("location %d: %d events, its definition says %d" % (loc, per_loc[loc], n))

want = collections.Counter()
for line in open(d + "/spans.txt"):
    r, op, n = line.strip().split("|")
    want[(int(r), op)] = int(n)
if enter != want or leave != want:
    bad("Enter/Leave per rank and op differ from the store's spans: %s / %s" %
        (sorted((enter - want).items())[:5], sorted((want - enter).items())[:5]))
print("ok: %d Enter and Leave records, per rank and op as the store's spans" % sum(enter.values()))

wrec = collections.Counter()
for line in open(d + "/records.txt"):
    r, k, n = line.strip().split("|")
    if k == "send_bytes":
        if send_bytes[int(r)] != int(n):
            bad("rank %s: MPI_SEND lengths sum to %d, the store's sends %s bytes" % (r, send_bytes[int(r)], n))
        continue
    wrec[(int(r), k)] = int(n)
    if k == "coll":
        wrec[(int(r), "coll_end")] = int(n)
if rec != wrec:
    bad("MPI records per rank differ from the store: export %s, store %s" %
        (sorted((rec - wrec).items()), sorted((wrec - rec).items())))
tot = collections.Counter()
for (r, k), n in rec.items():
    tot[k] += n
print("ok: MPI records per rank as in the store: %s" % ", ".join("%s %d" % kv for kv in sorted(tot.items())))

# Communicators: OTF2 comms over COMM_GROUP groups of world ranks.
locgroup = [g for g in groups.values() if g[0] == "COMM_LOCATIONS"]
if len(locgroup) != 1:
    bad("want one COMM_LOCATIONS group, got %d" % len(locgroup))
got = collections.Counter()
names = []
for ref, (cname, g) in comms.items():
    gtype, members, _ = groups[g]
    if gtype == "COMM_SELF":
        got[("self", ())] += 1
    else:
        got[("comm", tuple(members))] += 1
    names.append(cname)
wantc = collections.Counter()
named = 0
for line in open(d + "/comms.txt"):
    cid, how, name, members = line.strip().split("|")
    if how == "self":
        wantc[("self", ())] = 1
    else:
        wantc[("comm", tuple(int(x) for x in members.split(",")))] += 1
    named += name == want_name
if got != wantc:
    bad("communicators differ from the store's: export %s, store %s" % (sorted(got.items()), sorted(wantc.items())))
if "MPI_COMM_WORLD" not in names:
    bad("no MPI_COMM_WORLD comm: %s" % names)
if want_name and sum(1 for n in names if n.startswith(want_name)) != named:
    bad("%d communicators named %r in the store, comms %s" % (named, want_name, names))
print("ok: %d communicators as in the store, members in communicator rank order: %s" % (len(comms), sorted(names)))
PYEOF
}

check "export --format otf2 (trainer)" "$COLLSCOPE" export "$T/tr" --format otf2
check_archive "$T/tr" ""
check "export --format otf2 (nbloop)" "$COLLSCOPE" export "$T/nb" --format otf2
check_archive "$T/nb" grads

# An archive of ours is replaced, also by -o.
check "export over its own archive" "$COLLSCOPE" export "$T/nb" --format otf2
check "export -o PATH" "$COLLSCOPE" export "$T/nb/trace.db" --format otf2 -o "$T/nb/other"
otf2-print "$T/nb/other/traces.otf2" > /dev/null 2>&1 || fail "otf2-print cannot read the archive written with -o"

# Refused: a folder of other files, a symlink, a file, standard output.
mkdir "$T/mine" && echo precious > "$T/mine/notes.txt"
ln -s "$T/nb/otf2" "$T/link"
echo precious > "$T/file"
for out in "$T/mine" "$T/link" "$T/file" -; do
  "$COLLSCOPE" export "$T/nb" --format otf2 -o "$out" > "$T/out" 2> "$T/err" && fail "export -o $out: exit 0"
  [ "$(grep -c . "$T/err")" = 1 ] || fail "export -o $out: want one message, got: $(cat "$T/err")"
  echo "ok: -o $out refused: $(cat "$T/err")"
done
[ "$(cat "$T/mine/notes.txt")" = precious ] && [ "$(ls "$T/mine")" = notes.txt ] || fail "a folder of other files was changed"
[ "$(cat "$T/file")" = precious ] || fail "a file at -o was changed"
[ -L "$T/link" ] || fail "the symlink was replaced"
otf2-print "$T/nb/otf2/traces.otf2" > /dev/null 2>&1 || fail "the symlink's target was damaged"
leftover=$(find "$T" -name '*.tmp*' | head -3)
[ -z "$leftover" ] || fail "temporary folders left behind: $leftover"
echo "ok: bad output paths refused, nothing changed or left behind"
pass
