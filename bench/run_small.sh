#!/bin/sh
# run_small.sh: what `collscope run` costs on a small job, start to prompt
# (issue 34, item 2). A short job (examples/mpi_trainer_ompi, RANKS ranks,
# STEPS steps: a few hundred spans) runs bare and under `collscope run`
# (the trace built: logs, trace.db, call sites named), interleaved REPS
# times; then `collscope ingest --force` of the last trace alone, REPS
# times. Prints the medians and bests of each, the added seconds and the
# ratio traced / bare. Builds nothing.
#
#   sh bench/run_small.sh [BUILD_DIR]      (default ./build)
#
# Knobs: REPS (5), RANKS (2), STEPS (50).
set -u
B=${1:-./build}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "run_small: build dir ${1:-./build} not found" >&2; exit 2; }
COLLSCOPE="$B/analyzer/collscope"
PROG="$B/examples/mpi_trainer_ompi"
MPIRUN=$(command -v mpirun.openmpi || true)
[ -x "$COLLSCOPE" ] && [ -x "$PROG" ] && [ -n "$MPIRUN" ] || { echo "run_small: needs $COLLSCOPE, $PROG and mpirun.openmpi" >&2; exit 2; }
export COLLSCOPE_LIBDIR="${COLLSCOPE_LIBDIR:-$B/interpose/.libs}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent= OMP_NUM_THREADS=1
REPS=${REPS:-5}
RANKS=${RANKS:-2}
STEPS=${STEPS:-50}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-runsmall.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
say() { echo "$*" >&2; }
. "$(dirname "$0")/lib.sh"
CALC_FMT=%.3f
now() { date +%s.%N; }

say "== $RANKS ranks x $STEPS steps of $PROG: $REPS x (bare, collscope run)"
: >"$W/bare"; : >"$W/run"; : >"$W/ing"
_i=0
while [ $_i -lt "$REPS" ]; do
  _t0=$(now)
  "$MPIRUN" -np "$RANKS" "$PROG" --steps "$STEPS" >"$W/out" 2>&1 || { say "bare run failed:"; tail -n 5 "$W/out" >&2; }
  _t1=$(now)
  rm -rf "$W/trace"
  "$COLLSCOPE" run -o "$W/trace" -- "$MPIRUN" -np "$RANKS" "$PROG" --steps "$STEPS" >"$W/out" 2>"$W/err" || { say "traced run failed:"; tail -n 5 "$W/err" >&2; }
  _t2=$(now)
  calc "$_t1 - $_t0" >>"$W/bare"; echo >>"$W/bare"
  calc "$_t2 - $_t1" >>"$W/run"; echo >>"$W/run"
  say "   rep $_i: bare $(tail -n 1 "$W/bare") s, collscope run $(tail -n 1 "$W/run") s"
  _i=$((_i + 1))
done
_spans=$(sed -n 's/.* \([0-9][0-9]*\) spans.*/\1/p' "$W/err" | tail -n 1)
_i=0
while [ $_i -lt "$REPS" ]; do
  _t0=$(now)
  "$COLLSCOPE" ingest --force "$W/trace" >/dev/null 2>&1 || say "ingest failed"
  _t1=$(now)
  calc "$_t1 - $_t0" >>"$W/ing"; echo >>"$W/ing"
  _i=$((_i + 1))
done
_bm=$(median <"$W/bare"); _bb=$(best <"$W/bare")
_rm=$(median <"$W/run"); _rb=$(best <"$W/run")
_im=$(median <"$W/ing"); _ib=$(best <"$W/ing")
printf '%-40s %10s %10s\n' "figure (${_spans:-?} spans)" median best
printf '%-40s %10s %10s\n' "bare job, s" "$_bm" "$_bb"
printf '%-40s %10s %10s\n' "collscope run, trace built, s" "$_rm" "$_rb"
printf '%-40s %10s %10s\n' "added by collscope run, s" "$(calc "$_rm - $_bm")" "$(calc "$_rb - $_bb")"
printf '%-40s %10s %10s\n' "ratio run / bare" "$(calc "$_rm / $_bm")" "$(calc "$_rb / $_bb")"
printf '%-40s %10s %10s\n' "collscope ingest --force alone, s" "$_im" "$_ib"
