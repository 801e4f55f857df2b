#!/bin/sh
# collscope top's hang alarm on a 4-rank Open MPI job of tests/progs/hang
# (--mode deadlock2: ranks 1 and 2 wait on each other, 0 and 3 in the
# collective they never join): with --hang 2, every rank in a call for 2 s
# is a hang, and its alarm lines are the diagnosis `collscope status
# --after 2` prints, word for word. Then the ranks are killed. Also the
# step proxy: a job of tests/progs/live_steps without step markers (3
# allreduces a step) whose rank 2 turns slow at step 150 is named at a
# proxy step within 30 (10 steps) of 450. docs/live.md.
. "${srcdir:-.}/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
HANG="$B/tests/progs/hang_ompi"
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$HANG" ] && [ -x "$PROG" ] || skip "$HANG or $PROG not built"

D="$T/hang"
"$COLLSCOPE" run -o "$D" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$HANG" --mode deadlock2 >"$T/hang.out" 2>&1 &
run=$!
at_exit "kill_ranks '$D'; kill $run 2>/dev/null"
n=0 seen=
while [ $n -lt 60 ]; do
  sleep 0.5
  n=$((n + 1))
  [ -d "$D/logs" ] || continue
  "$COLLSCOPE" top --once --hang 2 --interval 0.1 --cols 1000 "$D" >"$T/frame" 2>"$T/frame.err" || fail "top failed: $(cat "$T/frame.err")"
  grep -q '^ALARM hang: deadlock: ' "$T/frame" && { seen=1; break; }
done
"$COLLSCOPE" status --after 2 "$D" >"$T/status" 2>&1
kill_ranks "$D"
wait $run
[ -n "$seen" ] || { cat "$T/frame" "$T/status"; fail "no hang alarm within 30 s"; }
cat "$T/frame"
sed -n 's/^ALARM hang: //p' "$T/frame" | sort >"$T/alarms"
grep -E '^[a-z_]+: ' "$T/status" | sort >"$T/diagnosis"
# the status was read a moment later: its times may differ in the last digit
sed -E 's/[0-9]+\.[0-9] s/N s/g' "$T/alarms" >"$T/a" && sed -E 's/[0-9]+\.[0-9] s/N s/g' "$T/diagnosis" >"$T/b"
cmp -s "$T/a" "$T/b" || { diff "$T/a" "$T/b"; fail "the hang alarm is not what collscope status diagnoses"; }
grep -q '^deadlock: deadlock, a cycle of 2 ranks: rank 1' "$T/alarms" || fail "the deadlock of ranks 1 and 2 is not named"
echo "ok: the hang alarm is status's diagnosis: $(head -c 120 "$T/alarms")"

# the step proxy
D="$T/proxy"
"$COLLSCOPE" run -o "$D" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$PROG" --steps 400 --no-markers --buckets 3 \
  --slow-rank 2 --slow-from 150 --slow-us 8000 >"$T/proxy.out" 2>&1 || fail "the proxy job failed"
"$COLLSCOPE" top --once --interval 0.1 "$D" >"$T/proxy.frame" || fail "top of the proxy job failed"
cat "$T/proxy.frame"
grep -q '^4 processes (4 ended), steps: proxy, each MPI_Allreduce on world' "$T/proxy.frame" || fail "the view does not say the proxy"
grep -Eq '^ +0 +1199 ' "$T/proxy.frame" || fail "rank 0 did not complete 1199 proxy steps"
step=$(sed -n 's/^ALARM rank 2 turned slow at step \([0-9]*\),.*/\1/p' "$T/proxy.frame")
[ -n "$step" ] && [ "$step" -ge 420 ] && [ "$step" -le 480 ] || fail "rank 2's alarm (proxy step '$step') is not within 30 of 450"
grep -Eq '^ALARM rank [013] ' "$T/proxy.frame" && fail "another rank is alarmed"
echo "ok: with the step proxy, rank 2's alarm names proxy step $step (the change: 450)"
pass
