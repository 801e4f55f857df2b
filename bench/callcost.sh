#!/bin/sh
# callcost.sh: what the preload adds to one MPI call (bench/README.md,
# benchmark 1; issue 34). One rank loops on a 1-byte MPI_Allreduce
# (bench/mpi_loop.c) in four ways, interleaved REPS times in one run:
#   bare    no preload
#   limit   no preload; the loop itself reads two timestamps and stores a
#           64-byte record around every call: the floor of any tracer
#   nocs    the preload, COLLSCOPE_CALLSITES=0
#   cs      the preload with call sites (the default)
# for Open MPI and MPICH, each as a singleton and under its own launcher
# with -np 1. Printed: ns a call (median over the reps of each run's
# median round, and the best round of all), the added ns (traced − bare,
# from the medians and from the bests), how far each is from the limit,
# the CPU time a call of the calling thread and of the whole process
# (best rounds, bench/mpi_loop.c; waits for a busy CPU left out, the
# preload's own prefault thread counted in the process's), and, where
# valgrind is, the instructions a call of each kind (callgrind,
# two runs of CG_N1 and CG_N2 calls, their difference per call: a figure
# another job's load does not change). Builds nothing.
#
#   sh bench/callcost.sh [BUILD_DIR]      (default ./build)
#
# Knobs: REPS (5), LOOP_N (calls a round, 500000), ROUNDS (5 a run),
# MPIS ("openmpi mpich"), LAUNCH ("single mpirun"), CG (1: count
# instructions where valgrind is; 0: not), CG_N1/CG_N2 (20000/60000).
set -u
B=${1:-./build}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "callcost: build dir ${1:-./build} not found" >&2; exit 2; }
LIBDIR=${COLLSCOPE_LIBDIR:-$B/interpose/.libs}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent= HYDRA_LAUNCHER=fork OMP_NUM_THREADS=1
REPS=${REPS:-5}
LOOP_N=${LOOP_N:-500000}
ROUNDS=${ROUNDS:-5}
MPIS=${MPIS:-openmpi mpich}
LAUNCH=${LAUNCH:-single mpirun}
CG_N1=${CG_N1:-20000}
CG_N2=${CG_N2:-60000}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-callcost.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
say() { echo "$*" >&2; }
. "$(dirname "$0")/lib.sh"
CALC_FMT=%.1f
field() { sed -n "s/^$1: *//p" "$2" | head -n 1; }

# run FLAVOR PROG LAUNCH MODE [N ROUNDS WARMUP]: one run; writes $W/out.
run() {
  _fl=$1 _p=$2 _l=$3 _m=$4 _n=${5:-$LOOP_N} _r=${6:-$ROUNDS} _w=${7:-100000}
  _so="$LIBDIR/collscope-$_fl.so"
  set -- "$_p" -n "$_n" -r "$_r" -w "$_w"
  [ "$_m" = limit ] && set -- "$@" -l
  if [ "$_l" = mpirun ]; then
    if [ "$_fl" = openmpi ]; then set -- mpirun.openmpi -np 1 "$@"; else set -- mpiexec.mpich -np 1 "$@"; fi
  fi
  rm -rf "$W/trace"
  case $_m in
    bare | limit) "$@" >"$W/out" 2>&1 ;;
    nocs) COLLSCOPE_CALLSITES=0 COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$W/trace" LD_PRELOAD="$_so" "$@" >"$W/out" 2>&1 ;;
    cs) COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$W/trace" LD_PRELOAD="$_so" "$@" >"$W/out" 2>&1 ;;
  esac
}

printf '%-8s %-7s %-6s %8s %8s %9s %10s %10s %8s %9s %9s %10s %10s %11s\n' mpi launch kind med_ns best_ns added_med added_best from_limit cpu_ns cpu_added proc_cpu proc_added instr/call instr_added
for _fl in $MPIS; do
  case $_fl in openmpi) _prog="$B/bench/mpi_loop_ompi" ;; mpich) _prog="$B/bench/mpi_loop_mpich" ;; *) continue ;; esac
  if [ ! -x "$_prog" ] || [ ! -r "$LIBDIR/collscope-$_fl.so" ]; then
    say "callcost: $_fl not built, skipped"; continue
  fi
  # Instructions a call (singleton; launcher runs count the same calls).
  for _m in bare nocs cs; do
    _ir=nan
    if [ "${CG:-1}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
      _a=; _b=
      for _k in "$CG_N1" "$CG_N2"; do
        rm -rf "$W/trace"
        _so="$LIBDIR/collscope-$_fl.so"
        case $_m in
          bare) valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" "$_prog" -n "$_k" -r 1 -w 1 >"$W/cg.txt" 2>&1 ;;
          nocs) COLLSCOPE_CALLSITES=0 COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$W/trace" LD_PRELOAD="$_so" \
                  valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" "$_prog" -n "$_k" -r 1 -w 1 >"$W/cg.txt" 2>&1 ;;
          cs) COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$W/trace" LD_PRELOAD="$_so" \
                valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" "$_prog" -n "$_k" -r 1 -w 1 >"$W/cg.txt" 2>&1 ;;
        esac
        _v=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$W/cg.txt")
        if [ -z "$_a" ]; then _a=$_v; else _b=$_v; fi
      done
      [ -n "$_a" ] && [ -n "$_b" ] && _ir=$(calc "($_b - $_a) / ($CG_N2 - $CG_N1)")
    fi
    echo "$_ir" >"$W/ir-$_fl-$_m"
  done
  echo "nan" >"$W/ir-$_fl-limit"
  for _l in $LAUNCH; do
    if [ "$_l" = mpirun ]; then
      case $_fl in openmpi) _ln=mpirun.openmpi ;; *) _ln=mpiexec.mpich ;; esac
      command -v "$_ln" >/dev/null 2>&1 || { say "callcost: no $_ln, $_fl under a launcher skipped"; continue; }
    fi
    say "== $_fl, $_l: $REPS x (bare, limit, no call sites, call sites), $LOOP_N calls x $ROUNDS rounds"
    for _m in bare limit nocs cs; do : >"$W/med-$_m"; : >"$W/min-$_m"; : >"$W/cpu-$_m"; : >"$W/pcpu-$_m"; done
    _i=0
    while [ $_i -lt "$REPS" ]; do
      for _m in bare limit nocs cs; do
        run "$_fl" "$_prog" "$_l" "$_m"
        _v=$(field ns_per_call_median "$W/out"); _b=$(field ns_per_call_min "$W/out")
        if [ -z "$_v" ]; then say "callcost: $_fl $_l $_m failed:"; tail -n 5 "$W/out" >&2; _v=nan; _b=nan; fi
        echo "$_v" >>"$W/med-$_m"; echo "$_b" >>"$W/min-$_m"
        _c=$(field cpu_ns_per_call_min "$W/out"); _pc=$(field proc_cpu_ns_per_call_min "$W/out")
        echo "${_c:-nan}" >>"$W/cpu-$_m"; echo "${_pc:-nan}" >>"$W/pcpu-$_m"
      done
      say "   rep $_i: bare $(tail -n 1 "$W/med-bare")  limit $(tail -n 1 "$W/med-limit")  no-cs $(tail -n 1 "$W/med-nocs")  cs $(tail -n 1 "$W/med-cs") ns/call"
      _i=$((_i + 1))
    done
    _bm=$(median <"$W/med-bare"); _bb=$(best <"$W/min-bare")
    _lm=$(median <"$W/med-limit"); _lb=$(best <"$W/min-limit")
    _cb=$(best <"$W/cpu-bare"); _pb=$(best <"$W/pcpu-bare")
    for _m in bare limit nocs cs; do
      _mm=$(median <"$W/med-$_m"); _mb=$(best <"$W/min-$_m")
      _mc=$(best <"$W/cpu-$_m"); _mp=$(best <"$W/pcpu-$_m")
      if [ "$_m" = bare ]; then
        _am=-; _ab=-; _fm=-; _ac=-; _ap=-
      else
        _ac=$(calc "$_mc - $_cb"); _ap=$(calc "$_mp - $_pb")
        _am=$(calc "$_mm - $_bm"); _ab=$(calc "$_mb - $_bb")
        if [ "$_m" = limit ]; then _fm=-; else _fm=$(calc "$_mm - $_lm"); fi
      fi
      _ir=$(cat "$W/ir-$_fl-$_m"); _ia=-
      case $_m in nocs | cs) _ia=$(calc "$_ir - $(cat "$W/ir-$_fl-bare")") ;; esac
      printf '%-8s %-7s %-6s %8s %8s %9s %10s %10s %8s %9s %9s %10s %10s %11s\n' "$_fl" "$_l" "$_m" "$_mm" "$_mb" "$_am" "$_ab" "$_fm" "$_mc" "$_ac" "$_mp" "$_ap" "$_ir" "$_ia"
    done
  done
done
