#!/bin/sh
# test_cuda_build: libcskernels built with nvcc holds device code for every
# architecture of NVCC_GENCODE (default sm_80 and sm_90) and links the CUDA
# runtime dynamically, never the driver library libcuda.
set -u
B=${abs_top_builddir:-.}
lib=$B/kernels/.libs/libcskernels.so
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$lib" ] || fail "$lib not built"
gencode=$(sed -n 's/^NVCC_GENCODE = //p' "$B/Makefile")
archs=$(echo "$gencode" | grep -o 'code=sm_[0-9a-z]*' | sed 's/code=//' | sort -u)
[ -n "$archs" ] || fail "no code=sm_XX in NVCC_GENCODE ($gencode)"
for a in $archs; do
  strings "$lib" | grep -q -- "-arch $a " || fail "$lib has no device code for $a"
  echo "ok: device code for $a"
done
needed=$(objdump -p "$lib" | sed -n 's/^ *NEEDED *//p')
echo "$needed" | grep -q '^libcudart\.so' || fail "libcudart not a NEEDED library of $lib: $needed"
echo "ok: links libcudart dynamically"
echo "$needed" | grep -q '^libcuda\.so' && fail "$lib links the driver library libcuda"
echo "ok: does not link libcuda"
objdump -T "$lib" | grep -q ' cs_kern_pack$' || fail "cs_kern_pack not exported"
echo "ok: exports the API"
exit 0
