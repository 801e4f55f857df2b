#!/bin/sh
# `collscope run` on a job that traced nothing (issue 36): a job with no
# MPI, NCCL or CUDA call (as a PyTorch job on gloo) leaves no process log;
# the run says why and what to do instead (torch.profiler and collscope
# import) and exits 4 when the job itself succeeded, the job's own status
# when it failed. A traced job is not affected (tests/store, tests/mpi).
. "$srcdir/tests/lib.sh"
[ -e "$COLLSCOPE_LIBDIR/collscope-nompi.so" ] || skip "the preload is not built in $COLLSCOPE_LIBDIR"
"$COLLSCOPE" run -o "$T/ok" -- sh -c 'exit 0' > "$T/ok.out" 2> "$T/ok.err"
expect_eq "a job that succeeded and traced nothing: exit status" $? 4
grep -q "nothing was traced" "$T/ok.err" || fail "no word of nothing traced: $(cat "$T/ok.err")"
grep -q "collscope import" "$T/ok.err" || fail "no word of what to do instead: $(cat "$T/ok.err")"
grep -q "gloo" "$T/ok.err" || fail "no word of why (gloo): $(cat "$T/ok.err")"
[ -e "$T/ok/trace.db" ] && fail "a trace.db of nothing was written"
"$COLLSCOPE" run -o "$T/bad" -- sh -c 'exit 3' > /dev/null 2> "$T/bad.err"
expect_eq "a job that failed and traced nothing: its own exit status" $? 3
"$COLLSCOPE" run --no-ingest -o "$T/ni" -- sh -c 'exit 0' > /dev/null 2> "$T/ni.err"
expect_eq "--no-ingest: nothing converted, the job's status" $? 0
pass
