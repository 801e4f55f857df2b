#!/bin/sh
# layout.sh: the parallel layout found from the trace (analyzer/analysis/an_layout.c)
# on examples/pipe_trainer, a dp x pp x tp trainer in Megatron-LM's rank order:
# with the communicators named (dp, pp, tp) and without names (found from
# the communicators that split the ranks, their traffic and the chains of
# send/receive), the layout line and every rank's coordinates equal the
# program's own; a data-parallel loop is "dp 4 x pp 1, tp 1"; a ring of
# halo messages is no pipeline: no layout, and a note says why.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/examples/pipe_trainer_ompi"
[ -x "$PROG" ] || skip "$PROG not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "python3 not installed"

# layout NAME NP WANT ARGS...: pipe_trainer traced; the report's layout is WANT
# and each rank's coordinates are the ones the program printed
layout() {
  _n=$1 _np=$2 _want=$3
  shift 3
  "$COLLSCOPE" run -o "$T/$_n" -- "$MPIRUN" -np "$_np" --oversubscribe "$@" >"$T/$_n.out" 2>&1 ||
    fail "$_n: traced run failed (see $T/$_n.out)"
  "$COLLSCOPE" report "$T/$_n" --format json -o "$T/$_n.json" || fail "$_n: report failed"
  "$COLLSCOPE" report "$T/$_n" >"$T/$_n.txt" || fail "$_n: text report failed"
  grep -q "^Parallel layout: $_want\$" "$T/$_n.txt" || fail "$_n: the text report says: $(grep -A1 'layout' "$T/$_n.txt")"
  "$PY" - "$T/$_n.json" "$T/$_n.out" "$_want" <<'PYEOF' || fail "$_n: see above"
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[3]
lay = d["layout"]
if lay is None or lay["text"] != want:
    sys.exit("layout %r, want %r (notes: %s)" % (lay and lay["text"], want, d["notes"]))
own = {}
for l in open(sys.argv[2]):
    if l.startswith("PIPE "):
        kv = dict(x.split("=", 1) for x in l.split()[1:])
        own[int(kv["rank"])] = (int(kv["dp"]), int(kv["pp"]), int(kv["tp"]))
if not own:
    own = None
got = {r["rank"]: (r["dp"], r["pp"], r["tp"]) for r in lay["ranks"]}
if own is not None and got != own:
    sys.exit("coordinates %s, the program's %s" % (got, own))
print("layout %s: %s; %d ranks as the program says" % (want, lay["source"], len(got)))
PYEOF
  echo "ok: $_n: $_want"
}

F="--steps 6 --compute-us 200 --layers 2"
layout named 8 "dp 2 x pp 2, tp 2" "$PROG" --dp 2 --pp 2 --tp 2 $F
layout dp2pp2tp2 8 "dp 2 x pp 2, tp 2" "$PROG" --dp 2 --pp 2 --tp 2 $F --no-names
layout dp2pp4 8 "dp 2 x pp 4, tp 1" "$PROG" --dp 2 --pp 4 --tp 1 $F --no-names
layout dp2pp2 4 "dp 2 x pp 2, tp 1" "$PROG" --dp 2 --pp 2 --tp 1 $F --no-names --gpipe
layout pp2tp2 4 "dp 1 x pp 2, tp 2" "$PROG" --dp 1 --pp 2 --tp 2 $F --no-names
layout pp4 4 "dp 1 x pp 4, tp 1" "$PROG" --dp 1 --pp 4 --tp 1 $F --no-names --rs-ag
layout dp4tp2 8 "dp 4 x pp 1, tp 2" "$PROG" --dp 4 --pp 1 --tp 2 $F --no-names --rs-ag

# a data-parallel loop: every rank a replica
NB="$B/tests/progs/nbloop_ompi"
[ -x "$NB" ] || fail "$NB not built"
layout nbloop 4 "dp 4 x pp 1, tp 1" "$NB" --steps 10 --buckets 4

# a ring of halo messages is no pipeline
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || fail "$TRAINER not built"
"$COLLSCOPE" run -o "$T/halo" -- "$MPIRUN" -np 4 --oversubscribe "$TRAINER" --steps 6 --halo >"$T/halo.out" 2>&1 ||
  fail "halo: traced run failed"
"$COLLSCOPE" report "$T/halo" --format json -o "$T/halo.json" || fail "halo: report failed"
"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
if d["layout"] is not None:
    sys.exit("halo: layout %r, want none" % d["layout"]["text"])
n = [x for x in d["notes"] if "no parallel layout" in x]
if not n or "4 ranks exchange messages in a ring" not in n[0]:
    sys.exit("halo: no note on the ring: %r" % d["notes"])
print("halo: %s" % n[0])' "$T/halo.json" || fail "halo: see above"
echo "ok: a ring of halo messages is no pipeline"
pass
