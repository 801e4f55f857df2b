#!/bin/sh
# The step proxy of a job without markers (docs/live.md, "What is
# shown"): tests/progs/live_steps --split --no-markers on 4 Open MPI
# ranks makes, each step, one MPI_Allreduce on its half ("half0",
# "half1") and then two on the world. The first collective each rank
# makes is its half's; the proxy must still be the world's allreduce
# (the communicator of the most members), chosen after a warm-up: each
# rank's 60 steps are 2 x 60 - 1 = 119 proxy steps (the half's would
# give 59), in the view of the running job's logs, of the ended job's,
# and in the metrics.
. "${srcdir:-.}/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$PROG" ] || skip "$PROG not built"

D="$T/job"
"$COLLSCOPE" run -o "$D" --metrics-file "$T/job.prom" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$PROG" --steps 60 --split --no-markers \
  >"$T/job.out" 2>&1 || fail "the job failed: $(tail -n 3 "$T/job.out")"
grep -q '^LIVE_STEPS steps=60' "$T/job.out" || fail "the job's output lacks its last line"
# the first collective of each rank is on its half
for r in 0 2; do
  expect_eq "the size of the communicator of rank $r's first collective" \
    "$(q "$D/trace.db" "SELECT c.size FROM spans s JOIN comms c ON c.id = s.comm AND c.rank = s.rank WHERE s.rank = $r AND s.op = 'MPI_Allreduce' ORDER BY s.begin_ns LIMIT 1")" 2
done
"$COLLSCOPE" top --once --interval 0.1 "$D" >"$T/frame" 2>"$T/frame.err" || fail "top --once failed: $(cat "$T/frame.err")"
cat "$T/frame"
grep -q '^4 processes (4 ended), steps: proxy, each MPI_Allreduce on world;' "$T/frame" ||
  fail "the proxy is not the world's MPI_Allreduce"
for r in 0 1 2 3; do
  grep -Eq "^ +$r +119 " "$T/frame" || fail "rank $r did not complete 119 proxy steps in the view"
  expect_eq "rank $r's steps in the metrics" "$(sed -n "s/^collscope_rank_steps_total{rank=\"$r\"} //p" "$T/job.prom")" 119
done
echo "ok: the world's allreduce is the step proxy, though each rank's first collective is its half's"
pass
