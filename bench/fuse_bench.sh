#!/bin/sh
# fuse_bench.sh: what apply mode (COLLSCOPE_FUSE=1) wins on the example
# trainer with 64 small nonblocking allreduces per step.
#
#   sh bench/fuse_bench.sh [BUILD_DIR]          (default ./build)
#
# For each rank count in RANKS, REPS pairs of traced runs (unfused, fused;
# interleaved) of `mpi_trainer --buckets 64 --nonblocking`. From each trace:
#   comm   time in MPI calls per step: the median over steps of the mean
#          over ranks of the summed duration of its calls in that step
#          (steps are the trainer's MPI_Pcontrol markers);
#   step   the median step time (marker to marker, mean over ranks).
# Prints the medians over the repetitions, the ratio unfused/fused of the
# communication time (target: >= 3) and the measured gain per step; with
# collscope check-estimate, also the predicted gain and its error.
# Knobs: RANKS ("4 2"), REPS (5), STEPS (300), MPI (openmpi|mpich),
# TRAINER_ARGS (extra trainer options), BENCH_TMP.
set -u
B=$(cd "${1:-build}" && pwd) || exit 2
RANKS=${RANKS:-"4 2"}
REPS=${REPS:-5}
STEPS=${STEPS:-300}
MPI=${MPI:-openmpi}
W=${BENCH_TMP:-${TMPDIR:-/tmp}}/fuse-bench.$$
mkdir -p "$W" || exit 2
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none HYDRA_LAUNCHER=fork
# Ranks bound to cores (2 a core when oversubscribed): steadier than unbound.
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-core}
export COLLSCOPE_LIBDIR=${COLLSCOPE_LIBDIR:-$B/interpose/.libs}
case $MPI in
  openmpi) launch=mpirun.openmpi tr=$B/examples/mpi_trainer_ompi ;;
  mpich) launch=mpirun.mpich tr=$B/examples/mpi_trainer_mpich ;;
  *) echo "fuse_bench: MPI=$MPI: openmpi or mpich" >&2; exit 2 ;;
esac
[ -x "$tr" ] || { echo "fuse_bench: $tr is not built" >&2; exit 2; }
CS=$B/analyzer/collscope

# per_step DB: "comm_us step_us"
per_step() {
  sqlite3 -batch -noheader -separator ' ' "$1" "
    WITH m AS (SELECT rank, begin_ns b, ROW_NUMBER() OVER (PARTITION BY rank ORDER BY begin_ns) k
               FROM spans WHERE op = 'MPI_Pcontrol'),
    w AS (SELECT m1.rank, m1.k, m1.b, m2.b e FROM m m1 JOIN m m2 ON m2.rank = m1.rank AND m2.k = m1.k + 1),
    c AS (SELECT w.k, w.rank, w.e - w.b len,
                 (SELECT coalesce(sum(s.dur_ns), 0) FROM spans s WHERE s.rank = w.rank AND s.begin_ns >= w.b
                  AND s.begin_ns < w.e AND s.op != 'MPI_Pcontrol' AND (s.flags & 4) = 0) comm
          FROM w),
    st AS (SELECT k, avg(comm) comm, avg(len) len FROM c GROUP BY k),
    n AS (SELECT count(*) / 2 h FROM st)
    SELECT (SELECT comm FROM st ORDER BY comm LIMIT 1 OFFSET (SELECT h FROM n)) / 1e3,
           (SELECT len FROM st ORDER BY len LIMIT 1 OFFSET (SELECT h FROM n)) / 1e3"
}

. "$(dirname "$0")/lib.sh"

status=0
printf '%-6s %-6s %12s %12s %12s %12s %8s %10s\n' ranks MPI comm_unf_us comm_fus_us step_unf_us step_fus_us ratio verdict
for n in $RANKS; do
  : > "$W/u.$n"; : > "$W/f.$n"; : > "$W/est.$n"
  for r in $(seq "$REPS"); do
    for m in 0 1; do
      d=$W/t$m.$n.$r
      COLLSCOPE_FUSE=$m "$CS" run -o "$d" -- "$launch" -np "$n" "$tr" --steps "$STEPS" --buckets 64 \
        --nonblocking ${TRAINER_ARGS:-} > "$d.out" 2>&1 || { echo "fuse_bench: run failed: $(tail -3 "$d.out")" >&2; exit 1; }
      per_step "$d/trace.db" >> "$W/$( [ $m = 0 ] && echo u || echo f ).$n"
    done
    if "$CS" check-estimate --help > /dev/null 2>&1; then
      "$CS" check-estimate "$W/t0.$n.$r" "$W/t1.$n.$r" > "$W/est.$n.$r" 2>&1
      cat "$W/est.$n.$r" >> "$W/est.$n"
    fi
    rm -rf "$W/t0.$n.$r" "$W/t1.$n.$r"
    echo "fuse_bench: $n ranks, repetition $r/$REPS done" >&2
  done
  cu=$(cut -d' ' -f1 "$W/u.$n" | median); cf=$(cut -d' ' -f1 "$W/f.$n" | median)
  su=$(cut -d' ' -f2 "$W/u.$n" | median); sf=$(cut -d' ' -f2 "$W/f.$n" | median)
  ratio=$(awk -v a="$cu" -v b="$cf" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
  v=PASS
  awk -v x="$ratio" 'BEGIN { exit !(x >= 3) }' || { v=MISS; status=1; }
  printf '%-6s %-6s %12.1f %12.1f %12.1f %12.1f %8s %10s\n' "$n" "$MPI" "$cu" "$cf" "$su" "$sf" "$ratio" "$v"
  echo "  per repetition (comm_us step_us): unfused $(tr '\n' ';' < "$W/u.$n") fused $(tr '\n' ';' < "$W/f.$n")"
  echo "  measured gain per step (median step times): $(awk -v a="$su" -v b="$sf" 'BEGIN { printf "%.1f us", a - b }')"
  if [ -s "$W/est.$n" ]; then
    echo "  collscope check-estimate, per repetition:"
    grep -iE 'predicted|measured|error' "$W/est.$n" | sed 's/^/    /'
  fi
done
exit $status
