#!/bin/sh
# collscope import on bad input: a truncated file, a file that is not JSON,
# files of another job (world size, trace id), a rank given twice, a missing
# rank, a file without a rank (and --rank-from-name), a group whose ranks
# disagree without Seq, nothing importable. Each: its one message, its exit
# status, the good ranks imported, and never a half-written trace.db.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
GEN="$S/tests/import/kineto_gen.py"
check "generate traces" $PY "$GEN" "$T/good" --style gloo --steps 6

# run NAME EXPECTED_STATUS FILES...: import into $T/NAME, output in $T/NAME.txt
run() {
  _n=$1 _want=$2; shift 2
  "$COLLSCOPE" import -o "$T/$_n" "$@" > "$T/$_n.txt" 2>&1
  _rc=$?
  cat "$T/$_n.txt"
  expect_eq "$_n: exit status" "$_rc" "$_want"
}
# ranks DIR: the ranks in DIR/trace.db
ranks() { q "$1/trace.db" "SELECT group_concat(rank, ' ') FROM (SELECT DISTINCT rank FROM spans ORDER BY rank)"; }
# mkcase NAME: a copy of the good traces to edit
mkcase() { mkdir -p "$T/in-$1" && cp "$T"/good/*.json "$T/in-$1/"; }
# edit FILE PYTHON: change the JSON document d of FILE
edit() { $PY - "$1" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
PYEOF
}

run clean 0 "$T/good"
expect_eq "clean: every rank" "$(ranks "$T/clean")" "0 1 2 3"

mkcase trunc
size=$(wc -c < "$T/in-trunc/rank1.json")
head -c $((size * 2 / 3)) "$T/good/rank1.json" > "$T/in-trunc/rank1.json"
run trunc 1 "$T/in-trunc"
grep -q "rank1.json: truncated: the JSON ends after [0-9]* bytes, inside traceEvents" "$T/trunc.txt" || fail "trunc: the message"
# its file gave rank 1 before it ended: the missing rank is that file's
grep -q "1 of 4 ranks missing (their files were left out above)" "$T/trunc.txt" || fail "trunc: the missing rank's cause"
grep -q "no file gives rank 1" "$T/trunc.txt" && fail "trunc: a false 'no file gives rank 1'"
expect_eq "trunc: the good ranks imported" "$(ranks "$T/trunc")" "0 2 3"

mkcase gz
gzip -c "$T/good/rank2.json" > "$T/full.gz"
head -c $(($(wc -c < "$T/full.gz") / 2)) "$T/full.gz" > "$T/in-gz/rank2.json.gz"
rm "$T/in-gz/rank2.json"
run gz 1 "$T/in-gz"
grep -q "rank2.json.gz: truncated" "$T/gz.txt" || fail "gz: the message"
expect_eq "gz: the good ranks imported" "$(ranks "$T/gz")" "0 1 3"

mkcase notjson
printf 'Traceback (most recent call last):\n  killed\n' > "$T/in-notjson/rank3.json"
run notjson 1 "$T/in-notjson"
grep -q "rank3.json: not a PyTorch profiler trace (not JSON: it starts with 'T')" "$T/notjson.txt" || fail "notjson: the message"
expect_eq "notjson: the good ranks imported" "$(ranks "$T/notjson")" "0 1 2"

mkcase badjson
printf '{"traceEvents": [ {"ph": "X",, } ] }' > "$T/in-badjson/rank3.json"
run badjson 1 "$T/in-badjson"
grep -q "rank3.json: not valid JSON near byte" "$T/badjson.txt" || fail "badjson: the message"

mkcase world
edit "$T/in-world/rank2.json" 'd["distributedInfo"]["world_size"] = 8'
run world 1 "$T/in-world"
grep -q "rank2.json: world size 8, but the job's (the other files') is 4: another job? not imported" "$T/world.txt" || fail "world: the message"
expect_eq "world: the good ranks imported" "$(ranks "$T/world")" "0 1 3"

mkcase traceid
for r in 0 1 2 3; do edit "$T/in-traceid/rank$r.json" 'd["trace_id"] = "JOB-A"'; done
edit "$T/in-traceid/rank0.json" 'd["trace_id"] = "JOB-B"'
run traceid 1 "$T/in-traceid"
grep -q "rank0.json: trace id JOB-B, but the job's (the other files') is JOB-A: another job? not imported" "$T/traceid.txt" || fail "traceid: the message"
expect_eq "traceid: the good ranks imported" "$(ranks "$T/traceid")" "1 2 3"
expect_eq "traceid: kept in the metadata" "$(q "$T/traceid/trace.db" "SELECT value FROM meta WHERE key='import_trace_id'")" JOB-A

mkcase twice
cp "$T/good/rank1.json" "$T/in-twice/rank1-again.json"
run twice 1 "$T/in-twice"
grep -q "rank1.json: rank 1 again (already from .*rank1-again.json): not imported" "$T/twice.txt" || fail "twice: the message"
expect_eq "twice: every rank once" "$(q "$T/twice/trace.db" "SELECT count(*) FROM processes")" 4

mkcase missing
rm "$T/in-missing/rank3.json"
run missing 1 "$T/in-missing"
grep -q "1 of 4 ranks missing (no file gives rank 3): the trace holds the other 3" "$T/missing.txt" || fail "missing: the message"
expect_eq "missing: the good ranks imported" "$(ranks "$T/missing")" "0 1 2"

mkcase norank
for r in 0 1 2 3; do edit "$T/in-norank/rank$r.json" 'del d["distributedInfo"]["rank"]'; done
run norank 3 "$T/in-norank"
grep -q "rank0.json: no rank: the trace has no distributedInfo.rank; give one with --rank-from-name REGEX" "$T/norank.txt" || fail "norank: the message"
grep -q "no file could be imported: .*norank/trace.db not written" "$T/norank.txt" || fail "norank: nothing written said"
[ ! -e "$T/norank/trace.db" ] || fail "norank: a trace.db was written"
"$COLLSCOPE" import -o "$T/norank2" --rank-from-name 'rank([0-9]+)' "$T/in-norank" > "$T/norank2.txt" 2>&1 || { cat "$T/norank2.txt"; fail "norank: --rank-from-name"; }
expect_eq "norank: ranks from the names" "$(ranks "$T/norank2")" "0 1 2 3"

# a group whose ranks disagree (no Seq; rank 3 lost one dp allreduce)
check "generate traces without Seq" $PY "$GEN" "$T/noseq" --style gloo --steps 6 --no-seq
edit "$T/noseq/rank3.json" '
ev = d["traceEvents"]
rpc = [e for e in ev if e["name"] == "record_param_comms" and e["args"]["Process Group Description"] == "dp_group_1"][-1]
ann = [e for e in ev if e["name"] == "gloo:all_reduce" and abs(e["ts"] - rpc["ts"] - 2.0) < 0.001][0]
ev.remove(rpc); ev.remove(ann)'
run disagree 1 "$T/noseq"
grep -q "group dp_group_1 (2 ranks): the ranks disagree on its collectives (no Seq recorded): 6 on most ranks, but rank 3 (5)" "$T/disagree.txt" ||
  grep -q "group dp_group_1 (2 ranks): the ranks disagree on its collectives (no Seq recorded): 6 on most ranks, but rank 1 (6)" "$T/disagree.txt" ||
  fail "disagree: the message"
expect_eq "disagree: that group left unmatched" \
  "$(q "$T/disagree/trace.db" "SELECT count(*), count(s.seq) FROM spans s JOIN comms c ON c.id=s.comm AND c.rank=s.rank WHERE c.name='dp_group_1'")" "11|0"
expect_eq "disagree: the other groups numbered" \
  "$(q "$T/disagree/trace.db" "SELECT count(*) FROM spans s JOIN comms c ON c.id=s.comm AND c.rank=s.rank WHERE c.name<>'dp_group_1' AND s.kind IN ('coll','rooted') AND s.seq IS NULL")" 0

# nothing importable: the earlier trace stays as it was, nothing half-written
cp "$T/clean/trace.db" "$T/before.db"
printf 'not json' > "$T/junk.json"
run clean 3 "$T/junk.json"
cmp -s "$T/clean/trace.db" "$T/before.db" || fail "the earlier trace.db was changed"
expect_eq "no temporary files left" "$(ls -A "$T/clean" | grep -v "^collscope.lock$")" "trace.db"
# the temporary folder of an import that was killed goes with the next import
mkdir -p "$T/clean/.import-999999999" && : > "$T/clean/.import-999999999/file-000000.db"
run clean 0 "$T/good"
[ ! -e "$T/clean/.import-999999999" ] || fail "a killed import's temporary folder was left"
echo "ok: a killed import's temporary folder removed"
run usage 2 "$T/does-not-exist.json"
grep -q "does-not-exist.json: No such file or directory" "$T/usage.txt" || fail "usage: the message"
pass
