#!/bin/sh
# Apply mode with NCCL's profiler plugin on (interpose/ncclprof.c): the
# plugin's GPU times (nccl_coll) of the program's calls never hold
# collscope's own collectives. Under the CPU stand-ins, 2 ranks,
# tests/nccl/fuse_prog --mode guard (33 grouped calls a step that could be
# fused, a guard window every 2 steps, each window's vote an ncclAllReduce
# of 3 int64 that collscope issues after the window's ncclGroupEnd), the
# stand-in's CS_STANDIN_ALLREDUCE_GPU=3:30000 making every allreduce of 3
# elements (the vote; the program has none) spend 30 ms inside its
# profiler events. Before, the vote's event took the note of a member the
# engine had fused (the plugin matches an event to the first noted call of
# the same function when no count matches): a program's call showed 30 ms
# of GPU time. Now:
# - no program call's nccl_coll row holds 15 ms or more beyond the call's
#   own duration (theirs take microseconds here, and lie inside the call:
#   on a loaded machine a call that waited 20 ms for its peer has 20 ms
#   of GPU time, its own);
# - a member of a fused call has no row of its own, the fused call (its
#   span, flag 4) has one; every other call has exactly one; the votes none;
# - results as the untraced run.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
PROG=$B/tests/nccl/fuse_prog
need_standins "$PROG" CS_STANDIN_ALLREDUCE_GPU
plugin=$COLLSCOPE_LIBDIR/collscope-openmpi.so
[ -e "$plugin" ] || skip "collscope-openmpi.so not built"
unset COLLSCOPE_FUSE COLLSCOPE_FUSE_BUFFER COLLSCOPE_FUSE_THRESHOLD COLLSCOPE_TEST_FUSE_NOMEM COLLSCOPE_FUSE_GUARD \
  CS_STANDIN_ALLREDUCE_COST
MPIRUN=$(mpirun_for openmpi)
STEPS=30

timeout 120 "$MPIRUN" -np 2 "$PROG" --steps $STEPS --mode guard > "$T/bare.out" 2>&1 || { cat "$T/bare.out"; fail "untraced fuse_prog failed"; }
want=$(grep '^checksum:' "$T/bare.out")
[ -n "$want" ] || fail "untraced fuse_prog printed no checksum: $(cat "$T/bare.out")"

# (collscope run offers the preload as the plugin)
CS_STANDIN_ALLREDUCE_GPU=3:30000 COLLSCOPE_FUSE=1 timeout 240 "$COLLSCOPE" run -o "$T/p" -- \
  "$MPIRUN" -np 2 "$PROG" --steps $STEPS --mode guard > "$T/p.out" 2> "$T/p.err" ||
  { tail -n 20 "$T/p.err"; fail "traced run failed"; }
if grep -q 'stand-in' "$T/p.err"; then fail "the stand-in could not use the plugin: $(grep stand-in "$T/p.err")"; fi
expect_eq "checksum as the untraced unfused run" "$(grep '^checksum:' "$T/p.out")" "$want"
db=$T/p/trace.db
nw=$(q "$db" "SELECT count(*) FROM fuse_guard WHERE what = 'window' AND rank = 0")
[ "$nw" -ge 10 ] || fail "$nw guard windows on rank 0 (votes), want 10 or more"
nfused=$(q "$db" "SELECT count(*) FROM spans WHERE flags & 4")
[ "$nfused" -gt 0 ] || fail "no fused call: the engine's calls were not exercised"
colls="s.kind IN ('coll','rooted') AND s.op LIKE 'nccl%'"
over="n.gpu_end_ns - n.gpu_begin_ns >= 15000000 + (s.end_ns - s.begin_ns)"
expect_eq "program calls with 15 ms or more of plugin GPU time beyond their own (the vote takes 30)" \
  "$(q "$db" "SELECT count(*) FROM spans s JOIN nccl_coll n ON n.span = s.id
             WHERE $colls AND NOT s.flags & 4 AND $over")" 0
expect_eq "members of fused calls with a plugin row" \
  "$(q "$db" "SELECT count(*) FROM spans s JOIN nccl_coll n ON n.span = s.id WHERE s.flags & 256")" 0
expect_eq "fused calls without a plugin row" \
  "$(q "$db" "SELECT count(*) FROM spans s WHERE s.flags & 4 AND NOT EXISTS (SELECT 1 FROM nccl_coll n WHERE n.span = s.id)")" 0
expect_eq "calls issued as made without exactly one plugin row" \
  "$(q "$db" "SELECT count(*) FROM spans s WHERE $colls AND NOT s.flags & 256 AND NOT s.flags & 4
             AND (SELECT count(*) FROM nccl_coll n WHERE n.span = s.id) != 1")" 0
expect_eq "plugin rows of no span (or of collscope's votes)" \
  "$(q "$db" "SELECT count(*) FROM nccl_coll n LEFT JOIN spans s ON s.id = n.span WHERE s.id IS NULL OR $over")" 0
echo "ok: $nw windows voted, $nfused fused calls, no program call holds a vote's GPU time"
pass
