#!/bin/sh
# The real CUDA 13 runtime and NCCL with no GPU: every return code is the
# one the real library gives, traced or not (cudaMalloc: 35, insufficient
# driver); the trace records the calls with those codes. Skips on a machine
# with a GPU (the codes would be successes; tests/gpu/run.sh covers it).
. "$srcdir/tests/lib.sh"
prog=$B/tests/nccl/realerr
[ -x "$prog" ] || skip "tests/nccl/realerr not built (no NCCL headers)"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && skip "a GPU is present"
LD_LIBRARY_PATH=/usr/local/cuda/lib64 timeout 120 "$prog" > "$T/bare.out" 2> "$T/bare.err" || fail "untraced run failed"
LD_LIBRARY_PATH=/usr/local/cuda/lib64 COLLSCOPE_DIR="$T/r" LD_PRELOAD="$COLLSCOPE_LIBDIR/collscope-nompi.so" \
  timeout 120 "$prog" > "$T/traced.out" 2> "$T/traced.err" || fail "traced run failed"
cat "$T/bare.out"
# The program prints one "NAME RC" line per call, in this order.
calls="cudaGetDeviceCount cudaMalloc cudaMemcpy cudaMemsetAsync cudaStreamSynchronize cudaDeviceSynchronize
  cudaFree cudaGetLastError ncclGetVersion ncclGetUniqueId ncclCommInitRank ncclGroupStart ncclAllReduce
  ncclGroupEnd ncclAllReduce-nullcomm ncclCommDestroy"
expect_eq "untraced: one line per call" "$(cut -d' ' -f1 "$T/bare.out" | tr '\n' ' ')" "$(echo $calls) "
grep -qv '^[A-Za-z-]* -\{0,1\}[0-9][0-9]*$' "$T/bare.out" && fail "untraced: a line is not 'NAME RC'"
cmp "$T/bare.out" "$T/traced.out" || { diff "$T/bare.out" "$T/traced.out"; fail "return codes differ under the preload"; }
echo "ok: return codes identical traced and untraced"
grep -q '^cudaMalloc 35$' "$T/bare.out" || echo "note: cudaMalloc did not return 35 here"
db=$(ls "$T"/r/ranks/*.db | head -n 1)
[ -n "$db" ] || fail "no trace written"
checked=0
while read -r name rc; do
  case $name in cudaGetDeviceCount|cudaGetLastError|ncclGetVersion|ncclAllReduce-nullcomm) continue ;; esac
  got=$(q "$db" "SELECT group_concat(rc) FROM spans WHERE op='$name'")
  case $name in ncclAllReduce) got=$(q "$db" "SELECT rc FROM spans WHERE op='$name' ORDER BY begin_ns LIMIT 1") ;; esac
  expect_eq "$name rc in the trace" "$got" "$rc"
  checked=$((checked + 1))
done < "$T/bare.out"
expect_eq "calls checked in the trace" "$checked" 12
pass
