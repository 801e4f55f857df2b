# status.inc.sh: `collscope status` on 4-rank jobs of tests/progs/hang
# under one MPI ($CS_MPI) that hang or fail in each way it diagnoses: while
# the job is stuck (within 20 s of the hang, --after 2), and again post
# mortem once every rank was killed with SIGKILL (as a scheduler ends a
# job); the trace ingested after holds the calls that never returned (in
# flight) with their op and sequence number (when a rank dies, the MPI
# library may end the others' calls with an error first: then fewer). The culprit, the call, its
# communicator, seq, peer and call site are named. A job that ends well is
# "finished" (exit 0). Each case is also checked post mortem through
# `collscope report` of the trace (the Failures section: text, JSON,
# JUnit, --fail-on failures): the culprit ranks, the call, communicator,
# seq and call site of the finding. Sourced by status_ompi.sh and
# status_mpich.sh.
need_mpi "$CS_MPI"
MPIRUN=$(mpirun_for "$CS_MPI")
case $CS_MPI in openmpi) PROG="$B/tests/progs/hang_ompi" EXTRA=--oversubscribe ;; *) PROG="$B/tests/progs/hang_mpich" EXTRA= ;; esac
[ -x "$PROG" ] || skip "$PROG not built"

# hang MODE LIVE_REGEX POST_REGEX INFLIGHT_SQL_COUNT: run it, wait for
# status to say LIVE_REGEX (exit 3), kill every rank, check POST_REGEX
# post mortem and the in-flight spans the ingest kept (a WHERE clause on
# the spans view and the count it must have; N+: at least N).
hang() {
  _m=$1 _live=$2 _post=$3 _where=$4 _count=$5
  _d="$T/$_m"
  "$COLLSCOPE" run -o "$_d" -- timeout -s KILL 60 "$MPIRUN" -np 4 $EXTRA "$PROG" --mode "$_m" >"$_d.out" 2>&1 &
  _run=$!
  _n=0 _rc=0
  while [ $_n -lt 80 ]; do
    sleep 0.25
    _n=$((_n + 1))
    [ -d "$_d/logs" ] || continue
    _rc=0
    "$COLLSCOPE" status "$_d" --after 2 >"$_d.status" 2>"$_d.status.err" || _rc=$?
    [ $_rc -eq 3 ] && grep -Eq -- "$_live" "$_d.status" && break
  done
  kill_ranks "$_d"
  [ $_rc -eq 3 ] && grep -Eq -- "$_live" "$_d.status" || {
    cat "$_d.status" "$_d.status.err" >&2
    fail "$_m: status never said /$_live/ (exit $_rc) within 20 s"
  }
  echo "ok: $_m: live: $(grep -E -- "$_live" "$_d.status" | head -n 1 | cut -c1-200)"
  wait $_run
  _rc=0
  "$COLLSCOPE" status "$_d" --after 2 >"$_d.post" 2>&1 || _rc=$?
  [ $_rc -eq 3 ] && grep -Eq -- "$_post" "$_d.post" || {
    cat "$_d.post" >&2
    fail "$_m: post mortem: status said no /$_post/ (exit $_rc)"
  }
  echo "ok: $_m: post mortem: $(grep -E -- "$_post" "$_d.post" | head -n 1 | cut -c1-200)"
  _got=$(sqlite3 "$_d/trace.db" "SELECT COUNT(*) FROM spans WHERE (flags & 512) != 0 AND $_where") ||
    fail "$_m: cannot read the ingested trace"
  case $_count in
    *+) [ "$_got" -ge "${_count%+}" ] || fail "$_m: $_got in-flight spans where $_where, want $_count" ;;
    *) [ "$_got" = "$_count" ] || fail "$_m: $_got in-flight spans where $_where, want $_count" ;;
  esac
  echo "ok: $_m: the trace keeps $_got call(s) in flight where $_where"
}

# report MODE KIND CULPRITS CALL SEQ SITE_REGEX TEXT_REGEX: post mortem,
# `collscope report` of the trace has a Failures section with a finding of
# KIND whose culprits begin with CULPRITS (JSON list), about CALL on
# MPI_COMM_WORLD at SEQ (-1: none) with a call site matching SITE_REGEX,
# printed as TEXT_REGEX; JUnit has a failing case per finding and
# --fail-on failures exits 3.
report() {
  _m=$1 _kind=$2 _cul=$3 _call=$4 _seq=$5 _site=$6 _text=$7
  _d="$T/$_m"
  _rc=0
  "$COLLSCOPE" report "$_d" >"$_d.report" 2>"$_d.report.err" || _rc=$?
  [ $_rc -eq 0 ] || fail "$_m: report exited $_rc: $(cat "$_d.report.err")"
  sed -n '/^Failures/,/^$/p' "$_d.report" >"$_d.failures"
  grep -Eq -- "^  $_kind: $_text" "$_d.failures" || {
    cat "$_d.report" >&2
    fail "$_m: the report's Failures section has no /$_kind: $_text/"
  }
  echo "ok: $_m: report: $(grep -E -- "^  $_kind: $_text" "$_d.failures" | head -n 1 | cut -c1-200)"
  "$COLLSCOPE" report "$_d" --format json >"$_d.json" 2>/dev/null || fail "$_m: report --format json failed"
  /usr/bin/python3 - "$_d.json" "$_kind" "$_cul" "$_call" "$_seq" "$_site" "$_text" <<'PY' || fail "$_m: report JSON failures"
import json, re, sys
d = json.load(open(sys.argv[1]))
kind, cul, call, seq, site, text = sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7]
# the culprits named first (a rank the death of another held up may follow)
f = [x for x in d["failures"] if x["kind"] == kind and x["culprits"][:len(cul)] == cul]
assert f, ("no finding", kind, cul, d["failures"])
x = f[0]
assert x["call"] == call and x["comm"] == "MPI_COMM_WORLD" and x["seq"] == seq, x
assert re.fullmatch(site, x["site"]), (site, x)
assert re.match(text, x["text"]), (text, x)
print("ok: %s: report JSON: %s ranks %s, %s seq %d of %s at %s" % (sys.argv[1].split("/")[-1], kind, cul, x["call"], x["seq"], x["comm"], x["site"]))
PY
  "$COLLSCOPE" report "$_d" --format junit >"$_d.xml" 2>/dev/null || fail "$_m: report --format junit failed"
  _n=$(/usr/bin/python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["failures"]))' "$_d.json")
  # a failing case per finding; the suite's failures attribute counts
  # every failing case (a straggler verdict of the loaded run too)
  _nx=$(/usr/bin/python3 - "$_d.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = list(root.iter("testcase"))
mine = [c for c in cases if c.get("classname") == "collscope.failures"]
failing = sum(1 for c in cases if c.find("failure") is not None)
ok = all(c.find("failure") is not None for c in mine)
ok = ok and all(int(s.get("failures")) == failing for s in [root] + list(root.iter("testsuite")))
print(len(mine) if ok else "bad (failures attribute %s, %d failing cases)" % (root.get("failures"), failing))
PY
)
  [ "$_nx" = "$_n" ] || fail "$_m: JUnit: $_nx failure cases for $_n failures"
  _rc=0
  "$COLLSCOPE" report "$_d" --fail-on failures >/dev/null 2>&1 || _rc=$?
  [ $_rc -eq 3 ] || fail "$_m: report --fail-on failures exited $_rc, want 3"
  echo "ok: $_m: JUnit has $_n failing case(s); --fail-on failures exits 3"
}

hang skip \
  'missing_rank: seq 3 of MPI_COMM_WORLD \(MPI_Allreduce, 8 B\): ranks 0,2,3 waiting [0-9.]+ s; rank 1 never entered: it is in MPI_Recv from rank 2 \(tag 9\) since [0-9.]+ s at hang\.c:[0-9]+' \
  'rank 1 never entered: it died without an exit record \(killed\?\) in MPI_Recv at hang\.c:[0-9]+' \
  "(op = 'MPI_Allreduce' AND seq = 3 AND rank IN (0,2,3)) OR (op = 'MPI_Recv' AND rank = 1 AND tag = 9)" 4
report skip missing_rank '[1]' MPI_Allreduce 3 'hang\.c:[0-9]+ \(main\)' \
  'seq 3 of MPI_COMM_WORLD \(MPI_Allreduce, 8 B\): ranks 0,2,3 waiting [0-9.]+ s; rank 1 never entered: it died without an exit record \(killed\?\) in MPI_Recv at hang\.c:[0-9]+'
hang mismatch \
  'mismatch at seq 3 of MPI_COMM_WORLD: ranks 0,2,3 in MPI_Allreduce, but rank 1 in MPI_Bcast \(root 0\)' \
  'mismatch at seq 3 of MPI_COMM_WORLD: ranks 0,2,3 in MPI_Allreduce, but rank 1 in MPI_Bcast \(root 0\)' \
  "seq = 3 AND ((op = 'MPI_Allreduce' AND rank IN (0,2,3)) OR (op = 'MPI_Bcast' AND rank = 1))" 4
report mismatch mismatch '[1]' MPI_Bcast 3 'hang\.c:[0-9]+ \(main\)' \
  'mismatch at seq 3 of MPI_COMM_WORLD: ranks 0,2,3 in MPI_Allreduce, but rank 1 in MPI_Bcast \(root 0\)'
hang deadlock2 \
  'deadlock, a cycle of 2 ranks: rank 1 \(in MPI_Recv from rank 2 \(tag 7\) since [0-9.]+ s at hang\.c:[0-9]+ \(main\)\) -> rank 2 \(in MPI_Recv from rank 1 \(tag 7\)' \
  'rank 1 never entered: it died without an exit record \(killed\?\) in MPI_Recv' \
  "op = 'MPI_Recv' AND rank IN (1,2) AND tag = 7" 2
report deadlock2 deadlock '[1, 2]' MPI_Recv -1 'hang\.c:[0-9]+ \(main\)' \
  'deadlock, a cycle of 2 ranks: rank 1 \(died without an exit record \(killed\?\) in MPI_Recv at hang\.c:[0-9]+ \(main\)\) -> rank 2 \(died without an exit record \(killed\?\) in MPI_Recv'
hang deadlock3 \
  'deadlock, a cycle of 3 ranks: rank 1 \(in MPI_Recv from rank 2 .*\) -> rank 2 \(in MPI_Recv from rank 3 .*\) -> rank 3 \(in MPI_Recv from rank 1 .*\) -> rank 1' \
  'rank 3 never entered: it died without an exit record \(killed\?\) in MPI_Recv' \
  "op = 'MPI_Recv' AND rank IN (1,2,3) AND tag = 7" 3
report deadlock3 deadlock '[1, 2, 3]' MPI_Recv -1 'hang\.c:[0-9]+ \(main\)' \
  'deadlock, a cycle of 3 ranks: rank 1 \(.* in MPI_Recv .*\) -> rank 2 \(.* in MPI_Recv .*\) -> rank 3 \(.* in MPI_Recv .*\) -> rank 1'
hang compute \
  'rank 1 never entered: it is outside any traced call since [0-9.]+ s \(its last call: MPI_Sendrecv at hang\.c:[0-9]+' \
  'rank 1 never entered: it died without an exit record \(killed\?\); its last call: MPI_Sendrecv' \
  "op = 'MPI_Allreduce' AND seq = 3" 3
report compute missing_rank '[1]' MPI_Allreduce 3 'hang\.c:[0-9]+ \(main\)' \
  'seq 3 of MPI_COMM_WORLD \(MPI_Allreduce, 8 B\): ranks 0,2,3 waiting [0-9.]+ s; rank 1 never entered: it died without an exit record \(killed\?\); its last call: MPI_Sendrecv at hang\.c:[0-9]+'
hang kill \
  'rank 1 never entered: it died without an exit record \(killed\?\); its last call: MPI_Sendrecv' \
  'rank 1 never entered: it died without an exit record' \
  "op = 'MPI_Allreduce' AND seq = 3 AND rank != 1" 1+
report kill missing_rank '[1]' MPI_Allreduce 3 'hang\.c:[0-9]+ \(main\)' \
  'seq 3 of MPI_COMM_WORLD \(MPI_Allreduce, 8 B\): ranks? [0-9,]+ waiting [0-9.]+ s; rank 1 never entered: it died without an exit record \(killed\?\); its last call: MPI_Sendrecv'
# one rank exits early without MPI_Finalize (the MPI library may end the
# others soon after: then they died, and the exit is named all the same)
hang exit \
  'dead_rank: rank 1 \(pid [0-9]+ on [^)]*\) exited without MPI_Finalize( while 3 rank\(s\) go on|; 3 other rank\(s\) never finished)' \
  'dead_rank: rank 1 \(pid [0-9]+ on [^)]*\) exited without MPI_Finalize; 3 other rank\(s\) never finished' \
  "op = 'MPI_Allreduce' AND seq = 3 AND rank = 1" 0
report exit dead_rank '[1]' MPI_Sendrecv -1 'hang\.c:[0-9]+ \(main\)' \
  'rank 1 \(pid [0-9]+ on [^)]*\) exited without MPI_Finalize; 3 other rank\(s\) never finished'

# a job that ends well
"$COLLSCOPE" run -o "$T/none" -- "$MPIRUN" -np 4 $EXTRA "$PROG" --mode none >"$T/none.out" 2>&1 || fail "none: the run failed"
"$COLLSCOPE" status "$T/none" >"$T/none.status" 2>&1 || fail "none: status exited $? on a finished job: $(cat "$T/none.status")"
grep -q 'finished' "$T/none.status" && grep -q '^  ranks 0-3: finished' "$T/none.status" ||
  fail "none: $(cat "$T/none.status")"
echo "ok: a job that ended well is finished"
"$COLLSCOPE" report "$T/none" >"$T/none.report" 2>&1 || fail "none: report failed"
! grep -q '^Failures' "$T/none.report" || fail "none: a Failures section in the report of a job that ended well"
"$COLLSCOPE" report "$T/none" --format json | /usr/bin/python3 -c 'import json, sys
assert json.load(sys.stdin)["failures"] == []' || fail "none: report JSON failures not empty"
"$COLLSCOPE" report "$T/none" --fail-on failures >/dev/null 2>&1 || fail "none: report --fail-on failures exited $?"
echo "ok: the report of a job that ended well has no Failures (JSON: []), --fail-on failures passes"
"$COLLSCOPE" status "$T/none" --format json | /usr/bin/python3 -c 'import json, sys
d = json.load(sys.stdin)
assert d["state"] == "finished" and len(d["ranks"]) == 4 and d["diagnosis"] == [], d' || fail "none: --format json"
echo "ok: --format json"
# no logs: one message, exit 1
rc=0
"$COLLSCOPE" status "$T/nothing" >"$T/nothing.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && [ "$(grep -c . "$T/nothing.out")" = 1 ] || fail "status of no job: exit $rc: $(cat "$T/nothing.out")"
echo "ok: no logs: $(cat "$T/nothing.out")"
pass
