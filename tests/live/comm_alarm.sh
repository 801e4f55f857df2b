#!/bin/sh
# Per-communicator alarms (docs/live.md) on 4-rank Open MPI jobs of
# tests/progs/live_steps --split: the ranks also sum over their half
# (communicators "half0" = ranks 0-1, "half1" = ranks 2-3). From step 150
# the reduction operation of half1's calls sleeps 2 ms in each call, on
# its members: half1's calls turn slow; no rank's own work does (ranks 2
# and 3 spend the time inside half1's calls, ranks 0 and 1 wait for them
# inside the world's). Ranks 0 and 1 compute 1 ms more a step (--slack-us):
# 2 and 3 wait 1 ms for them in the world's calls before the change, 0 and
# 1 wait 1 ms for 2 and 3 after it. The waits are kept short because on
# this machine (more ranks than cores, shared) ranks that spin-wait for
# several ms lose the CPU and the world's calls then really take longer
# once all are in (docs/live.md, "Per communicator": an alarm of the
# world in 1 run of 5 with a 2 ms wait after the change, 3 of 3 with 8 ms).
# Expected, and asserted: one alarm, on half1, whose
# step is within 10 of 150, raised (h = 20 steps of a shift) at step 155
# to 180, while the job runs (top --once); no rank alarm, none on
# half0 or on the world (whose calls only wait longer for late members);
# the alarm in the metrics (label comm), in live_alarms (subject comm)
# and in the reports' sentence. Then half1 slow by 8 ms and no slack (the
# world's ranks wait long: its alarm is held back while half1's is
# active): half1's alarm alone. A clean job of the same shape: no alarm.
# This machine runs the 4 ranks on fewer processors, where communicators
# are not watched by default (docs/live.md): COLLSCOPE_COMM_ALARMS=on, and
# at the end the default checked to raise none there.
. "${srcdir:-.}/tests/lib.sh"
. "$S/tests/live/livelib.sh"
need_mpi openmpi
export COLLSCOPE_COMM_ALARMS=on
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$PROG" ] || skip "$PROG not built"

watch_slow "communicator half1" --steps 450 --split --slack-us 1000 --slow-comm 1 --slow-from 150 --slow-us 2000
expect_eq "the job's exit status" "$(cat "$T/slow.rc")" 0
grep -q '^LIVE_STEPS steps=450' "$T/slow.out" || fail "the job's output lacks its last line"
step=$(sed -n 's/^ALARM communicator half1 turned slow at step \([0-9]*\),.*/\1/p' "$T/frame")
[ "$step" -ge 140 ] && [ "$step" -le 160 ] || fail "half1's alarm names step $step, not within 10 of 150"
echo "ok: the view names half1's alarm from step $step (the change: 150) while the job runs"
grep -E '^ALARM rank ' "$T/frame" && fail "a rank alarm was raised: no rank's own work changed"
grep -E '^ALARM communicator (world|half0) ' "$T/frame" && fail "another communicator was alarmed"
grep -Eq '^ +[0-3] .* SLOW$' "$T/frame" && fail "a rank's row is marked SLOW"
cat "$T/slow.out" | grep 'live alarm' >"$T/told"
expect_eq "alarms told at the end" "$(wc -l <"$T/told")" 1
grep -q 'live alarm: communicator half1 turned slow at step' "$T/told" || fail "run did not tell half1's alarm: $(cat "$T/told")"
echo "ok: only half1 is alarmed, and no rank"

M="$T/slow.prom"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$M" >"$T/promtool.out" 2>&1 || { cat "$T/promtool.out" >&2; fail "promtool check metrics refused the file"; }
  echo "ok: promtool check metrics accepts the file"
fi
grep -q '^collscope_comm_alarm{comm="half1"} 1$' "$M" || fail "the metrics do not set half1's alarm"
grep -q '^collscope_comm_alarm{comm="half0"} 0$' "$M" || fail "the metrics set half0's alarm (or lack it)"
grep -q '^collscope_comm_alarm{comm="world"} 0$' "$M" || fail "the metrics set the world's alarm (or lack it)"
grep -q '^collscope_alarm{rank="[0-3]"} 1$' "$M" && fail "the metrics set a rank's alarm"
mstep=$(sed -n 's/^collscope_comm_alarm_step{comm="half1"} //p' "$M")
expect_eq "collscope_comm_alarm_step of half1" "$mstep" "$step"
cs=$(sed -n 's/^collscope_comm_call_seconds{comm="half1"} //p' "$M")
/usr/bin/python3 -c "import sys; sys.exit(0 if 0.0015 < float('$cs') < 0.5 else 1)" ||
  fail "half1's calls per step at the end: $cs s, not about 2 ms"
echo "ok: the metrics set half1's alarm (from step $mstep), its calls $cs s a step, and no other"

expect_eq "alarms in live_alarms" "$(q "$D/trace.db" "SELECT COUNT(*) FROM live_alarms")" 1
expect_eq "live_alarms' row" "$(q "$D/trace.db" "SELECT kind, subject, comm, IFNULL(rank, 'null'), until_step, step FROM live_alarms")" \
  "slow|comm|half1|null|-1|$step"
raised=$(q "$D/trace.db" "SELECT raised FROM live_alarms")
# h = 20: about 20 steps of the shift (fewer when noise had begun the sum)
[ "$raised" -ge 155 ] && [ "$raised" -le 180 ] || fail "live_alarms keeps raised $raised (expected 155 to 180)"
"$COLLSCOPE" report "$D" >"$T/report" 2>"$T/report.err" || fail "report failed: $(cat "$T/report.err")"
grep -Eq "^  communicator half1 turned slow at step $step, [0-9.]+x, until the end\$" "$T/report" || {
  sed -n '/^Alarms/,/^$/p' "$T/report" >&2; fail "the report does not say half1's alarm"; }
echo "ok: the report says: $(grep 'communicator half1 turned slow' "$T/report")"
alarm_json "$step" 10 'a["subject"] == "comm" and a["comm"] == "half1" and a["rank"] is None'
"$COLLSCOPE" report "$D" --format markdown 2>/dev/null | grep -Eq "^\| slow \| comm half1 \| $step \| the end \|" ||
  fail "the Markdown report has no row of half1's alarm"

# ---- half1 slow by 8 ms with no slack: ranks 0 and 1 wait 8 ms for its
# members in the world's calls (long enough to lose the CPU here: the
# world's calls then take longer once all are in); the world's alarm is
# held back while half1's is active: half1 alone ----
D="$T/wait"
"$COLLSCOPE" run -o "$D" --metrics-file "$T/wait.prom" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$PROG" --steps 300 --split --slow-comm 1 --slow-from 150 \
  --slow-us 8000 >"$T/wait.out" 2>&1 || fail "the job failed: $(tail -n 3 "$T/wait.out")"
grep 'live alarm' "$T/wait.out" >"$T/told2" || true
cat "$T/told2"
expect_eq "alarms told (8 ms, no slack)" "$(wc -l <"$T/told2")" 1
grep -Eq 'live alarm: communicator half1 turned slow at step (1[4-5][0-9]|160),' "$T/told2" || fail "half1 is not the one alarm"
echo "ok: with long waits in the world's calls, half1 alone is alarmed"

# ---- a clean job of the same shape: no alarm ----
D="$T/clean"
"$COLLSCOPE" run -o "$D" --metrics-file "$T/clean.prom" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$PROG" --steps 300 --split --slack-us 1000 \
  >"$T/clean.out" 2>&1 || fail "the clean job failed: $(tail -n 3 "$T/clean.out")"
grep 'live alarm' "$T/clean.out" && fail "collscope run told an alarm of the clean job"
expect_eq "communicators watched in the clean job's metrics" \
  "$(grep -c '^collscope_comm_alarm{comm="\(world\|half0\|half1\)"} 0$' "$T/clean.prom")" 3
"$COLLSCOPE" report "$D" --format json 2>/dev/null | grep -q '"live_alarms": \[\],' || fail "the clean job's JSON report has live alarms"
echo "ok: the clean job raised no alarm (its 3 communicators watched)"

# ---- the default on this machine: more ranks than processors, so the
# communicators are not watched: the slow job's logs followed again by
# top --once name no communicator, and rank alarms still are raised ----
if [ "$(nproc)" -lt 4 ]; then
  COLLSCOPE_COMM_ALARMS= "$COLLSCOPE" top --once --interval 0.2 "$T/slow" >"$T/auto" 2>"$T/auto.err" ||
    fail "top --once (default) failed: $(cat "$T/auto.err")"
  grep -q '^4 processes' "$T/auto" || { cat "$T/auto"; fail "top --once (default) did not follow the 4 ranks"; }
  grep -q '^ALARM communicator' "$T/auto" && { cat "$T/auto"; fail "a communicator was alarmed by default on $(nproc) processors"; }
  echo "ok: by default, 4 ranks on $(nproc) processors: no communicator watched"
fi
rc=0
COLLSCOPE_COMM_ALARMS=maybe "$COLLSCOPE" top --once "$T/slow" >"$T/bad" 2>"$T/bad.err" || rc=$?
expect_eq "top with COLLSCOPE_COMM_ALARMS=maybe exits" "$rc" 1
expect_eq "its message" "$(cat "$T/bad.err")" "collscope: top: COLLSCOPE_COMM_ALARMS=maybe: want auto, on or off"
pass
