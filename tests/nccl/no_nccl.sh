#!/bin/sh
# A job without NCCL or a GPU is never broken by the preload, which carries
# the NCCL and CUDA wrappers in every flavor: the MPI trainer traces as
# before and has no GPU records; a program without MPI, CUDA or NCCL runs
# with no word from the tool.
. "$srcdir/tests/lib.sh"
for f in nompi openmpi; do
  nm -D "$COLLSCOPE_LIBDIR/collscope-$f.so" | grep -q ' T ncclAllReduce$' || fail "collscope-$f.so lacks the NCCL wrappers"
  nm -D "$COLLSCOPE_LIBDIR/collscope-$f.so" | grep -q ' T cudaLaunchKernel$' || fail "collscope-$f.so lacks the CUDA wrappers"
done
echo "ok: the preloads carry the NCCL and CUDA wrappers"
out=$(COLLSCOPE_DIR="$T/none" LD_PRELOAD="$COLLSCOPE_LIBDIR/collscope-nompi.so" sh -c 'echo fine; exit 3' 2>&1)
st=$?
expect_eq "plain program: exit status" "$st" 3
expect_eq "plain program: output" "$out" fine
need_mpi openmpi
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
"$COLLSCOPE" run -o "$T/r" -- "$(mpirun_for openmpi)" -np 4 "$prog" --steps 3 > "$T/run.out" 2> "$T/run.err" ||
  { cat "$T/run.err"; fail "MPI trainer failed under the preload"; }
check_counts "$T/run.out" "$T/r/trace.db"
expect_eq "no NCCL or CUDA spans" "$(q "$T/r/trace.db" "SELECT count(*) FROM spans s JOIN ops o ON o.name = s.op WHERE o.api != 'MPI'")" 0
if grep -v '^collscope: [0-9]* processes' "$T/run.err" | grep -q .; then fail "unexpected messages: $(cat "$T/run.err")"; fi
echo "ok: no messages from the tool"
pass
