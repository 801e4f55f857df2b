#!/bin/sh
# collscope import of generated PyTorch profiler (Kineto) traces with known
# answers (tests/import/kineto_gen.py: 4 ranks, default_pg + tp and dp
# groups, rank 3 late by 20 ms in every step): per-rank op counts, seqs
# (recorded, and numbered by the importer where absent), communicator names
# and membership, NCCL kernels as GPU times, compute spans, steps from
# ProfilerStep, the run metadata, and the straggler verdict of the report.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
GEN="$S/tests/import/kineto_gen.py"

# gloo style, Seq recorded, plain JSON
check "generate gloo traces" $PY "$GEN" "$T/gloo" --style gloo --answers "$T/gloo.ans"
"$COLLSCOPE" import -o "$T/out" "$T/gloo" > "$T/imp.txt" 2>&1 || { cat "$T/imp.txt"; fail "import of gloo traces failed"; }
cat "$T/imp.txt"
DB="$T/out/trace.db"
[ -f "$DB" ] || fail "no trace.db"
[ -z "$(ls -A "$T/out" | grep -v '^trace.db\|^collscope.lock$')" ] || fail "files left in the output folder: $(ls -A "$T/out")"
expect_eq "import format in the metadata" "$(q "$DB" "SELECT value FROM meta WHERE key='import_format'")" kineto
expect_eq "its version" "$(q "$DB" "SELECT value FROM meta WHERE key='import_format_version'")" 1
expect_eq "the backend" "$(q "$DB" "SELECT value FROM meta WHERE key='import_backend'")" gloo
for r in 0 1 2 3; do
  want=$($PY -c "import json;c=json.load(open('$T/gloo.ans'))['counts']['$r'];print(c['collectives'],c['p2p'],c['steps'],c['compute'])")
  got=$(q "$DB" "SELECT (SELECT count(*) FROM spans WHERE rank=$r AND kind IN ('coll','rooted')),
                        (SELECT count(*) FROM spans WHERE rank=$r AND kind IN ('send','recv')),
                        (SELECT count(*) FROM spans WHERE rank=$r AND op='ProfilerStep'),
                        (SELECT count(*) FROM spans WHERE rank=$r AND kind='compute')" | tr '|' ' ')
  expect_eq "rank $r: collectives, p2p, steps, compute" "$got" "$want"
done
expect_eq "allreduces on rank 3" "$(q "$DB" "SELECT count(*) FROM spans WHERE rank=3 AND op='c10d_allreduce'")" 36
expect_eq "p2p peers (0 sends to 1, 1 receives from 0)" \
  "$(q "$DB" "SELECT group_concat(rank || op || peer, ' ') FROM (SELECT * FROM spans WHERE kind IN ('send','recv') AND seq IS NULL GROUP BY rank, op, peer)")" \
  "0c10d_send1 1c10d_recv0"
# communicators: names kept, membership as pg_config says
expect_eq "communicator names" "$(q "$DB" "SELECT group_concat(name, ' ') FROM (SELECT DISTINCT name FROM comms ORDER BY name)")" \
  "default_pg dp_group_0 dp_group_1 tp_group_0 tp_group_1"
expect_eq "membership" "$(q "$DB" "SELECT group_concat(name || ':' || rank || '/' || comm_rank || '/' || size, ' ') FROM (SELECT * FROM comms ORDER BY name, rank)")" \
  "default_pg:0/0/4 default_pg:1/1/4 default_pg:2/2/4 default_pg:3/3/4 dp_group_0:0/0/2 dp_group_0:2/1/2 dp_group_1:1/0/2 dp_group_1:3/1/2 tp_group_0:0/0/2 tp_group_0:1/1/2 tp_group_1:2/0/2 tp_group_1:3/1/2"
# seqs as recorded: per communicator 0..n-1 on every member
expect_eq "seqs of default_pg (recorded)" \
  "$(q "$DB" "SELECT count(DISTINCT seq), min(seq), max(seq), count(*) FROM spans s JOIN comms c ON c.id=s.comm AND c.rank=s.rank WHERE c.name='default_pg' AND s.kind IN ('coll','rooted')")" "13|0|12|52"
expect_eq "every member has the same seqs" \
  "$(q "$DB" "SELECT count(*) FROM (SELECT comm, seq, count(*) n FROM spans WHERE seq IS NOT NULL GROUP BY comm, seq) x JOIN (SELECT id, count(*) m FROM comms GROUP BY id) c ON c.id=x.comm WHERE x.n <> c.m")" 0
# gloo collectives timed by the gloo thread's annotation: the waiting ranks' allreduce lasts the delay
expect_eq "gloo allreduces on the groups' worker threads" "$(q "$DB" "SELECT count(DISTINCT thread) FROM spans WHERE op='c10d_allreduce'")" 3

# gloo without record_param_comms (PyTorch's CPU runs): groups from the worker threads, bytes from Input Dims
check "generate gloo traces without record_param_comms" $PY "$GEN" "$T/norpc" --style gloo --no-rpc --no-seq
"$COLLSCOPE" import -o "$T/out3" "$T/norpc" > "$T/imp3.txt" 2>&1 || { cat "$T/imp3.txt"; fail "import without record_param_comms failed"; }
members() { q "$1" "SELECT group_concat(x, ' ') FROM (SELECT c.name || ':' || s.rank || ':' || count(*) || ':' || sum(s.bytes) AS x FROM spans s JOIN comms c ON c.id=s.comm AND c.rank=s.rank GROUP BY c.name, s.rank ORDER BY c.name, s.rank)"; }
expect_eq "groups, calls and bytes as with record_param_comms" "$(members "$T/out3/trace.db")" "$(members "$DB")"
expect_eq "all numbered" "$(q "$T/out3/trace.db" "SELECT count(*) FROM spans WHERE kind IN ('coll','rooted') AND seq IS NULL")" 0
# the report: rank 3 a persistent straggler costing the 20 ms delay (within 10 %)
"$COLLSCOPE" report --format json "$DB" > "$T/rep.json" || fail "report failed"
$PY - "$T/rep.json" <<'PYEOF' || fail "the report's straggler verdict"
import json, sys
d = json.load(open(sys.argv[1]))
v = [s for s in d["stragglers"] if s["kind"] == "persistent"]
print("verdicts:", [(s["kind"], s["rank"], s["cost_ns"]) for s in d["stragglers"]])
assert [s["rank"] for s in v] == [3], v
assert abs(v[0]["cost_ns"] - 20e6) <= 2e6, v[0]["cost_ns"]
PYEOF
echo "ok: rank 3 persistent straggler, cost within 10 % of 20 ms"
expect_eq "steps from ProfilerStep markers" "$(q "$DB" "SELECT value FROM meta WHERE key='analysis_steps_from'")" markers

# NCCL style, no Seq, gzip'ed
check "generate nccl traces" $PY "$GEN" "$T/nccl" --style nccl --no-seq --gzip --answers "$T/nccl.ans"
"$COLLSCOPE" import -o "$T/out2" "$T/nccl"/*.json.gz > "$T/imp2.txt" 2>&1 || { cat "$T/imp2.txt"; fail "import of nccl traces failed"; }
cat "$T/imp2.txt"
DB2="$T/out2/trace.db"
for r in 0 1 2 3; do
  want=$($PY -c "import json;c=json.load(open('$T/nccl.ans'))['counts']['$r'];print(c['collectives'],c['p2p'],c['nccl_kernels'],c['compute'])")
  got=$(q "$DB2" "SELECT (SELECT count(*) FROM spans WHERE rank=$r AND kind IN ('coll','rooted')),
                         (SELECT count(*) FROM spans WHERE rank=$r AND kind IN ('send','recv')),
                         (SELECT count(*) FROM spans WHERE rank=$r AND op LIKE 'nccl%' AND gpu_dur_ns > 0),
                         (SELECT count(*) FROM spans WHERE rank=$r AND kind='compute')" | tr '|' ' ')
  expect_eq "rank $r: collectives, p2p, NCCL ones with GPU times, compute" "$got" "$want"
done
expect_eq "ops of the NCCL job" "$(q "$DB2" "SELECT group_concat(op, ' ') FROM (SELECT DISTINCT op FROM spans ORDER BY op)")" \
  "ProfilerStep compute_cpu compute_gpu ncclAllReduce ncclBroadcast ncclRecv ncclSend"
expect_eq "GPU compute spans on the lane of stream 7 (thread 1007)" "$(q "$DB2" "SELECT count(*) FROM spans WHERE op='compute_gpu' AND thread=1007 AND dur_ns > 0")" 48
# no Seq recorded: the importer numbered each group in issue order, the same on every member
expect_eq "collectives numbered" "$(q "$DB2" "SELECT count(*) FROM spans WHERE kind IN ('coll','rooted') AND seq IS NULL")" 0
expect_eq "numbered alike on every member" \
  "$(q "$DB2" "SELECT count(*) FROM (SELECT comm, seq, count(*) n FROM spans WHERE seq IS NOT NULL GROUP BY comm, seq) x JOIN (SELECT id, count(*) m FROM comms GROUP BY id) c ON c.id=x.comm WHERE x.n <> c.m")" 0
expect_eq "the same numbers as the recorded Seq of the gloo job" \
  "$(q "$DB2" "SELECT group_concat(c.name || ':' || n, ' ') FROM (SELECT comm, count(DISTINCT seq) n FROM spans WHERE seq IS NOT NULL GROUP BY comm) x JOIN (SELECT DISTINCT id, name FROM comms) c ON c.id=x.comm ORDER BY c.name")" \
  "$(q "$DB" "SELECT group_concat(c.name || ':' || n, ' ') FROM (SELECT comm, count(DISTINCT seq) n FROM spans WHERE seq IS NOT NULL GROUP BY comm) x JOIN (SELECT DISTINCT id, name FROM comms) c ON c.id=x.comm ORDER BY c.name")"
pass
