#!/bin/sh
# A program built for the per-thread default stream (its calls go to the
# _ptsz/_ptds entry points) is traced like any other, under the stand-in
# cudart: one span per call under the entry point's name, stream 0 recorded
# as the per-thread stream (2, cudaStreamPerThread), the data and a failing
# launch's return code as untraced. With the real cudart and no GPU: the
# same output and exit status traced and untraced.
. "$srcdir/tests/lib.sh"
SI=$B/tests/standins/.libs
prog=$B/tests/nccl/ptsz
[ -x "$prog" ] || skip "tests/nccl/ptsz not built (no CUDA headers)"
[ -e "$SI/libcudart.so.13" ] || skip "cudart stand-in not built"

LD_LIBRARY_PATH=$SI "$prog" > "$T/bare.out" 2>&1 || fail "untraced run failed: $(cat "$T/bare.out")"
grep -q 'data ok' "$T/bare.out" || fail "untraced: $(cat "$T/bare.out")"
LD_LIBRARY_PATH=$SI "$COLLSCOPE" run --mpi none -o "$T/t" -- "$prog" > "$T/t.out" 2> "$T/t.err" ||
  fail "traced run failed: $(cat "$T/t.out" "$T/t.err")"
expect_eq "traced: same output" "$(cat "$T/t.out")" "$(cat "$T/bare.out")"
grep -q 'launch rc [1-9]' "$T/t.out" || fail "the launch of a non-kernel did not fail: $(cat "$T/t.out")"
db=$T/t/trace.db
for kv in $(grep -o 'calls: .*' "$T/bare.out" | cut -d' ' -f2-); do
  op=${kv%%=*}; want=${kv#*=}
  expect_eq "spans of $op" "$(q "$db" "SELECT count(*) FROM spans WHERE op='$op'")" "$want"
done
expect_eq "CUDA ops in the trace" "$(q "$db" "SELECT count(DISTINCT op) FROM spans WHERE op LIKE 'cuda%'")" 9
expect_eq "stream 0 of a _ptsz call recorded as the per-thread stream" \
  "$(q "$db" "SELECT group_concat(op || ':' || stream) FROM (SELECT op, stream FROM spans
             WHERE op IN ('cudaMemsetAsync_ptsz','cudaStreamWaitEvent_ptsz','cudaMemcpy_ptds','cudaMemset_ptds') ORDER BY op)")" \
  "cudaMemcpy_ptds:2,cudaMemsetAsync_ptsz:2,cudaMemset_ptds:2,cudaStreamWaitEvent_ptsz:2"
expect_eq "an explicit stream is kept" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE op='cudaMemcpyAsync_ptsz' AND stream NOT IN (0, 2)")" 1
expect_eq "the failed launch's return code recorded" \
  "$(q "$db" "SELECT rc FROM spans WHERE op='cudaLaunchKernel_ptsz'")" "$(grep -o 'launch rc [0-9]*' "$T/bare.out" | cut -d' ' -f3)"

# The real cudart, no GPU here: whatever it says, it says it traced too.
"$prog" > "$T/real.out" 2>&1; rc=$?
"$COLLSCOPE" run --mpi none -o "$T/r" -- "$prog" > "$T/rt.out" 2>&1
expect_eq "real cudart: exit status traced" $? $rc
expect_eq "real cudart: output traced" "$(grep -v '^collscope:' "$T/rt.out")" "$(cat "$T/real.out")"
pass
