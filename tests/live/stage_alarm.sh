#!/bin/sh
# Per-stage alarms (docs/live.md, "Per stage") on 4-rank Open MPI jobs of
# tests/progs/live_steps --pipe: two pipeline stages, communicators
# "stage0" = ranks 0-1 and "stage1" = ranks 2-3, each rank of stage 0
# sending its activations to its partner of stage 1 every step. From step
# 100 every rank of stage 1 computes 8 ms more a step (large against the
# noise of a loaded machine: its own time goes from about 4 to 12 ms).
# Expected, and asserted: one alarm, on stage 1, whose step is within 10
# of 100, seen while the job runs (top --once); no alarm on ranks 2 and 3
# (the stage's alarm explains them) and their rows marked SLOW; the alarm
# in the metrics (collscope_stage_*), in live_alarms (subject stage) and
# in the reports' sentence. Then rank 2 alone slow: a rank alarm, no
# stage alarm. A clean job of the same program: no alarm.
. "${srcdir:-.}/tests/lib.sh"
. "$S/tests/live/livelib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$PROG" ] || skip "$PROG not built"

name='stage 1 (stage1: ranks 2-3)'
watch_slow "$name" --steps 300 --pipe --slow-stage 1 --slow-from 100 --slow-us 8000
expect_eq "the job's exit status" "$(cat "$T/slow.rc")" 0
grep -q '^LIVE_STEPS steps=300' "$T/slow.out" || fail "the job's output lacks its last line"
step=$(sed -n 's/^ALARM stage 1 (stage1: ranks 2-3) turned slow at step \([0-9]*\),.*/\1/p' "$T/frame")
[ "$step" -ge 90 ] && [ "$step" -le 110 ] || fail "stage 1's alarm names step $step, not within 10 of 100"
echo "ok: the view names stage 1's alarm from step $step (the change: 100) while the job runs"
grep -E '^ALARM rank ' "$T/frame" && fail "a rank alarm was raised beside its stage's"
grep -Eq '^ +2 .* SLOW$' "$T/frame" && grep -Eq '^ +3 .* SLOW$' "$T/frame" || fail "ranks 2 and 3 are not marked SLOW"
grep -Eq '^ +[01] .* SLOW$' "$T/frame" && fail "a rank of stage 0 is marked SLOW"
grep 'live alarm' "$T/slow.out" >"$T/told"
cat "$T/told"
expect_eq "alarms told at the end" "$(wc -l <"$T/told")" 1
grep -q "live alarm: $name turned slow at step $step," "$T/told" || fail "run did not tell stage 1's alarm"
echo "ok: only stage 1 is alarmed, and none of its ranks"

M="$T/slow.prom"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$M" >"$T/promtool.out" 2>&1 || { cat "$T/promtool.out" >&2; fail "promtool check metrics refused the file"; }
  echo "ok: promtool check metrics accepts the file"
fi
grep -q '^collscope_stage_alarm{stage="1",comm="stage1"} 1$' "$M" || fail "the metrics do not set stage 1's alarm"
grep -q '^collscope_stage_alarm{stage="0",comm="stage0"} 0$' "$M" || fail "the metrics set stage 0's alarm (or lack it)"
grep -q '^collscope_alarm{rank="[0-3]"} 1$' "$M" && fail "the metrics set a rank's alarm"
expect_eq "collscope_stage_alarm_step of stage 1" "$(sed -n 's/^collscope_stage_alarm_step{stage="1",comm="stage1"} //p' "$M")" "$step"
own=$(sed -n 's/^collscope_stage_own_seconds{stage="1",comm="stage1"} //p' "$M")
/usr/bin/python3 -c "import sys; sys.exit(0 if 0.009 < float('$own') < 0.5 else 1)" ||
  fail "stage 1's least member's own time at the end: $own s, not about 12 ms"
echo "ok: the metrics set stage 1's alarm (from step $step), its own time $own s a step"

expect_eq "alarms in live_alarms" "$(q "$D/trace.db" "SELECT COUNT(*) FROM live_alarms")" 1
expect_eq "live_alarms' row" "$(q "$D/trace.db" "SELECT kind, subject, name, comm, IFNULL(rank, 'null'), IFNULL(peer, 'null'), until_step, step FROM live_alarms")" \
  "slow|stage|$name|stage1|null|null|-1|$step"
"$COLLSCOPE" report "$D" >"$T/report" 2>"$T/report.err" || fail "report failed: $(cat "$T/report.err")"
grep -Fxq "  $name turned slow at step $step, $(q "$D/trace.db" "SELECT printf('%.1f', factor) FROM live_alarms")x, until the end" "$T/report" || {
  sed -n '/^Alarms/,/^$/p' "$T/report" >&2; fail "the report does not say stage 1's alarm"; }
echo "ok: the report says: $(grep 'stage 1 (stage1' "$T/report")"
alarm_json "$step" 1.5 'a["subject"] == "stage" and a["comm"] == "stage1" and a["rank"] is None and a["name"] == "stage 1 (stage1: ranks 2-3)" and a["peer"] is None'
"$COLLSCOPE" report "$D" --format markdown 2>/dev/null | grep -Fq "| slow | $name | $step | the end |" ||
  fail "the Markdown report has no row of stage 1's alarm"

# ---- rank 2 alone slow: its rank's alarm, not its stage's (the stage's
# value is its least member's own time) ----
D="$T/rank"
"$COLLSCOPE" run -o "$D" --metrics-file "$T/rank.prom" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$PROG" --steps 200 --pipe --slow-rank 2 --slow-from 100 \
  --slow-us 8000 >"$T/rank.out" 2>&1 || fail "the job failed: $(tail -n 3 "$T/rank.out")"
grep 'live alarm' "$T/rank.out" >"$T/told2" || true
cat "$T/told2"
expect_eq "alarms told (rank 2 slow)" "$(wc -l <"$T/told2")" 1
grep -Eq 'live alarm: rank 2 turned slow at step (9[0-9]|10[0-9]|110),' "$T/told2" || fail "rank 2 is not the one alarm"
echo "ok: one slow rank of a stage is the rank's alarm alone"

# ---- a clean job of the same program: no alarm ----
D="$T/clean"
"$COLLSCOPE" run -o "$D" --metrics-file "$T/clean.prom" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$PROG" --steps 200 --pipe \
  >"$T/clean.out" 2>&1 || fail "the clean job failed: $(tail -n 3 "$T/clean.out")"
grep 'live alarm' "$T/clean.out" && fail "collscope run told an alarm of the clean job"
expect_eq "stages watched in the clean job's metrics" \
  "$(grep -c '^collscope_stage_alarm{stage="[01]",comm="stage[01]"} 0$' "$T/clean.prom")" 2
"$COLLSCOPE" report "$D" --format json 2>/dev/null | grep -q '"live_alarms": \[\],' || fail "the clean job's JSON report has live alarms"
echo "ok: the clean job raised no alarm (its 2 stages watched)"
pass
