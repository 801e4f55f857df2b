#!/bin/sh
# whatif_bench.sh: how closely the analysis's estimates match real runs of
# the example trainer, figures that depend on the machine's load and so are
# measured here, not asserted by make check (whose tests check the same
# code on synthetic traces of known answers: tests/analysis/whatif.sh,
# align_strict.sh, costmodel.sh).
#
#   sh bench/whatif_bench.sh [BUILD_DIR]          (default ./build)
#
# Each repetition (REPS, default 3) traces, under Open MPI with 4 ranks:
#   nb64   --buckets 64 --nonblocking, 200 steps
#   blk    --buckets 64, 30 steps
#   dly    as blk, rank 1 sleeping 5 ms every step
# and prints for each the what-if replay with the cost models against the
# measured median step (model_error, in %; make check asserted 5 % once);
# for dly the gain "stragglers on time" predicts against the one measured
# (dly's median step - blk's; asserted 25 % once); and, on a run of 300
# steps with the halo exchange and clock offsets of up to +-50 ms injected
# (COLLSCOPE_TEST_CLOCK_OFFSET, CLOCK_MONOTONIC), the largest error of the
# recovered offsets over the ranks (4 ranks under Open MPI, 2 under MPICH;
# asserted 5 us once). Then the median of each figure over the repetitions.
# Exit status 0 unless a run fails. Knobs: REPS, BENCH_TMP.
set -u
B=$(cd "${1:-build}" && pwd) || exit 2
REPS=${REPS:-3}
W=${BENCH_TMP:-${TMPDIR:-/tmp}}/whatif-bench.$$
mkdir -p "$W" || exit 2
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none HYDRA_LAUNCHER=fork
export COLLSCOPE_LIBDIR=${COLLSCOPE_LIBDIR:-$B/interpose/.libs}
CS=$B/analyzer/collscope
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "whatif_bench: $PY is not installed" >&2; exit 2; }
[ -x "$B/examples/mpi_trainer_ompi" ] || { echo "whatif_bench: $B/examples/mpi_trainer_ompi is not built" >&2; exit 2; }

# trace NAME LAUNCHER NP TRAINER ARGS...: traced into $W/NAME, JSON report $W/NAME.json
trace() {
  _n=$1 _l=$2 _np=$3 _tr=$4
  shift 4
  "$CS" run -o "$W/$_n" -- "$_l" -np "$_np" "$_tr" "$@" > "$W/$_n.out" 2>&1 &&
    "$CS" report "$W/$_n" --format json -o "$W/$_n.json" 2> /dev/null ||
    { echo "whatif_bench: $_n failed: $(tail -n 3 "$W/$_n.out")" >&2; exit 1; }
}
# field NAME EXPR: a Python expression over the report d of NAME
field() { "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$W/$1.json" "$2"; }
. "$(dirname "$0")/lib.sh"
# offset_error NAME INJECTED: the largest |error| of the recovered offsets, in us
offset_error() {
  "$PY" -c 'import json, sys
inj = {int(r): int(ns) for r, ns in (x.split(":") for x in sys.argv[2].split(","))}
print("%.1f" % max(abs(c["offset_ns"] + inj[c["rank"]] - inj[0]) / 1e3 for c in json.load(open(sys.argv[1]))["clocks"]))' \
    "$W/$1.json" "$2"
}

OMPI=$(command -v mpirun.openmpi) MPICH=$(command -v mpirun.mpich)
INJ="0:+50000000,1:-50000000,2:+20000000,3:-35000000"
: > "$W/figures"
printf '%-4s %10s %10s %10s %12s %12s %10s %12s %12s\n' rep nb64_err% blk_err% dly_err% ontime_pred ontime_meas ontime_err% align_ompi_us align_mpich_us
for r in $(seq "$REPS"); do
  trace nb64 "$OMPI" 4 "$B/examples/mpi_trainer_ompi" --steps 200 --buckets 64 --nonblocking
  trace blk "$OMPI" 4 "$B/examples/mpi_trainer_ompi" --steps 30 --buckets 64
  trace dly "$OMPI" 4 "$B/examples/mpi_trainer_ompi" --steps 30 --buckets 64 --delay-us 5000 --delay-ranks 1
  e1=$(field nb64 '"%.2f" % (100 * d["whatif"]["model_error"])')
  e2=$(field blk '"%.2f" % (100 * d["whatif"]["model_error"])')
  e3=$(field dly '"%.2f" % (100 * d["whatif"]["model_error"])')
  pred=$(field dly 'd["whatif"]["ontime_gain_ns"]')
  meas=$(($(field dly 'd["steps"]["median_ns"]') - $(field blk 'd["steps"]["median_ns"]')))
  oerr=$(awk -v p="$pred" -v m="$meas" 'BEGIN { printf "%.1f", m ? 100 * (p > m ? p - m : m - p) / (m < 0 ? -m : m) : 0 }')
  ao=nan am=nan
  COLLSCOPE_CLOCK=monotonic COLLSCOPE_TEST_CLOCK_OFFSET="$INJ" trace align_ompi "$OMPI" 4 \
    "$B/examples/mpi_trainer_ompi" --steps 300 --compute-us 500 --buckets 2 --halo
  ao=$(offset_error align_ompi "$INJ")
  if [ -n "$MPICH" ] && [ -x "$B/examples/mpi_trainer_mpich" ]; then
    COLLSCOPE_CLOCK=monotonic COLLSCOPE_TEST_CLOCK_OFFSET="$INJ" trace align_mpich "$MPICH" 2 \
      "$B/examples/mpi_trainer_mpich" --steps 300 --compute-us 500 --buckets 2 --halo
    am=$(offset_error align_mpich "0:+50000000,1:-50000000")
  fi
  printf '%-4s %10s %10s %10s %12s %12s %10s %12s %12s\n' "$r" "$e1" "$e2" "$e3" "$pred" "$meas" "$oerr" "$ao" "$am" |
    tee -a "$W/figures"
  rm -rf "$W"/nb64 "$W"/blk "$W"/dly "$W"/align_*
done
printf '%-4s' median
for c in 2 3 4 5 6 7 8 9; do
  printf ' %10s' "$(awk -v c=$c '{ print $c }' "$W/figures" | median)"
done
echo
