#!/bin/sh
# run-mpi-bench.sh: the MPI tracing benchmarks (bench/README.md). Each one
# measures a traced run against an untraced baseline in the same run,
# interleaving them, and prints the medians, the figure and PASS/MISS
# against its target. Builds nothing: run `make` in the build dir first.
#
#   sh bench/run-mpi-bench.sh [BUILD_DIR]      (default ./build)
#
# Knobs (environment): REPS (mpi_loop repetitions, 5), LOOP_N (calls per
# round, 1000000), LMP_REPS (LAMMPS pairs, 3), LMP_STEPS (10000),
# INGEST_RANKS (4), INGEST_SPANS (spans per rank, 1000000), INGEST_REPS (3),
# CG (0: no callgrind instruction counts in benchmark 1; 1 where valgrind is),
# MEM_SHORT / MEM_LONG (mpi_loop calls of the two memory runs, 2000000 and
# 20000000), ONLY (a list of benchmark numbers to run, e.g. "1 4"),
# BENCH_TMP (where the work files go, default $TMPDIR or /tmp).
set -u
B=${1:-./build}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "run-mpi-bench: build dir ${1:-./build} not found" >&2; exit 2; }
S=$(cd "$(dirname "$0")/.." && pwd)
COLLSCOPE="$B/analyzer/collscope"
[ -x "$COLLSCOPE" ] || { echo "run-mpi-bench: $COLLSCOPE not built (run make in $B)" >&2; exit 2; }
export COLLSCOPE_LIBDIR="${COLLSCOPE_LIBDIR:-$B/interpose/.libs}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_plm_rsh_agent= HYDRA_LAUNCHER=fork OMP_NUM_THREADS=1
REPS=${REPS:-5}
LOOP_N=${LOOP_N:-1000000}
LMP_REPS=${LMP_REPS:-3}
LMP_STEPS=${LMP_STEPS:-10000}
INGEST_RANKS=${INGEST_RANKS:-4}
INGEST_SPANS=${INGEST_SPANS:-1000000}
INGEST_REPS=${INGEST_REPS:-3}
MEM_SHORT=${MEM_SHORT:-2000000}
MEM_LONG=${MEM_LONG:-20000000}
ONLY=${ONLY:-1 2 3 4 5}
W=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/cs-bench.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
TABLE="$W/table"
: >"$TABLE"

say() { echo "$*" >&2; }
. "$(dirname "$0")/lib.sh"   # median, best, calc
now() { date +%s.%N; }
# verdict VALUE OP LIMIT: PASS or MISS (OP: le or ge).
verdict() { awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { ok = op == "le" ? v <= l : v >= l; print (v == v + 0 && ok) ? "PASS" : "MISS" }'; }
# row NAME VALUE UNIT TARGET VERDICT: one line of the final table.
row() { printf '%-46s %14s %-8s %-14s %s\n' "$1" "$2" "$3" "$4" "$5" >>"$TABLE"; }
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
# field KEY FILE: the value of a "key: value" line.
field() { sed -n "s/^$1: *//p" "$2" | head -n 1; }

# ---- 1. added cost per intercepted call (and 3. bytes per span) --------
# loop_once PROG MODE: one run, prints ns/call. MODE: bare, nocs, cs, wd
# (call sites and the hang watchdog, with a timeout no call reaches).
loop_once() {
  _p=$1; _m=$2; _d="$W/loop-$_m"
  rm -rf "$_d"
  case $_m in
    bare) "$_p" -n "$LOOP_N" -r 3 >"$W/loop.out" 2>&1 ;;
    nocs) COLLSCOPE_CALLSITES=0 COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$_d" LD_PRELOAD="$3" \
            "$_p" -n "$LOOP_N" -r 3 >"$W/loop.out" 2>&1 ;;
    cs)   COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$_d" LD_PRELOAD="$3" \
            "$_p" -n "$LOOP_N" -r 3 >"$W/loop.out" 2>&1 ;;
    wd)   COLLSCOPE_HANG_TIMEOUT=600 COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$_d" LD_PRELOAD="$3" \
            "$_p" -n "$LOOP_N" -r 3 >"$W/loop.out" 2>&1 ;;
  esac
  _v=$(field ns_per_call_median "$W/loop.out")
  [ -n "$_v" ] || { say "mpi_loop ($_m) failed:"; cat "$W/loop.out" >&2; _v=nan; }
  echo "$_v"
}
bench_loop() {
  _flavor=$1; _prog="$B/bench/mpi_loop_$2"; _so="$COLLSCOPE_LIBDIR/collscope-$_flavor.so"
  if [ ! -x "$_prog" ] || [ ! -r "$_so" ]; then
    row "1. $_flavor: added ns/call" "not built" "" "" "SKIP"; return
  fi
  say "== 1. $_flavor: 1-byte MPI_Allreduce, 1 rank, $REPS x (bare, no call sites, call sites, call sites + watchdog), $LOOP_N calls x 3 rounds"
  : >"$W/bare"; : >"$W/nocs"; : >"$W/cs"; : >"$W/wd"
  _i=0
  while [ $_i -lt "$REPS" ]; do
    for _m in bare nocs cs wd; do loop_once "$_prog" $_m "$_so" >>"$W/$_m"; done
    say "   rep $_i: bare $(tail -n 1 "$W/bare")  no-cs $(tail -n 1 "$W/nocs")  cs $(tail -n 1 "$W/cs")  cs+watchdog $(tail -n 1 "$W/wd") ns/call"
    _i=$((_i + 1))
  done
  _b=$(median <"$W/bare"); _n=$(median <"$W/nocs"); _c=$(median <"$W/cs"); _w=$(median <"$W/wd")
  _an=$(calc "$_n - $_b"); _ac=$(calc "$_c - $_b"); _aw=$(calc "$_w - $_c")
  row "1. $_flavor: bare MPI_Allreduce" "$_b" "ns/call" "" ""
  row "1. $_flavor: traced, COLLSCOPE_CALLSITES=0" "$_n" "ns/call" "" ""
  row "1. $_flavor: traced, call sites" "$_c" "ns/call" "" ""
  row "1. $_flavor: added, no call sites" "$_an" "ns/call" "<= 50" "$(verdict "$_an" le 50)"
  row "1. $_flavor: added, call sites" "$_ac" "ns/call" "<= 150" "$(verdict "$_ac" le 150)"
  row "1. $_flavor: traced, call sites + watchdog" "$_w" "ns/call" "" ""
  row "1. $_flavor: added by the watchdog" "$_aw" "ns/call" "<= 5" "$(verdict "$_aw" le 5)"
  # 3. The last traced run's log: bytes of log claimed per span.
  if [ "$_flavor" = openmpi ] && [ -x "$B/bench/log_gen" ]; then
    "$B/bench/log_gen" --stat "$W"/loop-cs/logs/*.cslog >"$W/stat.out" 2>&1
    _bps=$(field bytes_per_span "$W/stat.out")
    # Each span is one record; calibration, communicator and call-site
    # records and each thread's unfilled last chunk come on top, shown
    # apart as the whole log's bytes per span.
    _rs=$(field rec_size "$W/stat.out")
    row "3. bytes per span record" "${_rs:-nan}" "B/span" "<= 64" "$(verdict "${_rs:-nan}" le 64)"
    row "3. whole log incl. metadata (mpi_loop, $(field spans "$W/stat.out") spans)" "${_bps:-nan}" "B/span" "" ""
  fi
  rm -rf "$W/loop-nocs" "$W/loop-cs" "$W/loop-wd"
  # The watchdog's cost in instructions, which another job's load does not
  # change: callgrind's count of two runs of each kind, their difference
  # per call (the start-up cancels out).
  if [ "${CG:-1}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
    for _m in cs wd; do
      for _k in 20000 60000; do
        rm -rf "$W/cg"
        if [ $_m = wd ]; then _to=600; else _to=; fi
        COLLSCOPE_HANG_TIMEOUT=$_to COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$W/cg" LD_PRELOAD="$_so" \
          valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" "$_prog" -n $_k -r 1 -w 1 >"$W/cg.txt" 2>&1
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$W/cg.txt" >"$W/ir-$_m-$_k"
      done
    done
    _ic=$(calc "($(cat "$W/ir-cs-60000") - $(cat "$W/ir-cs-20000")) / 40000")
    _iw=$(calc "($(cat "$W/ir-wd-60000") - $(cat "$W/ir-wd-20000")) / 40000")
    row "1. $_flavor: instructions/call, call sites" "$_ic" "instr" "" ""
    row "1. $_flavor: instructions added by the watchdog" "$(calc "$_iw - $_ic")" "instr" "" ""
    rm -rf "$W/cg" "$W"/cg.out*
  fi
}
if want 1 || want 3; then
  bench_loop openmpi ompi
  want 1 && bench_loop mpich mpich
fi

# ---- 2. LAMMPS, 4 ranks, traced vs untraced wall time --------------------
LMP=${LMP:-/usr/bin/lmp}
MPIRUN=$(command -v mpirun.openmpi || true)
if want 2; then
  if [ ! -x "$LMP" ] || [ -z "$MPIRUN" ]; then
    row "2. LAMMPS slowdown" "no lmp" "" "<= 2 %" "SKIP"
  else
    say "== 2. LAMMPS LJ melt ($LMP_STEPS steps), 4 ranks, $LMP_REPS x (untraced, traced)"
    : >"$W/lu"; : >"$W/lt"; : >"$W/llu"; : >"$W/llt"
    _i=0
    while [ $_i -lt "$LMP_REPS" ]; do
      for _m in u t; do
        rm -rf "$W/lmp-trace"
        _t0=$(now)
        if [ $_m = u ]; then
          "$MPIRUN" -np 4 "$LMP" -in "$S/bench/lammps-bench.in" -var steps "$LMP_STEPS" -log none -nocite >"$W/lmp.out" 2>&1
        else
          # As `collscope run` starts it: logs only; the conversion to
          # SQLite comes after the job (timed below, apart).
          COLLSCOPE_DIR="$W/lmp-trace" COLLSCOPE_EXIT_CONVERT=0 LD_PRELOAD="$COLLSCOPE_LIBDIR/collscope-openmpi.so" \
            "$MPIRUN" -np 4 "$LMP" -in "$S/bench/lammps-bench.in" -var steps "$LMP_STEPS" -log none -nocite >"$W/lmp.out" 2>&1
        fi
        _rc=$?
        _t1=$(now)
        [ $_rc = 0 ] || { say "LAMMPS run failed ($_rc):"; tail -n 20 "$W/lmp.out" >&2; }
        calc "$_t1 - $_t0" >>"$W/l$_m"; echo >>"$W/l$_m"
        sed -n 's/^Loop time of \([0-9.e+-]*\).*/\1/p' "$W/lmp.out" | tail -n 1 >>"$W/ll$_m"
      done
      say "   rep $_i: untraced $(tail -n 1 "$W/lu") s (loop $(tail -n 1 "$W/llu")), traced $(tail -n 1 "$W/lt") s (loop $(tail -n 1 "$W/llt"))"
      _i=$((_i + 1))
    done
    if [ -d "$W/lmp-trace/logs" ]; then
      _sp=$("$B/bench/log_gen" --stat "$W"/lmp-trace/logs/*.cslog | sed -n 's/^spans: //p')
      _i0=$(now); "$COLLSCOPE" ingest "$W/lmp-trace" >/dev/null 2>&1; _i1=$(now)
      _ing=$(calc "$_i1 - $_i0")
    else
      _sp=nan; _ing=nan
    fi
    _u=$(median <"$W/lu"); _t=$(median <"$W/lt"); _lu=$(median <"$W/llu"); _lt=$(median <"$W/llt")
    _sl=$(calc "($_t / $_u - 1) * 100"); _sll=$(calc "($_lt / $_lu - 1) * 100")
    row "2. LAMMPS wall, untraced (median)" "$_u" "s" "" ""
    row "2. LAMMPS wall, traced (median; $_sp spans)" "$_t" "s" "" ""
    row "2. LAMMPS wall-time slowdown" "$_sl" "%" "<= 2 %" "$(verdict "$_sl" le 2)"
    row "2. LAMMPS 'Loop time' slowdown (info)" "$_sll" "%" "" ""
    row "2. then building trace.db after the job (info)" "$_ing" "s" "" ""
    rm -rf "$W/lmp-trace"
  fi
fi

# ---- 4. collscope ingest speed ---------------------------------------------
if want 4; then
  say "== 4. collscope ingest --force of $INGEST_RANKS synthetic logs x $INGEST_SPANS spans, $INGEST_REPS times"
  if "$B/bench/log_gen" -o "$W/ingest" -r "$INGEST_RANKS" -n "$INGEST_SPANS"; then
    : >"$W/ing"
    _i=0
    while [ $_i -lt "$INGEST_REPS" ]; do
      # The previous rep's ~1 GB of written pages go to disk first, off the
      # clock: each rep starts from the same state, not from its
      # predecessor's write-back.
      sync
      _t0=$(now)
      "$COLLSCOPE" ingest --force "$W/ingest" >"$W/ingest.out" 2>&1 || { say "ingest failed:"; cat "$W/ingest.out" >&2; }
      _t1=$(now)
      _spans=$(sed -n 's/.*logs ([0-9]* recovered after a crash), \([0-9]*\) spans.*/\1/p' "$W/ingest.out")
      calc "$_t1 - $_t0" >>"$W/ing"; echo >>"$W/ing"
      say "   rep $_i: $(tail -n 1 "$W/ing") s for ${_spans:-?} spans"
      _i=$((_i + 1))
    done
    _s=$(median <"$W/ing")
    _r=$(calc "${_spans:-0} / $_s")
    row "4. ingest time ($_spans spans, median)" "$_s" "s" "" ""
    row "4. ingest speed" "$_r" "spans/s" ">= 1000000" "$(verdict "$_r" ge 1000000)"
  else
    row "4. ingest speed" "log_gen failed" "" ">= 1000000" "MISS"
  fi
  rm -rf "$W/ingest"
fi

# ---- 5. peak memory of a long traced run -----------------------------------
# mem_once N MODE: peak RSS in kB (getrusage before MPI_Finalize) of mpi_loop.
mem_once() {
  rm -rf "$W/mem"
  if [ "$2" = bare ]; then
    "$B/bench/mpi_loop_ompi" -n "$1" -r 1 -w 1 >"$W/mem.out" 2>&1
  else
    COLLSCOPE_EXIT_CONVERT=0 COLLSCOPE_DIR="$W/mem" LD_PRELOAD="$COLLSCOPE_LIBDIR/collscope-openmpi.so" \
      "$B/bench/mpi_loop_ompi" -n "$1" -r 1 -w 1 >"$W/mem.out" 2>&1
  fi
  _v=$(field maxrss_kb "$W/mem.out")
  echo "${_v:-nan}"
  rm -rf "$W/mem"
}
if want 5; then
  if [ ! -x "$B/bench/mpi_loop_ompi" ]; then
    row "5. tool memory" "not built" "" "<= 64 MB" "SKIP"
  else
    say "== 5. peak RSS of mpi_loop, $MEM_SHORT and $MEM_LONG calls, untraced vs traced"
    _worst=0
    for _n in "$MEM_SHORT" "$MEM_LONG"; do
      _b=$(mem_once "$_n" bare); _t=$(mem_once "$_n" traced)
      _d=$(calc "($_t - $_b) / 1024")
      say "   $_n calls: untraced $_b kB, traced $_t kB"
      row "5. peak RSS untraced, $_n calls" "$(calc "$_b / 1024")" "MB" "" ""
      row "5. peak RSS traced, $_n calls" "$(calc "$_t / 1024")" "MB" "" ""
      row "5. tool memory (difference), $_n calls" "$_d" "MB" "<= 64 MB" "$(verdict "$_d" le 64)"
      _worst=$_d
    done
    # The whole process, with the per-rank conversion at exit (in process).
    if [ -x /usr/bin/time ]; then
      rm -rf "$W/mem"
      COLLSCOPE_DIR="$W/mem" LD_PRELOAD="$COLLSCOPE_LIBDIR/collscope-openmpi.so" \
        /usr/bin/time -f 'time_maxrss_kb: %M' "$B/bench/mpi_loop_ompi" -n "$MEM_SHORT" -r 1 -w 1 >"$W/mem.out" 2>&1
      _all=$(field time_maxrss_kb "$W/mem.out")
      /usr/bin/time -f 'time_maxrss_kb: %M' "$B/bench/mpi_loop_ompi" -n "$MEM_SHORT" -r 1 -w 1 >"$W/mem.out" 2>&1
      _bare=$(field time_maxrss_kb "$W/mem.out")
      _d=$(calc "(${_all:-0} - ${_bare:-0}) / 1024")
      row "5. incl. exit conversion, $MEM_SHORT calls" "$_d" "MB" "<= 64 MB" "$(verdict "$_d" le 64)"
      rm -rf "$W/mem"
    fi
  fi
fi

echo
printf '%-46s %14s %-8s %-14s %s\n' "benchmark" "figure" "unit" "target" "verdict"
printf '%-46s %14s %-8s %-14s %s\n' "---------" "------" "----" "------" "-------"
cat "$TABLE"
grep -q ' MISS$' "$TABLE" && exit 1
exit 0
