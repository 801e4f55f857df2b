#!/bin/sh
# collscope import on values and files that must not pass silently (issue
# 33, defects 4, 8, 9):
#  - record_param_comms records with a bad ts (-1e300, 1e30, 60 digits,
#    none, "abc"), a bad dur (1e308, negative), no args, "Seq": "x",
#    "In msg nelems" 1e29: each left out and counted by kind and fault in
#    one line for the file, exit 1, the good records imported unchanged
#    (no seq 0, no 0 bytes standing in for a bad value);
#  - a reader out of memory (ulimit -v): the message names the file and
#    the resource, and no false "no file gives rank N" follows;
#  - a FIFO named on the command line or inside a folder: named as not a
#    regular file, never waited on.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
GEN="$S/tests/import/kineto_gen.py"
check "generate traces" $PY "$GEN" "$T/good" --style nccl --ranks 2 --steps 4

# run NAME EXPECTED_STATUS ARGS...: import into $T/NAME (20 s at most),
# output in $T/NAME.txt
run() {
  _n=$1 _want=$2; shift 2
  timeout 20 "$COLLSCOPE" import -o "$T/$_n" "$@" > "$T/$_n.txt" 2>&1
  _rc=$?
  cat "$T/$_n.txt"
  expect_eq "$_n: exit status" "$_rc" "$_want"
}
# colls DIR: per rank, its collectives with their seq and bytes
colls() {
  q "$1/trace.db" "SELECT rank || ':' || count(*) || ':' || COALESCE(sum(seq), -1) || ':' || COALESCE(sum(bytes), -1)
                   FROM spans WHERE op LIKE 'nccl%' GROUP BY rank ORDER BY rank"
}

run clean 0 "$T/good"
want=$(colls "$T/clean")
echo "clean collectives (rank:count:sum seq:sum bytes): $want"
[ -n "$want" ] || fail "clean: no collectives imported"

# ---- defect 4: bad values in collective records ----
mkdir -p "$T/in-bad" && cp "$T"/good/*.json "$T/in-bad/"
$PY - "$T/in-bad/rank1.json" <<'PYEOF' || fail "inject bad records"
import json, sys
p = sys.argv[1]
d = json.load(open(p))
rpc = [e for e in d["traceEvents"] if e.get("name") == "record_param_comms" and e.get("args", {}).get("Seq") is not None]
base = rpc[-1]
def bad(**kv):
    e = json.loads(json.dumps(base))
    e["ts"] = e["ts"] + 1.0
    for k, v in kv.items():
        tgt = e["args"] if k in ("Seq", "In msg nelems") else e
        if v is None:
            del tgt[k]
        else:
            tgt[k] = v
    return e
extra = [bad(ts=-1e300), bad(ts=1e30), bad(ts=10**59), bad(ts=None), bad(ts="abc"),
         bad(dur=1e308), bad(dur=-5.0), bad(args=None), bad(Seq="x"), bad(**{"In msg nelems": 1e29})]
d["traceEvents"].extend(extra)
# (json.dump writes 10**59 with its 60 digits)
json.dump(d, open(p, "w"))
PYEOF
grep -q '"ts": 100000000000000000000000000000000000000000000000000000000000' "$T/in-bad/rank1.json" ||
  fail "the 60-digit ts is in the file"
run bad 1 "$T/in-bad"
grep -q "rank1.json: 10 records left out for bad values (communication records: 5 with no valid ts, 2 with no valid dur, 1 with no args, 1 with a Seq that is no whole number, 1 with a msg nelems that is no size)" "$T/bad.txt" ||
  fail "bad: one line naming the file and each fault"
expect_eq "bad: one line for the file" "$(grep -c 'left out for bad values' "$T/bad.txt")" 1
expect_eq "bad: the good records as imported from the clean files" "$(colls "$T/bad")" "$want"
seq0="SELECT count(*) FROM spans WHERE op LIKE 'nccl%' AND seq = 0"
expect_eq "bad: no seq 0 stands in (as many seq 0 as the clean trace)" "$(q "$T/bad/trace.db" "$seq0")" \
  "$(q "$T/clean/trace.db" "$seq0")"
expect_eq "bad: no 0 bytes stands in" \
  "$(q "$T/bad/trace.db" "SELECT count(*) FROM spans WHERE op LIKE 'nccl%' AND COALESCE(bytes, 0) = 0")" 0

# ---- defect 8: out of memory in a reader ----
$PY - "$T/in-oom" <<'PYEOF' || fail "write the large file"
import os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
for rank, n in ((0, 10), (1, 300000)):
    with open(os.path.join(d, "rank%d.json" % rank), "w") as f:
        f.write('{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": 2},\n'
                ' "traceEvents": [\n' % rank)
        line = '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":7,"ts":%d,"dur":1,"args":{"External id":%d}},\n'
        f.write("".join(line % (1000 + i * 10, i) for i in range(n)))
        f.write('{"ph":"X","cat":"cpu_op","name":"x","pid":1,"tid":1,"ts":1,"dur":1}\n],'
                ' "baseTimeNanoseconds": 1700000000000000000}\n')
PYEOF
# the binary and the small file fit in 25 MB; rank1's 300 000 kernel
# records (35 MB kept) do not
(ulimit -v 25000 && exec timeout 60 "$COLLSCOPE" import -j 1 -o "$T/oom" "$T/in-oom") > "$T/oom.txt" 2>&1
rc=$?
cat "$T/oom.txt"
expect_eq "oom: exit status (trace of the other file)" "$rc" 1
grep -q "import: .*in-oom/rank1.json: out of memory (the process's memory limit)" "$T/oom.txt" ||
  fail "oom: the message names the file and the resource"
grep -q "no file gives rank 1" "$T/oom.txt" && fail "oom: a false 'no file gives rank 1'"
grep -q "1 of 2 ranks missing (their files were left out above)" "$T/oom.txt" || fail "oom: the missing rank's cause"
grep -q "^collscope: import: out of memory" "$T/oom.txt" && fail "oom: a message without the file"
expect_eq "oom: rank 0 imported" "$(q "$T/oom/trace.db" "SELECT group_concat(rank) FROM processes")" 0

# ---- defect 9: FIFOs ----
mkfifo "$T/cmd.json" || skip "mkfifo failed"
run fifo_cmd 1 "$T/cmd.json" "$T/good/rank0.json" "$T/good/rank1.json"
grep -q "cmd.json: not a regular file (a FIFO): not read" "$T/fifo_cmd.txt" || fail "fifo_cmd: the FIFO named"
expect_eq "fifo_cmd: the other files imported" "$(q "$T/fifo_cmd/trace.db" "SELECT count(*) FROM processes")" 2
run fifo_only 3 "$T/cmd.json"
grep -q "cmd.json: not a regular file (a FIFO): not read" "$T/fifo_only.txt" || fail "fifo_only: the FIFO named"

mkdir -p "$T/in-fifo" && cp "$T"/good/*.json "$T/in-fifo/"
mkfifo "$T/in-fifo/rank9.json"
run fifo_dir 1 "$T/in-fifo"
grep -q "in-fifo/rank9.json: not a regular file (a FIFO): not read" "$T/fifo_dir.txt" || fail "fifo_dir: the FIFO named"
grep -q "imported 2 of 3 files" "$T/fifo_dir.txt" || fail "fifo_dir: counted as left out"
pass
