#!/bin/sh
# fuse_costs.sh: apply mode's own costs, measured from fused traces of
# tests/progs/nbloop (the constants CS_WF_QUEUE_NS, CS_WF_FUSE_* of
# analyzer/analysis/whatif_int.h; docs/fusion.md "Apply mode's own costs").
#
#   sh bench/fuse_costs.sh [BUILD_DIR]          (default ./build)
#
# For each pattern (B members of S bytes, fused into calls of BUF bytes)
# one traced apply-mode run and two traced unfused runs (B calls of S
# bytes, and B x S / BUF calls of BUF bytes: starts of the fused calls'
# size), 2 ranks, 200 steps.
# From the traces it prints:
#   queueing    member spans (FUSE_MEMBER) with no fused call inside: median
#   issue       fused spans (FUSED) by bytes, beside unfused starts of the
#               same bytes: the difference is allocation and packing
#   completion  per completion call holding one fused call: its end minus
#               the fused call's completion (the members' requests
#               completed and freed), fitted a + b x members
# Knobs: MPI (openmpi|mpich), PATTERNS ("B:S:BUF ..."), STEPS, BENCH_TMP.
set -u
B=$(cd "${1:-build}" && pwd) || exit 2
MPI=${MPI:-openmpi}
STEPS=${STEPS:-200}
PATTERNS=${PATTERNS:-"16:2048:32768 32:4096:131072 64:2048:131072 128:256:32768 256:256:65536 64:2048:8192 128:256:4096 16:16384:65536"}
W=${BENCH_TMP:-${TMPDIR:-/tmp}}/fuse-costs.$$
mkdir -p "$W" || exit 2
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none HYDRA_LAUNCHER=fork
export COLLSCOPE_LIBDIR=${COLLSCOPE_LIBDIR:-$B/interpose/.libs}
case $MPI in
  openmpi) launch=mpirun.openmpi prog=$B/tests/progs/nbloop_ompi ;;
  mpich) launch=mpirun.mpich prog=$B/tests/progs/nbloop_mpich ;;
  *) echo "fuse_costs: MPI=$MPI: openmpi or mpich" >&2; exit 2 ;;
esac
[ -x "$prog" ] || { echo "fuse_costs: $prog is not built" >&2; exit 2; }
CS=$B/analyzer/collscope
dbs=
for p in $PATTERNS; do
  nb=${p%%:*} r=${p#*:} by=${r%%:*} buf=${r#*:}
  nv=$((nb * by / buf))
  [ "$nv" -ge 1 ] || nv=1
  for m in u v f; do
    d=$W/$m-$nb-$by-$buf
    set -- env
    [ $m = f ] && set -- env COLLSCOPE_FUSE=1 COLLSCOPE_FUSE_THRESHOLD=65536 COLLSCOPE_FUSE_BUFFER=$buf
    n=$nb s=$by
    [ $m = v ] && n=$nv s=$buf
    "$@" "$CS" run -o "$d" -- "$launch" -np 2 "$prog" --steps "$STEPS" --buckets "$n" --bytes "$s" \
      --compute-us 500 > "$d.out" 2>&1 || { echo "fuse_costs: run failed: $(tail -3 "$d.out")" >&2; exit 1; }
    dbs="$dbs $d/trace.db"
    rm -rf "$d/logs"
  done
  echo "fuse_costs: $nb x $by B in calls of $buf B done" >&2
done
python3 - $dbs <<'PYEOF'
import bisect, sqlite3, statistics, sys
def med(v): return statistics.median(v) if v else float("nan")
def fit(pts):  # least squares y = a + b x
    n = len(pts); sx = sum(x for x, _ in pts); sy = sum(y for _, y in pts)
    sxx = sum(x * x for x, _ in pts); sxy = sum(x * y for x, y in pts)
    d = n * sxx - sx * sx
    b = (n * sxy - sx * sy) / d if d else 0.0
    return (sy - b * sx) / n, b
queue, issue, start, done = [], {}, {}, {}
for db in sys.argv[1:]:
    c = sqlite3.connect(db)
    sp = c.execute("SELECT id, rank, op, flags, bytes, raw_begin_ns, raw_end_ns, req FROM spans "
                   "WHERE op IN ('MPI_Iallreduce', 'MPI_Waitall') ORDER BY rank, raw_begin_ns").fetchall()
    fused = [s for s in sp if s[3] & 4]
    inside = {}
    for s in fused:
        inside.setdefault(s[1], []).append(s[5])
        issue.setdefault(s[4], []).append(s[6] - s[5])
    for s in sp:
        if s[2] != "MPI_Iallreduce":
            continue
        if s[3] & 256:
            L = inside.get(s[1], [])
            i = bisect.bisect_left(L, s[5])
            if not (i < len(L) and L[i] < s[6]):
                queue.append(s[6] - s[5])
        elif not s[3] & 4:
            start.setdefault(s[4], []).append(s[6] - s[5])
    byid = {s[0]: s for s in sp}
    freq = {(s[1], s[7]): s for s in fused}
    per = {}
    for rank, req, span, end in c.execute("SELECT rank, req, span, end_ns FROM completions"):
        per.setdefault(span, []).append((rank, req, end))
    for span, L in per.items():
        w = byid.get(span)
        f = [e for r, q, e in L if (r, q) in freq]
        if w and w[2] == "MPI_Waitall" and len(f) == 1:
            done.setdefault(len(L) - 1, []).append(w[6] - f[0])
print("queueing a member: median %.0f ns over %d member spans" % (med(queue), len(queue)))
print("%10s %14s %14s %10s" % ("bytes", "fused_ns", "unfused_ns", "extra_ns"))
pts = []
for b in sorted(set(issue) | set(start)):
    fi, st = med(issue.get(b, [])), med(start.get(b, []))
    print("%10d %14.0f %14.0f %10.0f" % (b, fi, st, fi - st))
    if b in issue and b in start:
        pts.append((b, fi - st))
if len(pts) >= 2:
    a, k = fit(pts)
    print("issue over an unfused start of the same bytes: %.0f ns + %.4f ns/B" % (a, k))
sp = [(b, med(v)) for b, v in start.items()]
if len(sp) >= 2:
    a, k = fit(sp)
    print("unfused start: %.0f ns + %.4f ns/B" % (a, k))
dp = [(n, med(v)) for n, v in sorted(done.items()) if len(v) >= 20]
for n, v in dp:
    print("completion after the fused call, %d members: median %.0f ns" % (n, v))
if len(dp) >= 2:
    a, k = fit(dp)
    print("completion: %.0f ns + %.1f ns per member" % (a, k))
PYEOF
