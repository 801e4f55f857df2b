#!/bin/sh
# Steps without markers hold through a rank that loses its core for a
# while. A blocking job with one MPI_Allreduce per step and no markers
# (nbloop --blocking --buckets 1) repeats one call (60 of its 65 calls: 90 %
# or more), so a call after a long idle time is a symbol of its own
# (analyzer/analysis/an_match.c). On a loaded machine a rank idle 10x its
# usual time between two calls made that symbol in the middle of the run,
# and its step marks stopped there: the later steps had no slowest rank
# (48 of 60 here), and the recurring verdict lost them. Here rank 0 is held
# 40 ms in one step (--late-steps), as a descheduled rank is: every step
# keeps its marks and its slowest rank.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG=$B/tests/progs/nbloop_ompi
[ -x "$PROG" ] || skip "$PROG not built"
STEPS=60
"$COLLSCOPE" run -o "$T/job" -- "$MPIRUN" -np 4 "$PROG" --steps $STEPS --compute-us 2000 --bytes 2048 --blocking \
  --buckets 1 --late-rank 0 --late-us 40000 --late-steps 12 > "$T/job.out" 2>&1 || fail "traced run failed: $(tail -5 "$T/job.out")"
"$COLLSCOPE" analyze "$T/job" > /dev/null 2> "$T/an.err" || fail "analyze failed: $(cat "$T/an.err")"
db=$T/job/trace.db
expect_eq "steps from the period of the calls" "$(q "$db" "SELECT value FROM meta WHERE key = 'analysis_steps_from'")" period
expect_eq "steps found" "$(q "$db" "SELECT count(*) FROM steps")" $STEPS
expect_eq "steps without a slowest rank (a rank's marks stopped)" "$(q "$db" "SELECT count(*) FROM steps WHERE slowest_rank < 0")" 0
expect_eq "the held step: rank 0 the slowest" "$(q "$db" "SELECT slowest_rank FROM steps WHERE step = 12")" 0
pass
