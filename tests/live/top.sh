#!/bin/sh
# collscope top on 4-rank Open MPI jobs of tests/progs/live_steps: rank 2
# turns slow (8 ms more per step) from step 150. While the job runs,
# `top --once` names rank 2 with an alarm whose step is within 10 of 150,
# and no other rank; the metrics file that `collscope run --metrics-file`
# kept is valid Prometheus exposition (promtool), with rank 2's alarm set
# and, at the end, the same call counts as the trace. A clean job of the
# same kind raises no alarm. The alarm is kept in the trace (live_alarms)
# and the report says it. docs/live.md.
. "${srcdir:-.}/tests/lib.sh"
. "$S/tests/live/livelib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$PROG" ] || skip "$PROG not built"

# ---- a job whose rank 2 turns slow at step 150 ----
watch_slow "rank 2" --steps 450 --slow-rank 2 --slow-from 150 --slow-us 8000
expect_eq "the job's exit status" "$(cat "$T/slow.rc")" 0
grep -q '^LIVE_STEPS steps=450' "$T/slow.out" || fail "the job's output lacks its last line"
step=$(sed -n 's/^ALARM rank 2 turned slow at step \([0-9]*\),.*/\1/p' "$T/frame")
[ "$step" -ge 140 ] && [ "$step" -le 160 ] || fail "rank 2's alarm names step $step, not within 10 of 150"
echo "ok: rank 2's alarm names step $step (the change: 150)"
grep -E '^ALARM rank [013] ' "$T/frame" && fail "an alarm names a rank that did not turn slow"
grep -Eq '^ +2 .* SLOW$' "$T/frame" || fail "rank 2's row is not marked SLOW"
echo "ok: only rank 2 is alarmed and marked"
grep -q 'live alarm: rank 2 turned slow at step' "$T/slow.out" || fail "collscope run did not tell the alarm at the end"
echo "ok: collscope run told the alarm at the job's end"

# ---- the metrics file ----
M="$T/slow.prom"
[ -s "$M" ] || fail "no metrics file $M"
ls "$T" | grep -q 'slow.prom.tmp' && fail "a temporary metrics file was left"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$M" >"$T/promtool.out" 2>&1 || { cat "$T/promtool.out" >&2; fail "promtool check metrics refused the file"; }
  echo "ok: promtool check metrics accepts the file"
elif [ "${CI:-}" = true ]; then
  fail "promtool not installed (scripts/setup.sh installs prometheus)"
else
  echo "note: promtool not installed: the exposition is not checked by it"
fi
for m in collscope_rank_step_seconds collscope_rank_comm_seconds_total collscope_collectives_total \
  collscope_bytes_total collscope_inflight_call_age_seconds collscope_straggler_score collscope_alarm; do
  grep -q "^# TYPE $m " "$M" || fail "the metrics file has no $m"
done
grep -q '^collscope_alarm{rank="2"} 1$' "$M" || fail "the metrics do not set rank 2's alarm"
grep -q '^collscope_alarm{rank="0"} 0$' "$M" || fail "the metrics set rank 0's alarm"
step=$(sed -n 's/^collscope_alarm_step{rank="2"} //p' "$M")
[ "$step" -ge 140 ] && [ "$step" -le 160 ] || fail "collscope_alarm_step of rank 2 is $step"
echo "ok: the metrics set rank 2's alarm (from step $step), not the others'"
# a rank's numbers at the end match the trace's
for r in 0 2; do
  got=$(sed -n "s/^collscope_collectives_total{rank=\"$r\",comm=\"world\",op=\"MPI_Allreduce\"} //p" "$M")
  want=$(q "$D/trace.db" "SELECT COUNT(*) FROM spans WHERE rank = $r AND op = 'MPI_Allreduce'")
  expect_eq "rank $r's MPI_Allreduce count, metrics vs trace" "$got" "$want"
  got=$(sed -n "s/^collscope_bytes_total{rank=\"$r\",comm=\"world\",op=\"MPI_Allreduce\"} //p" "$M")
  want=$(q "$D/trace.db" "SELECT SUM(bytes) FROM spans WHERE rank = $r AND op = 'MPI_Allreduce'")
  expect_eq "rank $r's MPI_Allreduce bytes, metrics vs trace" "$got" "$want"
done
expect_eq "rank 2's steps" "$(sed -n 's/^collscope_rank_steps_total{rank="2"} //p' "$M")" 449
# the alarm kept in the trace, and said by the report
expect_eq "alarms in live_alarms" "$(q "$D/trace.db" "SELECT COUNT(*) FROM live_alarms")" 1
row=$(q "$D/trace.db" "SELECT kind, rank, until_step FROM live_alarms")
expect_eq "live_alarms' row" "$row" "slow|2|-1"
step=$(q "$D/trace.db" "SELECT step FROM live_alarms")
[ "$step" -ge 140 ] && [ "$step" -le 160 ] || fail "live_alarms keeps step $step"
"$COLLSCOPE" report "$D" >"$T/report" 2>"$T/report.err" || fail "report failed: $(cat "$T/report.err")"
grep -Eq '^  rank 2 turned slow at step 1[4-6][0-9], [0-9.]+x, until the end$' "$T/report" || {
  sed -n '/^Alarms/,/^$/p' "$T/report" >&2; fail "the report does not say rank 2's alarm"; }
echo "ok: the report says: $(grep 'rank 2 turned slow' "$T/report")"
"$COLLSCOPE" report "$D" --format json >"$T/report.json" 2>/dev/null || fail "report --format json failed"
/usr/bin/python3 - "$T/report.json" <<'PY' || fail "the JSON report's live_alarms"
import json, sys
a = json.load(open(sys.argv[1]))["live_alarms"]
assert len(a) == 1 and a[0]["kind"] == "slow" and a[0]["rank"] == 2, a
# the factor: 3.0 on a quiet machine; beside 8 busy loops the ranks' own
# time before the change rose with the load (1.96 seen): over 1.5
assert 140 <= a[0]["step"] <= 160 and a[0]["until_step"] == -1 and a[0]["factor"] > 1.5, a
print("ok: the JSON report's live_alarms:", a[0]["text"])
PY
"$COLLSCOPE" report "$D" --format markdown 2>/dev/null | grep -Eq '^\| slow \| 2 \| 1[4-6][0-9] \| the end \|' ||
  fail "the Markdown report has no row of rank 2's alarm"

# ---- a clean job: no alarm ----
D="$T/clean"
"$COLLSCOPE" run -o "$D" --metrics-file "$T/clean.prom" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$PROG" --steps 300 >"$T/clean.out" 2>&1 ||
  fail "the clean job failed: $(tail -n 3 "$T/clean.out")"
"$COLLSCOPE" top --once --interval 0.1 "$D" >"$T/clean.frame" || fail "top --once of the clean job failed"
cat "$T/clean.frame"
grep -q '^4 processes (4 ended), steps: MPI_Pcontrol markers' "$T/clean.frame" || fail "the frame does not see the 4 ended processes and their markers"
grep -Eq '^ +0 +299 ' "$T/clean.frame" || fail "rank 0 did not complete 299 steps in the view"
grep -qi 'alarm.*turned slow' "$T/clean.frame" && fail "the clean job raised an alarm"
grep -q 'live alarm' "$T/clean.out" && fail "collscope run told an alarm of the clean job"
"$COLLSCOPE" report "$D" 2>/dev/null | grep -q '^Alarms raised' && fail "the clean job's report has alarms"
"$COLLSCOPE" report "$D" --format json 2>/dev/null | grep -q '"live_alarms": \[\],' || fail "the clean job's JSON report has live alarms"
echo "ok: the clean job raised no alarm"

# ---- bad input: one message, non-zero exit ----
rc=0
"$COLLSCOPE" top --once "$T/nowhere" >/dev/null 2>"$T/err" || rc=$?
expect_eq "top of a missing folder exits" "$rc" 1
rc=0
"$COLLSCOPE" top --once --metrics-port 99999 "$D" >/dev/null 2>"$T/err" || rc=$?
expect_eq "a bad --metrics-port exits" "$rc" 1
grep -q 'port' "$T/err" || fail "no message names the port"
pass
