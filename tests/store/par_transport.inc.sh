# par_transport.inc.sh: shared by par_transport*.sh. Makes a 64-rank job
# kept as rank stores ($T/job, bench/gen_trace --rank-stores, a persistent
# straggler on rank 17), analyses a copy serially ($T/serial.json, its JSON
# report) and gives:
#   par_job NAME          a fresh copy of the unanalysed job at $T/NAME
#   par_same NAME WHAT    $T/NAME has a results.db and reports as the serial
#                         analysis does (the trace's path aside)
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/job" --rank-stores --ranks 64 --steps 12 --persistent 17:3000 --seed 5 > /dev/null ||
  fail "gen_trace --rank-stores failed"
par_job() { rm -rf "${T:?}/$1" && cp -a "$T/job" "$T/$1"; }
par_job serial
"$COLLSCOPE" analyze "$T/serial" 2> /dev/null || fail "serial analyze failed"
"$COLLSCOPE" report "$T/serial" --format json -o "$T/serial.json" || fail "report (serial) failed"
par_same() {
  [ -s "$T/$1/results.db" ] || fail "$2: no $1/results.db"
  "$COLLSCOPE" report "$T/$1" --format json -o "$T/$1.json" 2> "$T/$1.report.err" ||
    { cat "$T/$1.report.err"; fail "$2: report failed"; }
  "$PY" - "$T/serial.json" "$T/$1.json" << 'PYEOF' || fail "$2: the report differs from the serial analysis's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop("trace"); b.pop("trace")
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print("differs:", k, str(a.get(k))[:200], "|", str(b.get(k))[:200])
    sys.exit(1)
v = a["stragglers"]
if not v or v[0]["rank"] != 17 or a["processes"] != 64:
    sys.exit("want a verdict on rank 17 first among 64 processes: %s" % [(s["kind"], s["rank"]) for s in v])
PYEOF
  echo "ok: $2: results.db written, the same JSON report as the serial analysis"
}
