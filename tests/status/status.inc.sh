# status.inc.sh: `collscope status` on 4-rank jobs of tests/progs/hang
# under one MPI ($CS_MPI) that hang or fail in each way it diagnoses: while
# the job is stuck (within 20 s of the hang, --after 2), and again post
# mortem once every rank was killed with SIGKILL (as a scheduler ends a
# job); the trace ingested after holds the calls that never returned (in
# flight) with their op and sequence number (when a rank dies, the MPI
# library may end the others' calls with an error first: then fewer). The culprit, the call, its
# communicator, seq, peer and call site are named. A job that ends well is
# "finished" (exit 0). Sourced by status_ompi.sh and status_mpich.sh.
need_mpi "$CS_MPI"
MPIRUN=$(mpirun_for "$CS_MPI")
case $CS_MPI in openmpi) PROG="$B/tests/progs/hang_ompi" EXTRA=--oversubscribe ;; *) PROG="$B/tests/progs/hang_mpich" EXTRA= ;; esac
[ -x "$PROG" ] || skip "$PROG not built"
PNAME=$(basename "$PROG")

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
  pkill -KILL -x "$PNAME" 2>/dev/null
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

hang skip \
  'missing_rank: seq 3 of MPI_COMM_WORLD \(MPI_Allreduce, 8 B\): ranks 0,2,3 waiting [0-9.]+ s; rank 1 never entered: it is in MPI_Recv from rank 2 \(tag 9\) since [0-9.]+ s at hang\.c:[0-9]+' \
  'rank 1 never entered: it died without an exit record \(killed\?\) in MPI_Recv at hang\.c:[0-9]+' \
  "(op = 'MPI_Allreduce' AND seq = 3 AND rank IN (0,2,3)) OR (op = 'MPI_Recv' AND rank = 1 AND tag = 9)" 4
hang mismatch \
  'mismatch at seq 3 of MPI_COMM_WORLD: ranks 0,2,3 in MPI_Allreduce, but rank 1 in MPI_Bcast \(root 0\)' \
  'mismatch at seq 3 of MPI_COMM_WORLD: ranks 0,2,3 in MPI_Allreduce, but rank 1 in MPI_Bcast \(root 0\)' \
  "seq = 3 AND ((op = 'MPI_Allreduce' AND rank IN (0,2,3)) OR (op = 'MPI_Bcast' AND rank = 1))" 4
hang deadlock2 \
  'deadlock, a cycle of 2 ranks: rank 1 \(in MPI_Recv from rank 2 \(tag 7\) since [0-9.]+ s at hang\.c:[0-9]+ \(main\)\) -> rank 2 \(in MPI_Recv from rank 1 \(tag 7\)' \
  'rank 1 never entered: it died without an exit record \(killed\?\) in MPI_Recv' \
  "op = 'MPI_Recv' AND rank IN (1,2) AND tag = 7" 2
hang deadlock3 \
  'deadlock, a cycle of 3 ranks: rank 1 \(in MPI_Recv from rank 2 .*\) -> rank 2 \(in MPI_Recv from rank 3 .*\) -> rank 3 \(in MPI_Recv from rank 1 .*\) -> rank 1' \
  'rank 3 never entered: it died without an exit record \(killed\?\) in MPI_Recv' \
  "op = 'MPI_Recv' AND rank IN (1,2,3) AND tag = 7" 3
hang compute \
  'rank 1 never entered: it is outside any traced call since [0-9.]+ s \(its last call: MPI_Sendrecv at hang\.c:[0-9]+' \
  'rank 1 never entered: it died without an exit record \(killed\?\); its last call: MPI_Sendrecv' \
  "op = 'MPI_Allreduce' AND seq = 3" 3
hang kill \
  'rank 1 never entered: it died without an exit record \(killed\?\); its last call: MPI_Sendrecv' \
  'rank 1 never entered: it died without an exit record' \
  "op = 'MPI_Allreduce' AND seq = 3 AND rank != 1" 1+

# a job that ends well
"$COLLSCOPE" run -o "$T/none" -- "$MPIRUN" -np 4 $EXTRA "$PROG" --mode none >"$T/none.out" 2>&1 || fail "none: the run failed"
"$COLLSCOPE" status "$T/none" >"$T/none.status" 2>&1 || fail "none: status exited $? on a finished job: $(cat "$T/none.status")"
grep -q 'finished' "$T/none.status" && grep -q '^  ranks 0-3: finished' "$T/none.status" ||
  fail "none: $(cat "$T/none.status")"
echo "ok: a job that ended well is finished"
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
