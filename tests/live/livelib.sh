# livelib.sh: what the tests of tests/live share (sourced after tests/lib.sh).

# watch_slow ALARM ARGS...: tests/progs/live_steps ($PROG) on 4 ranks
# under `collscope run` into D=$T/slow (metrics in $T/slow.prom, output in
# $T/slow.out, exit status in $T/slow.rc), in the background, with ARGS;
# `collscope top --once` on it every 0.25 s until a frame taken while all
# 4 processes run (none ended) shows a line starting with "ALARM ALARM
# turned slow at step" (the frame in $T/frame, printed); fails when none
# did before the job ended (30 s); then waits for the job.
watch_slow() {
  _alarm=$1
  shift
  D="$T/slow"
  ( "$COLLSCOPE" run -o "$D" --metrics-file "$T/slow.prom" -- timeout -s KILL 90 "$MPIRUN" -np 4 "$PROG" "$@" \
      >"$T/slow.out" 2>&1; echo $? >"$T/slow.rc" ) &
  _run=$!
  at_exit "kill $_run 2>/dev/null"
  _seen=
  _n=0
  while [ $_n -lt 120 ] && [ ! -s "$T/slow.rc" ]; do
    sleep 0.25
    _n=$((_n + 1))
    [ -d "$D/logs" ] || continue
    "$COLLSCOPE" top --once --interval 0.2 "$D" >"$T/frame" 2>"$T/frame.err" || fail "top --once failed: $(cat "$T/frame.err")"
    if grep -q '^4 processes (0 ended)' "$T/frame" && grep -q "^ALARM $_alarm turned slow at step" "$T/frame"; then
      _seen=1
      break
    fi
  done
  cat "$T/frame"
  [ -n "$_seen" ] || fail "no frame taken while the job ran named the alarm of $_alarm"
  wait $_run
}

# alarm_json STEP MINFACTOR COND: the JSON report of the job in $D (in
# $T/report.json) has one live alarm, slow, from step STEP to the end, its
# factor above MINFACTOR, and COND (a Python condition on the alarm, a)
# holds.
alarm_json() {
  "$COLLSCOPE" report "$D" --format json >"$T/report.json" 2>/dev/null || fail "report --format json failed"
  /usr/bin/python3 - "$T/report.json" "$1" "$2" "$3" <<'PY' || fail "the JSON report's live_alarms"
import json, sys
a = json.load(open(sys.argv[1]))["live_alarms"]
assert len(a) == 1, a
a = a[0]
assert a["kind"] == "slow" and eval(sys.argv[4]), a
assert a["step"] == int(sys.argv[2]) and a["until_step"] == -1 and a["factor"] > float(sys.argv[3]), a
print("ok: the JSON report's live_alarms:", a["text"])
PY
}
