#!/bin/sh
# A real Prometheus (Debian's prometheus package) scrapes `collscope run
# --metrics-port` every second during a 4-rank Open MPI job of
# tests/progs/live_steps whose rank 2 turns slow at step 1000 (4 s in); its HTTP API
# then shows rank 2's own time per step and the job's step time rising,
# and rank 2's alarm set (and no other rank's). promtool accepts what the
# endpoint serves. Skipped (77) only where prometheus is not installed and
# CI is not set. docs/live.md.
. "${srcdir:-.}/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/live_steps_ompi"
[ -x "$PROG" ] || skip "$PROG not built"
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  [ "${CI:-}" = true ] && fail "prometheus is not installed (scripts/setup.sh installs it)"
  skip "prometheus (Debian package) is not installed"
fi
command -v curl >/dev/null 2>&1 || skip "curl is not installed"
# two free loopback ports
set -- $(/usr/bin/python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
MP=$1 PP=$2
cat >"$T/prom.yml" <<EOF2
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: collscope
    static_configs:
      - targets: ['127.0.0.1:$MP']
EOF2
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$PP" \
  >"$T/prom.log" 2>&1 &
prom=$!
at_exit "kill $prom 2>/dev/null; wait $prom 2>/dev/null"
API="http://127.0.0.1:$PP/api/v1"
n=0
until curl -sf "http://127.0.0.1:$PP/-/ready" >/dev/null 2>&1; do
  n=$((n + 1))
  [ $n -lt 150 ] || { tail -n 20 "$T/prom.log" >&2; fail "prometheus did not become ready within 15 s"; }
  sleep 0.1
done
echo "ok: prometheus ready on port $PP, scraping 127.0.0.1:$MP"
# Prometheus applies its targets a few seconds after it starts: wait for
# its first try at ours (down: nothing listens yet), so that it scrapes the
# job from its start
n=0
until curl -sf "$API/targets" | grep -Eq '"health":"(down|up)"'; do
  n=$((n + 1))
  [ $n -lt 200 ] || fail "prometheus never tried its target within 20 s"
  sleep 0.1
done
echo "ok: prometheus tried its target"

D="$T/job"
( "$COLLSCOPE" run -o "$D" --metrics-port "127.0.0.1:$MP" -- timeout -s KILL 90 "$MPIRUN" -np 4 "$PROG" --steps 1400 \
    --slow-rank 2 --slow-from 1000 --slow-us 8000 >"$T/job.out" 2>&1; echo $? >"$T/job.rc" ) &
run=$!
at_exit "kill $run 2>/dev/null"
# what the endpoint serves, once the job is under way
n=0
until curl -sf "http://127.0.0.1:$MP/metrics" >"$T/scrape" 2>/dev/null && grep -q 'collscope_rank_steps_total{rank="2"} [1-9]' "$T/scrape"; do
  n=$((n + 1))
  [ $n -lt 150 ] || fail "the endpoint served no steps within 15 s"
  sleep 0.1
done
promtool check metrics <"$T/scrape" >"$T/promtool.out" 2>&1 || { cat "$T/promtool.out" >&2; fail "promtool refused the endpoint's metrics"; }
echo "ok: promtool accepts what the endpoint serves"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MP/nothing")
expect_eq "another path" "$code" 404
n=0
while [ ! -s "$T/job.rc" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
[ -s "$T/job.rc" ] || fail "the job did not end within 60 s"
expect_eq "the job's exit status" "$(cat "$T/job.rc")" 0
sleep 1

# ask Prometheus
query() { curl -sf --data-urlencode "query=$1" "$API/query" || fail "prometheus query failed: $1"; }
query 'max_over_time(collscope_alarm{rank="2"}[5m])' >"$T/q_alarm2"
query 'max(max_over_time(collscope_alarm{rank=~"0|1|3"}[5m]))' >"$T/q_alarm_others"
query 'min_over_time(collscope_rank_own_seconds{rank="2"}[5m])' >"$T/q_own_min"
query 'max_over_time(collscope_rank_own_seconds{rank="2"}[5m])' >"$T/q_own_max"
query 'min_over_time(collscope_rank_step_seconds{rank="2"}[5m])' >"$T/q_step_min"
query 'max_over_time(collscope_rank_step_seconds{rank="2"}[5m])' >"$T/q_step_max"
query 'count_over_time(collscope_rank_steps_total{rank="2"}[5m])' >"$T/q_samples"
/usr/bin/python3 - "$T" <<'PY' || fail "what prometheus recorded"
import json, sys
d = sys.argv[1]
def val(name):
    r = json.load(open(f"{d}/{name}"))
    assert r["status"] == "success", r
    res = r["data"]["result"]
    assert res, f"{name}: no series"
    return float(res[0]["value"][1])
samples = val("q_samples")
print(f"ok: prometheus holds {samples:.0f} scrapes of rank 2")
assert samples >= 3, "fewer than 3 scrapes"
assert val("q_alarm2") == 1, "rank 2's alarm never set"
print("ok: rank 2's alarm was set")
assert val("q_alarm_others") == 0, "another rank's alarm was set"
print("ok: no other rank's alarm was set")
lo, hi = val("q_own_min"), val("q_own_max")
print(f"ok: rank 2's own time per step went from {lo*1e3:.2f} to {hi*1e3:.2f} ms")
assert hi > 2 * lo, "rank 2's own time per step did not rise past twice its low"
lo, hi = val("q_step_min"), val("q_step_max")
print(f"ok: rank 2's step time went from {lo*1e3:.2f} to {hi*1e3:.2f} ms")
assert hi > 1.8 * lo, "rank 2's step time did not rise"
PY
pass
