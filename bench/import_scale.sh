#!/bin/sh
# import_scale.sh: `collscope import` + `collscope report` of generated
# PyTorch profiler (Kineto) jobs of N million spans against HTA's load and
# temporal breakdown of the same files (issue 30, item 4: collscope 5x
# faster and 3x leaner than HTA, 1 M spans a second per core). Not part of
# make check. Usage (from the build directory):
#   sh SRC/bench/import_scale.sh [MSPANS...]      default "1 4"
# Each job: bench/kineto_gen --launches, 8 ranks (an NCCL-style job: a
# top-level CPU op with 40 children and 40 GEMM kernels a step, each with
# its cudaLaunchKernel, an allreduce with its NCCL kernel; about 101 MB of
# JSON per rank per million spans of the job). Printed per job: the spans,
# the JSON size; import and report (a first report: the analysis and the
# report) wall seconds, CPU seconds (all processes), spans per wall second
# and per CPU second, the maximum resident memory (the largest process);
# HTA's (PyPI HolisticTraceAnalysis, from $CS_VENV, default
# /work/main/.venv) TraceAnalysis load and get_temporal_breakdown seconds
# (timed inside its process; Python's start and HTA's own import left
# out), its CPU seconds and maximum resident memory; and the ratios HTA /
# collscope of wall time, CPU time and memory. HTA runs under ulimit -v
# ${HTA_VMEM_MB:-8000} MB per process (its readers are several processes):
# where it cannot load the files within it, the line says so; NO_HTA=1
# leaves HTA out (a 16 M-span job is 13 GB of JSON). The figures
# and what they mean: docs/interop.md (Import, Memory and speed).
set -u
B=${B:-$(pwd)}
S=$(cd "$(dirname "$0")/.." && pwd)
GEN=$B/bench/kineto_gen
CS=$B/analyzer/collscope
PY=${CS_VENV:-/work/main/.venv}/bin/python3
[ -x "$GEN" ] && [ -x "$CS" ] || { echo "build first: $GEN, $CS"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 1; }
HTA=1
[ -n "${NO_HTA:-}" ] && HTA=0
[ $HTA = 0 ] || "$PY" -c "import hta.trace_analysis" 2>/dev/null || { echo "no HTA in $PY: its columns left empty"; HTA=0; }
SIZES=${*:-1 4}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-iscale.XXXXXX")
trap 'rm -rf "$W"' EXIT
# t NAME CMD...: run CMD under GNU time into $W/NAME.time ("wall user sys maxKB")
t() { _n=$1; shift; /usr/bin/time -f "%e %U %S %M" -o "$W/$_n.time" "$@"; }
for m in $SIZES; do
  mb=$(echo "$m * 101" | bc)
  rm -rf "$W/in" "$W/out"
  bytes=$("$GEN" "$W/in" --ranks 8 --mb "$mb" --launches) || exit 1
  t imp "$CS" import -o "$W/out" "$W/in" > "$W/imp.txt" 2>&1 || { cat "$W/imp.txt"; exit 1; }
  spans=$(sed -n 's/.*), \([0-9]*\) spans: .*/\1/p' "$W/imp.txt")
  t rep "$CS" report --format json "$W/out" > "$W/rep.json" 2> "$W/rep.err"
  rrc=$?
  [ $rrc -le 1 ] || { echo "report failed ($rrc):"; cat "$W/rep.err"; exit 1; }
  read -r iw iu is ik < "$W/imp.time"
  read -r rw ru rs rk < "$W/rep.time"
  ic=$(echo "$iu + $is" | bc) rc=$(echo "$ru + $rs" | bc)
  echo
  printf "job: %.2f M spans, %.0f MB of JSON (8 ranks)\n" "$(echo "$spans / 1000000" | bc -l)" "$(echo "$bytes / 1000000" | bc -l)"
  printf "  %-24s %8s %8s %12s %12s %8s\n" "" wall_s cpu_s spans/wall_s spans/cpu_s rss_MB
  row() { printf "  %-24s %8.2f %8.2f %12.0f %12.0f %8.0f\n" "$1" "$2" "$3" "$(echo "$spans / $2" | bc -l)" \
            "$(echo "$spans / $3" | bc -l)" "$(echo "$4 / 1024" | bc -l)"; }
  row "collscope import" "$iw" "$ic" "$ik"
  row "collscope report" "$rw" "$rc" "$rk"
  cw=$(echo "$iw + $rw" | bc) cc=$(echo "$ic + $rc" | bc) ck=$ik
  [ "$rk" -gt "$ck" ] && ck=$rk
  row "collscope both" "$cw" "$cc" "$ck"
  rm -rf "$W/out"
  [ $HTA = 1 ] || continue
  ( ulimit -v $((${HTA_VMEM_MB:-8000} * 1024)); exec /usr/bin/time -f "%e %U %S %M" -o "$W/hta.time" \
      "$PY" "$S/bench/hta_breakdown.py" "$W/in" ) > "$W/hta.txt" 2>&1
  hl=$(sed -n 's/^hta \([0-9.]*\) \([0-9.]*\) .*/\1 \2/p' "$W/hta.txt")
  if [ -z "$hl" ]; then
    echo "  HTA could not load these files within ${HTA_VMEM_MB:-8000} MB a process: $(grep -m1 -E 'Error|error|Killed' "$W/hta.txt" | cut -c1-120)"
    continue
  fi
  set -- $hl
  read -r hw hu hs hk < "$W/hta.time"
  hc=$(echo "$hu + $hs" | bc) ht=$(echo "$1 + $2" | bc)
  printf "  %-24s %8.2f %8.2f %12.0f %12.0f %8.0f   (load %.2f s + breakdown %.2f s; cpu_s: the whole process)\n" \
    "HTA load + breakdown" "$ht" "$hc" "$(echo "$spans / $ht" | bc -l)" "$(echo "$spans / $hc" | bc -l)" \
    "$(echo "$hk / 1024" | bc -l)" "$1" "$2"
  printf "  HTA / collscope: %.1fx the wall time, %.1fx the CPU time, %.1fx the memory (floor: 5x, 3x)\n" \
    "$(echo "$ht / $cw" | bc -l)" "$(echo "$hc / $cc" | bc -l)" "$(echo "$hk / $ck" | bc -l)"
done
