#!/bin/sh
# Per-link alarms (docs/live.md, "Per link") on 4-rank Open MPI jobs of
# tests/progs/live_steps --pipe: each rank r of stage 0 (ranks 0-1) sends
# 1 KiB to rank r + 2 every step (MPI_Send; MPI_Irecv and MPI_Wait on the
# other end). From step 100 rank 1 sends 8 MiB instead: the transfers of
# link 1-3 take about 1 ms a step more (16 us before), no rank's own work
# changes. Expected, and asserted: one alarm, on link 1-3, whose step is
# within 10 of 100, seen while the job runs; none on link 0-2, on a rank
# or a stage; the alarm in the metrics (collscope_link_*, labels rank and
# peer), in live_alarms (subject link, rank 1, peer 3) and in the
# reports' sentence. A clean job of the same program: no link, stage or
# rank alarm. Links, like communicators, are watched on a host with more
# ranks than processors only when asked (COLLSCOPE_LINK_ALARMS=on; the
# communicators, noisier beside other work, are left off here). Beside 8
# busy loops on 2 cores the alarm is right (link 1-3 alone, from step 103)
# but the job does not end within its 90 s: its steps then take 1.6 s
# (the 8 MiB message's fragments wait for both ends to be scheduled).
. "${srcdir:-.}/tests/lib.sh"
. "$S/tests/live/livelib.sh"
need_mpi openmpi
export COLLSCOPE_LINK_ALARMS=on COLLSCOPE_COMM_ALARMS=off
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$PROG" ] || skip "$PROG not built"

watch_slow "link 1-3" --steps 260 --pipe --slow-link 1 --slow-from 100 --slow-bytes 8388608
expect_eq "the job's exit status" "$(cat "$T/slow.rc")" 0
grep -q '^LIVE_STEPS steps=260' "$T/slow.out" || fail "the job's output lacks its last line"
step=$(sed -n 's/^ALARM link 1-3 turned slow at step \([0-9]*\),.*/\1/p' "$T/frame")
[ "$step" -ge 90 ] && [ "$step" -le 110 ] || fail "link 1-3's alarm names step $step, not within 10 of 100"
echo "ok: the view names link 1-3's alarm from step $step (the change: 100) while the job runs"
grep -E '^ALARM (rank|stage|link 0-2) ' "$T/frame" && fail "a rank, a stage or the other link was alarmed"
grep 'live alarm' "$T/slow.out" >"$T/told"
cat "$T/told"
expect_eq "alarms told at the end" "$(wc -l <"$T/told")" 1
grep -q "live alarm: link 1-3 turned slow at step $step," "$T/told" || fail "run did not tell link 1-3's alarm"
echo "ok: only link 1-3 is alarmed"

M="$T/slow.prom"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$M" >"$T/promtool.out" 2>&1 || { cat "$T/promtool.out" >&2; fail "promtool check metrics refused the file"; }
  echo "ok: promtool check metrics accepts the file"
fi
grep -q '^collscope_link_alarm{rank="1",peer="3",comm="world"} 1$' "$M" || fail "the metrics do not set link 1-3's alarm"
grep -q '^collscope_link_alarm{rank="0",peer="2",comm="world"} 0$' "$M" || fail "the metrics set link 0-2's alarm (or lack it)"
expect_eq "links in the metrics" "$(grep -c '^collscope_link_alarm{' "$M")" 2
expect_eq "collscope_link_alarm_step of link 1-3" \
  "$(sed -n 's/^collscope_link_alarm_step{rank="1",peer="3",comm="world"} //p' "$M")" "$step"
tr=$(sed -n 's/^collscope_link_transfer_seconds{rank="1",peer="3",comm="world"} //p' "$M")
tr0=$(sed -n 's/^collscope_link_transfer_seconds{rank="0",peer="2",comm="world"} //p' "$M")
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$tr') > 0.0003 and float('$tr') > 5 * float('$tr0') else 1)" ||
  fail "link 1-3's transfers at the end: $tr s a step (link 0-2: $tr0 s)"
echo "ok: the metrics set link 1-3's alarm (from step $step), its transfers $tr s a step (link 0-2: $tr0 s)"

expect_eq "alarms in live_alarms" "$(q "$D/trace.db" "SELECT COUNT(*) FROM live_alarms")" 1
expect_eq "live_alarms' row" "$(q "$D/trace.db" "SELECT kind, subject, name, comm, rank, peer, until_step, step FROM live_alarms")" \
  "slow|link|link 1-3|world|1|3|-1|$step"
"$COLLSCOPE" report "$D" >"$T/report" 2>"$T/report.err" || fail "report failed: $(cat "$T/report.err")"
grep -Eq "^  link 1-3 turned slow at step $step, [0-9.]+x, until the end\$" "$T/report" || {
  sed -n '/^Alarms/,/^$/p' "$T/report" >&2; fail "the report does not say link 1-3's alarm"; }
echo "ok: the report says: $(grep 'link 1-3 turned slow' "$T/report")"
alarm_json "$step" 5 'a["subject"] == "link" and a["rank"] == 1 and a["peer"] == 3 and a["name"] == "link 1-3" and a["comm"] == "world"'

# ---- a clean job of the same program: no link, stage or rank alarm ----
D="$T/clean"
"$COLLSCOPE" run -o "$D" --metrics-file "$T/clean.prom" -- timeout -s KILL 60 "$MPIRUN" -np 4 "$PROG" --steps 200 --pipe \
  >"$T/clean.out" 2>&1 || fail "the clean job failed: $(tail -n 3 "$T/clean.out")"
grep -E 'live alarm: (link|stage|rank) ' "$T/clean.out" && fail "collscope run told an alarm of the clean job"
expect_eq "links watched in the clean job's metrics" \
  "$(grep -c '^collscope_link_alarm{rank="[01]",peer="[23]",comm="world"} 0$' "$T/clean.prom")" 2
echo "ok: the clean job raised no link, stage or rank alarm (its 2 links watched)"
rc=0
COLLSCOPE_LINK_ALARMS=maybe "$COLLSCOPE" top --once "$T/clean" >"$T/bad" 2>"$T/bad.err" || rc=$?
expect_eq "top with COLLSCOPE_LINK_ALARMS=maybe exits" "$rc" 1
expect_eq "its message" "$(cat "$T/bad.err")" "collscope: top: COLLSCOPE_LINK_ALARMS=maybe: want auto, on or off"
pass
