#!/bin/sh
# fuse_shapes.sh: apply mode against the program's own timers, on program
# shapes that are not the example trainer (issue 32's floors table).
#
#   sh bench/fuse_shapes.sh [BUILD_DIR]          (default ./build)
#
# The program is tests/progs/nbloop: per step 500 us of compute, then B
# allreduces of S bytes, blocking (MPI_Allreduce) or nonblocking and
# completed by one MPI_Waitall, an MPI_Wait per request, MPI_Testall
# polling or MPI_Test polling of each request; it times itself (mpi_us: the
# time around its MPI calls, step_us: step start to step start, medians
# over its steps) and prints a checksum of every result.
#
# For each MPI, rank count and shape, REPS rounds of three interleaved runs:
#   bare    the program alone;
#   traced  under `collscope run`;
#   fused   traced with apply mode as the first traced run's report proposes
#           (its COLLSCOPE_FUSE_* settings), or COLLSCOPE_FUSE=1 alone where
#           it proposes nothing for apply mode.
# Each figure is the median over the REPS rounds of the median over ranks of
# the program's own mpi_us_med and step_us_med. Printed per shape:
#   pred     the first traced run's proposal: estimated gain, % of the step
#            ("-": none; its declined line is printed below the table);
#   fu/tr    fused step / traced step (below 1: apply mode wins);
#   verdict  check-estimate on each round's traced/fused pair: C confirmed,
#            N not confirmed, - nothing predicted, X steps not comparable;
#   sums     whether every fused run's checksums equal the unfused runs';
#   never    fused step no worse than traced by more than 2 % ("ok"/"SLOWER").
# Knobs: MPI ("openmpi mpich"), RANKS ("2 4"), REPS (5), STEPS (200),
# SHAPES ("name:B:S:wait ...", wait = blocking|all|each|test|testeach),
# COMPUTE_US (500), BENCH_TMP. Exit status 1 when a run fails.
set -u
B=$(cd "${1:-build}" && pwd) || exit 2
MPIS=${MPI:-"openmpi mpich"}
RANKS=${RANKS:-"2 4"}
REPS=${REPS:-5}
STEPS=${STEPS:-200}
COMPUTE_US=${COMPUTE_US:-500}
SHAPES=${SHAPES:-"nb64x2k:64:2048:all nb256x256:256:256:test nb16x256k:16:262144:each bl128x512:128:512:blocking \
nb128x256:128:256:all nb32x16k:32:16384:testeach nb16x64k:16:65536:all bl16x64k:16:65536:blocking \
nb256x1k:256:1024:each"}
W=${BENCH_TMP:-${TMPDIR:-/tmp}}/fuse-shapes.$$
mkdir -p "$W" || exit 2
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none HYDRA_LAUNCHER=fork
export COLLSCOPE_LIBDIR=${COLLSCOPE_LIBDIR:-$B/interpose/.libs}
CS=$B/analyzer/collscope
[ -x "$CS" ] || { echo "fuse_shapes: $CS is not built" >&2; exit 2; }

# fig FILE FIELD: the median over the ranks of the program's FIELD
fig() {
  grep -o "^NBLOOP rank=[0-9]* .*" "$1" | grep -o " $2=[0-9.]*" | sed "s/.*=//" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
. "$(dirname "$0")/lib.sh"
sums() { grep -o "checksum=[0-9a-f]*" "$1" | sort -u | tr '\n' ' '; }

status=0
printf '%-8s %2s %-10s %9s %9s %9s %9s %9s %9s %7s %6s %-6s %-5s %s\n' MPI np shape bare_mpi bare_step tr_mpi \
  tr_step fu_mpi fu_step pred fu/tr verdict sums never > "$W/table"
: > "$W/notes"
for mpi in $MPIS; do
  case $mpi in
    openmpi) launch=mpirun.openmpi prog=$B/tests/progs/nbloop_ompi ;;
    mpich) launch=mpirun.mpich prog=$B/tests/progs/nbloop_mpich ;;
    *) echo "fuse_shapes: MPI=$mpi: openmpi or mpich" >&2; exit 2 ;;
  esac
  [ -x "$prog" ] || { echo "fuse_shapes: $prog is not built" >&2; exit 2; }
  command -v "$launch" > /dev/null || { echo "fuse_shapes: $launch not found: $mpi left out" >&2; continue; }
  for np in $RANKS; do
    for sh in $SHAPES; do
      IFS=: read -r name nb by wt <<EOF
$sh
EOF
      set -- --steps "$STEPS" --buckets "$nb" --bytes "$by" --compute-us "$COMPUTE_US"
      if [ "$wt" = blocking ]; then set -- "$@" --blocking; else set -- "$@" --wait "$wt"; fi
      k=$W/$mpi-$np-$name
      env_f="COLLSCOPE_FUSE=1" pred=- verdicts=
      for r in $(seq "$REPS"); do
        "$launch" -np "$np" "$prog" "$@" > "$k.bare$r" 2>&1 || { echo "fuse_shapes: bare run failed: $(tail -2 "$k.bare$r")" >&2; exit 1; }
        "$CS" run -o "$k.t$r" -- "$launch" -np "$np" "$prog" "$@" > "$k.tr$r" 2>&1 ||
          { echo "fuse_shapes: traced run failed: $(tail -2 "$k.tr$r")" >&2; exit 1; }
        if [ "$r" = 1 ]; then
          "$CS" report "$k.t1" --format json -o "$k.json" 2> /dev/null
          out=$(python3 - "$k.json" <<'PYEOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print("COLLSCOPE_FUSE=1|-|the report failed"); sys.exit(0)
f = [p for p in d.get("proposals", []) if p["kind"] == "fusion"]
if f:
    p = f[0]
    share = 100.0 * p["gain_ns"] / p["step_ns"] if p.get("step_ns") else 0
    print("%s|%.1f%%|%s" % (p.get("env") or "COLLSCOPE_FUSE=1", share, p.get("env") and "proposed: " + p["env"] or "proposed for the program's own buckets"))
else:
    dec = "; ".join(d.get("proposals_declined", [])) or "no fusion candidate"
    print("COLLSCOPE_FUSE=1|-|%s" % dec)
PYEOF
)
          env_f=${out%%|*} rest=${out#*|} pred=${rest%%|*}
          echo "$mpi $np $name: ${rest#*|}" >> "$W/notes"
        fi
        env $env_f "$CS" run -o "$k.f$r" -- "$launch" -np "$np" "$prog" "$@" > "$k.fu$r" 2>&1 ||
          { echo "fuse_shapes: fused run failed: $(tail -2 "$k.fu$r")" >&2; exit 1; }
        "$CS" check-estimate "$k.t$r" "$k.f$r" > "$k.ce$r" 2>&1
        case $? in 0) v=C ;; 1) v=N ;; 2) v=- ;; 3) v=X ;; *) v=? ;; esac
        verdicts=$verdicts$v
        for m in bare tr fu; do
          echo "$(fig "$k.$m$r" mpi_us_med) $(fig "$k.$m$r" step_us_med)" >> "$k.$m"
        done
        rm -rf "$k.t$r" "$k.f$r"
        echo "fuse_shapes: $mpi $np ranks $name round $r/$REPS" >&2
      done
      ref=$(sums "$k.tr1")
      same=yes
      for r in $(seq "$REPS"); do
        for m in bare tr fu; do [ "$(sums "$k.$m$r")" = "$ref" ] || same=NO; done
      done
      [ -n "$ref" ] || same=none
      for m in bare tr fu; do
        eval "${m}_mpi=\$(cut -d' ' -f1 "$k.$m" | median) ${m}_step=\$(cut -d' ' -f2 "$k.$m" | median)"
      done
      ratio=$(awk -v f="$fu_step" -v t="$tr_step" 'BEGIN { printf "%.3f", (t > 0) ? f / t : 0 }')
      never=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.02) ? "ok" : "SLOWER" }')
      printf '%-8s %2s %-10s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %7s %6s %-6s %-5s %s\n' "$mpi" "$np" "$name" \
        "$bare_mpi" "$bare_step" "$tr_mpi" "$tr_step" "$fu_mpi" "$fu_step" "$pred" "$ratio" "$verdicts" "$same" \
        "$never" >> "$W/table"
      [ "$never" = ok ] && [ "$same" != NO ] || status=1
    done
  done
done
cat "$W/table"
echo
echo "(us; medians of $REPS interleaved rounds of the program's own medians over $STEPS steps)"
echo "apply mode's settings and the first traced run's proposal or why none:"
sed 's/^/  /' "$W/notes"
never_bad=$(grep -c ' SLOWER$' "$W/table")
echo "never slower (fused step <= traced step x 1.02): $(($(wc -l < "$W/table") - 1 - never_bad)) of $(($(wc -l < "$W/table") - 1)) shapes"
exit $status
