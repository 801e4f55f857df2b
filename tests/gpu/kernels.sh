#!/bin/sh
# tests/gpu/kernels.sh: GPU checks of libcskernels (not part of make check).
# Builds what it needs in an already configured build directory, then runs
# the CUDA backend against the host reference (tests/kernels/test_cuda_vs_host)
# and the benchmark (bench/kernels_bench). Run from the repository root:
#   tests/gpu/kernels.sh [BUILD_DIR]      (default: ./build)
# Exit 0: all checks passed; 77: no GPU or no nvcc build (SKIP printed);
# anything else: a failure. Finishes in well under 3 minutes.
set -u
B=${1:-build}
fail() { echo "FAIL: kernels GPU checks: $*"; exit 1; }
[ -f "$B/Makefile" ] || fail "$B is not a configured build directory (configure there first)"
grep -q '^cs_have_nvcc = yes' "$B/Makefile" || { echo "SKIP: $B was configured without nvcc"; exit 77; }
jobs=$(nproc 2>/dev/null || echo 4)
make -C "$B" -j"$jobs" kernels/libcskernels.la tests/kernels/test_cuda_vs_host bench/kernels_bench >"$B/kernels-gpu-build.log" 2>&1 ||
  { tail -n 30 "$B/kernels-gpu-build.log"; fail "build failed (log: $B/kernels-gpu-build.log)"; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
echo "== correctness: CUDA backend vs host reference"
timeout -k 5 100 "$B/tests/kernels/test_cuda_vs_host"
rc=$?
case $rc in
  0) ;;
  77) echo "SKIP: no CUDA device"; exit 77 ;;
  124) fail "test_cuda_vs_host timed out (an allreduce barrier may not have met)" ;;
  *) fail "test_cuda_vs_host exit $rc" ;;
esac
echo "== benchmark"
timeout -k 5 60 "$B/bench/kernels_bench"
rc=$?
[ $rc -eq 0 ] || fail "kernels_bench exit $rc"
echo "PASS: kernels GPU checks"
exit 0
