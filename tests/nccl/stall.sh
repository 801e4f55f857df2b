#!/bin/sh
# A stalled NCCL kernel (stand-ins, 4 ranks of the NCCL trainer): the
# stand-ins' CS_STANDIN_STALL_RANK/AFTER stop rank R's stream before its
# collective of seq N (its GPU work never starts) while the other ranks'
# kernels of that collective start and wait forever; every rank's CPU then
# waits in cudaStreamSynchronize, outside any traced call. `collscope
# status --after 2` names the stalled rank, the op, the communicator and
# the seq while the job hangs (within the limit plus 2 s of the enqueue),
# and again post mortem once every rank was killed with SIGKILL; the
# ingested trace has each rank's collective as a span whose GPU work is in
# flight (flags 512|1024, GPU end at the log's last time, no GPU begin on
# the stalled rank). Ungrouped (rank 2, seq 3) and in an NCCL group (rank
# 1: the group's calls share their GPU work, the first is named). A job
# without the stall leaves no GPU work in flight.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
export OMPI_MCA_mca_base_env_list="LD_LIBRARY_PATH;CS_STANDIN_STALL_RANK;CS_STANDIN_STALL_AFTER"
MPIRUN=$(mpirun_for openmpi)
AFTER=2

# kill_ranks DIR: SIGKILL every rank of the job traced into DIR (the pids of
# its logs, those that are still nccl_trainer processes).
kill_ranks() {
  for _f in "$1"/logs/*.cslog; do
    _p=${_f##*-}
    _p=${_p%.cslog}
    [ "$(cat "/proc/$_p/comm" 2>/dev/null)" = nccl_trainer ] && kill -KILL "$_p" 2>/dev/null
  done
  return 0
}

# stall NAME RANK AFTER SEQ ARGS...: the trainer with rank RANK's stream
# stalled at its communicator's seq AFTER, the GPU work of seq SEQ named.
stall() {
  _n=$1 _r=$2 _a=$3 _seq=$4
  shift 4
  _d=$T/$_n
  at_exit "kill_ranks '$_d'"
  CS_STANDIN_STALL_RANK=$_r CS_STANDIN_STALL_AFTER=$_a "$COLLSCOPE" run -o "$_d" -- \
    timeout -s KILL 90 "$MPIRUN" -np 4 "$TRAINER" --steps 100000 "$@" > "$_d.out" 2>&1 &
  _run=$!
  _others=$(for k in 0 1 2 3; do [ "$k" = "$_r" ] || printf '%s,' "$k"; done)
  _others=${_others%,}
  _live="^nccl_stall: seq $_seq of nccl comm 1 \\(4 ranks\\) \\(ncclAllReduce, [0-9]+ B\\): rank $_r stalled: GPU work never started \\(the stream is stuck before it\\), enqueued [0-9.]+ s ago; ranks $_others waiting: GPU work started, in flight [0-9.]+ s$"
  _i=0 _rc=0
  while [ $_i -lt 120 ]; do
    sleep 0.25
    _i=$((_i + 1))
    [ -d "$_d/logs" ] || continue
    _rc=0
    "$COLLSCOPE" status "$_d" --after $AFTER > "$_d.status" 2> "$_d.status.err" || _rc=$?
    [ $_rc -eq 3 ] && grep -Eq -- "$_live" "$_d.status" && break
  done
  [ $_rc -eq 3 ] && grep -Eq -- "$_live" "$_d.status" || {
    cat "$_d.status" "$_d.status.err" "$_d.out" >&2
    kill_ranks "$_d"
    fail "$_n: status never said /$_live/ (exit $_rc) within 30 s"
  }
  _line=$(grep -E -- "$_live" "$_d.status")
  echo "ok: $_n: live: $_line"
  # found within the limit plus 2 s of the enqueue (polled every 0.25 s)
  _age=$(echo "$_line" | sed 's/.*enqueued \([0-9.]*\) s ago.*/\1/')
  awk -v a="$_age" -v l=$AFTER 'BEGIN { exit !(a + 0 >= l && a + 0 < l + 2) }' ||
    fail "$_n: first found $_age s after the enqueue, want within $AFTER + 2 s"
  echo "ok: $_n: found $_age s after the enqueue (limit $AFTER s)"
  # the per-rank lines: the stalled rank, and the others alike on one line
  grep -Eq "^  rank $_r: GPU work of ncclAllReduce seq $_seq of nccl comm 1 \\(4 ranks\\) not started, enqueued [0-9.]+ s ago$" "$_d.status" ||
    { cat "$_d.status" >&2; fail "$_n: no GPU line of rank $_r"; }
  grep -Eq "^  ranks $_others: GPU work of ncclAllReduce seq $_seq of nccl comm 1 \\(4 ranks\\) started, not finished, enqueued [0-9.-]+ s ago$" "$_d.status" ||
    { cat "$_d.status" >&2; fail "$_n: no GPU line of ranks $_others"; }
  "$COLLSCOPE" status "$_d" --after $AFTER --format json > "$_d.json" || [ $? -eq 3 ] || fail "$_n: status --format json failed"
  "$PYTHON3" - "$_d.json" "$_r" "$_seq" <<'PY' || fail "$_n: status --format json"
import json, sys
d = json.load(open(sys.argv[1]))
st = [x["text"] for x in d["diagnosis"] if x["kind"] == "nccl_stall"]
assert d["state"] == "hang or failure" and len(st) == 1, d
assert st[0].startswith("seq %s of nccl comm 1 " % sys.argv[3]) and "rank %s stalled" % sys.argv[2] in st[0], st
assert len(d["gpu_in_flight"]) == 2, d["gpu_in_flight"]
PY
  echo "ok: $_n: --format json has the nccl_stall diagnosis and 2 GPU lines"

  kill_ranks "$_d"
  wait $_run
  _rc=0
  "$COLLSCOPE" status "$_d" --after $AFTER > "$_d.post" 2>&1 || _rc=$?
  _post="^nccl_stall: seq $_seq of nccl comm 1 \\(4 ranks\\) \\(ncclAllReduce, [0-9]+ B\\): rank $_r stalled: GPU work never started .*; ranks $_others waiting: GPU work started, in flight [0-9.]+ s; 4 of its ranks gone without an exit record \\(killed\\?\\)$"
  [ $_rc -eq 3 ] && grep -Eq -- "$_post" "$_d.post" || {
    cat "$_d.post" >&2
    fail "$_n: post mortem: status said no /$_post/ (exit $_rc)"
  }
  echo "ok: $_n: post mortem: $(grep -E -- "$_post" "$_d.post" | cut -c1-160)..."

  # the ingested trace (collscope run converted the logs once the job died)
  db=$_d/trace.db
  [ -s "$db" ] || fail "$_n: no trace.db after the job"
  expect_eq "$_n: spans whose GPU work is in flight, per rank" \
    "$(q "$db" "SELECT group_concat(rank || ':' || op || ':' || seq, ' ') FROM (SELECT rank, op, seq FROM spans
                WHERE flags & 1024 AND seq = $_seq ORDER BY rank)")" \
    "0:ncclAllReduce:$_seq 1:ncclAllReduce:$_seq 2:ncclAllReduce:$_seq 3:ncclAllReduce:$_seq"
  expect_eq "$_n: ... flagged in flight (512) too, ending at their log's last time" \
    "$(q "$db" "SELECT count(*) FROM spans s WHERE flags & 1024 AND flags & 512 AND gpu_end_ns >= end_ns
                AND gpu_end_ns = (SELECT max(max(end_ns), max(gpu_end_ns)) FROM spans WHERE rank = s.rank)")" \
    "$(q "$db" "SELECT count(*) FROM spans WHERE flags & 1024")"
  expect_eq "$_n: ... with no GPU begin on the stalled rank only" \
    "$(q "$db" "SELECT group_concat(rank) FROM (SELECT DISTINCT rank FROM spans WHERE flags & 1024 AND seq = $_seq
                AND gpu_begin_ns IS NULL ORDER BY rank)")" "$_r"
  expect_eq "$_n: ... on the communicator status named" \
    "$(q "$db" "SELECT count(*) FROM spans WHERE flags & 1024 AND seq = $_seq AND comm =
                (SELECT id FROM comms WHERE how = 'nccl' GROUP BY id ORDER BY min(created_ns), id LIMIT 1)")" 4
  expect_eq "$_n: earlier collectives of the communicator completed on the GPU" \
    "$(q "$db" "SELECT count(*) FROM spans WHERE comm = (SELECT comm FROM spans WHERE flags & 1024 LIMIT 1)
                AND seq < $_seq AND (flags & 1024 OR gpu_end_ns IS NULL)")" 0
  # the report's Failures section: the same stall, post mortem from the trace
  "$COLLSCOPE" report "$_d" --format json -o "$_d.json" > /dev/null 2>&1 || fail "$_n: report failed"
  expect_eq "$_n: report: nccl_stall culprit, waiting ranks, call, seq" \
    "$(python3 -c 'import json,sys
f=[x for x in json.load(open(sys.argv[1]))["failures"] if x["kind"] == "nccl_stall"]
print(len(f), f[0]["culprits"], f[0]["waiting"], f[0]["call"], f[0]["seq"])' "$_d.json")" \
    "1 [$_r] [$(echo "$_others" | sed 's/,/, /g')] ncclAllReduce $_seq"
  "$COLLSCOPE" report "$_d" > "$_d.report" 2>&1
  grep -Eq "nccl_stall: seq $_seq of .*\\(ncclAllReduce, [0-9]+ B\\): rank $_r stalled: GPU work never started" "$_d.report" ||
    fail "$_n: the text report has no nccl_stall line: $(grep -A3 Failures "$_d.report")"
  echo "ok: $_n: report: $(grep -o 'nccl_stall: .*' "$_d.report" | cut -c1-120)..."
}

# ncclAllReduce seq 3 of the world communicator: ncclBroadcast is seq 0,
# then one ncclAllReduce a step.
stall plain 2 3 3
# --buckets 3: three grouped ncclAllReduce a step (seq 1-3, 4-6, ...); the
# stall at seq 5 takes the group's shared GPU work, named by its first call.
stall grouped 1 5 4 --buckets 3
expect_eq "grouped: the group's three calls in flight on each rank" \
  "$(q "$T/grouped/trace.db" "SELECT group_concat(n) FROM (SELECT count(*) n FROM spans WHERE flags & 1024 GROUP BY rank ORDER BY rank)")" \
  "3,3,3,3"

# a job without the stall: nothing in flight on the GPU
run_trainer "$T/none" "$T/none.out" --steps 4
"$COLLSCOPE" status "$T/none" --after $AFTER > "$T/none.status" 2>&1 || fail "status of a finished job: $(cat "$T/none.status")"
grep -q 'GPU work\|nccl_stall' "$T/none.status" && fail "GPU work in flight in a finished job: $(cat "$T/none.status")"
expect_eq "no stall: spans whose GPU work is in flight" "$(q "$T/none/trace.db" "SELECT count(*) FROM spans WHERE flags & 1536")" 0
expect_eq "no stall: collectives with GPU times" \
  "$(q "$T/none/trace.db" "SELECT count(*) FROM spans WHERE op LIKE 'nccl%' AND kind IN ('coll', 'rooted') AND gpu_end_ns IS NULL")" 0
pass
