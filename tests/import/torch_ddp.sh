#!/bin/sh
# torch_ddp.sh: a real PyTorch job imported. tests/progs/ddp_gloo.py runs 4
# ranks of DistributedDataParallel on gloo (PyPI torch on the CPU, from the
# project's venv) under torch.profiler, rank 2 sleeping 40 ms in every
# forward, one Kineto trace per rank, and prints what each rank issued.
# `collscope import` of the folder: exit 0 (every rank there, every group
# matched); per rank, the collectives and point-to-point calls per op equal
# the ones the script counted (its gloo:OP names, c10d_OP in the store), and
# per process group by name (default_pg, pair_dp), with nothing else
# communicating; the process groups of distributedInfo.pg_config are
# communicators of their ranks; sends and receives have their peers and
# match; the 8 ProfilerStep#N are the steps;
# `collscope report` finds rank 2 the one persistent straggler, slowest in
# most steps, and its median step time is the script's within 20 %; the
# slowdown (replayed on the graph of the ranks' threads) blames rank 2 too,
# a slow worker, its S within 25 % of the median step over the step less
# the 40 ms sleep, its saving within 25 % of the sleep, its ideal step
# within 25 % of the median of 16 steps the job runs with no rank slow,
# and the saving estimates agree within 25 % (within 2x where the job's
# own steps swing by more than 10 %: a machine loaded far beyond its
# cores) (issue 31).
# The text report (the README's example) begins with rank 2 as the culprit,
# and passes tests/report/check_report.py.
. "$srcdir/tests/lib.sh"
if ! "$COLLSCOPE" --help 2>&1 | grep -q '^  import '; then
  [ "${CI:-}" = true ] && fail "collscope has no import command"
  skip "collscope has no import command in this build"
fi
need_venv torch
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"

"$VPY" "$S/tests/progs/ddp_gloo.py" --out "$T/traces" --ranks 4 --steps 8 --slow-rank 2 --delay-ms 40 \
  --clean-steps 16 > "$T/job.out" 2> "$T/job.err" || {
  tail -n 20 "$T/job.err"
  fail "the PyTorch job failed (above; $T/job.err)"
}
expect_eq "ranks that reported" "$(grep -c '^colls: rank ' "$T/job.out")" 4
expect_eq "traces written" "$(ls "$T/traces" | grep -c '^rank-[0-3]\.pt\.trace\.json$')" 4

rc=0
"$COLLSCOPE" import -o "$T/imp" "$T/traces" > "$T/import.out" 2>&1 || rc=$?
cat "$T/import.out"
expect_eq "import exit status (every rank, every group)" "$rc" 0
DB="$T/imp/trace.db"
[ -s "$DB" ] || fail "no $DB"
expect_eq "ranks in the store" "$(q "$DB" "SELECT group_concat(rank) FROM (SELECT rank FROM processes ORDER BY rank)")" "0,1,2,3"

# Per rank and op: the script's gloo:OP counts against the store's c10d_OP
# spans (gloo:all_reduce -> c10d_allreduce), and no other communication.
grep '^colls: rank ' "$T/job.out" > "$T/colls.txt"
while read -r _c _r rank rest; do
  total=0
  for kv in $rest; do
    name=${kv%%=*} want=${kv#*=}
    op=c10d_$(echo "${name#gloo:}" | tr -d _)
    got=$(q "$DB" "SELECT count(*) FROM spans WHERE rank=$rank AND op='$op'")
    [ "$got" = "$want" ] || fail "rank $rank $op: the store has $got, the job issued $want ($name)"
    total=$((total + want))
  done
  got=$(q "$DB" "SELECT count(*) FROM spans WHERE rank=$rank AND
                 (comm IS NOT NULL OR kind IN ('coll', 'rooted', 'send', 'recv', 'sendrecv'))")
  [ "$got" = "$total" ] || fail "rank $rank: the store has $got communication spans, the job issued $total"
  echo "ok: rank $rank: $total calls, per op as issued ($rest)"
done < "$T/colls.txt"

# Per rank and process group, by the name the job gave it.
grep '^groups: rank ' "$T/job.out" > "$T/groups.txt"
while read -r _g _r rank rest; do
  for kv in $rest; do
    name=${kv%%=*} want=${kv#*=}
    got=$(q "$DB" "SELECT count(*) FROM spans s JOIN comms c ON c.id = s.comm AND c.rank = s.rank
                   WHERE s.rank=$rank AND c.name='$name'")
    [ "$got" = "$want" ] || fail "rank $rank, group $name: the store has $got calls, the job issued $want"
  done
  echo "ok: rank $rank: per process group as issued ($rest)"
done < "$T/groups.txt"
expect_eq "default_pg: its members" "$(q "$DB" "SELECT group_concat(rank) FROM (SELECT rank FROM comms WHERE name='default_pg' ORDER BY rank)")" "0,1,2,3"
expect_eq "the two pair_dp groups: their members" \
  "$(q "$DB" "SELECT group_concat(m, ' ') FROM (SELECT group_concat(rank) m FROM (SELECT id, rank FROM comms WHERE name='pair_dp' ORDER BY id, rank) GROUP BY id ORDER BY m)")" \
  "0,1 2,3"
check_seqs "$DB"
# The ring exchange: each rank sends to the next and receives from the
# previous (c10d::send / c10d::recv_ name the peer).
for rank in 0 1 2 3; do
  expect_eq "rank $rank: peers of its sends and receives" \
    "$(q "$DB" "SELECT group_concat(x, ' ') FROM (SELECT DISTINCT op || '>' || peer x FROM spans
                WHERE rank=$rank AND op IN ('c10d_send', 'c10d_recv') ORDER BY x)")" \
    "c10d_recv>$(((rank + 3) % 4)) c10d_send>$(((rank + 1) % 4))"
done

# Steps and the straggler, through the report.
"$COLLSCOPE" report "$T/imp" --format json > "$T/report.json" || fail "collscope report failed"
expect_eq "messages matched (8 steps x 4 sends)" "$(q "$DB" "SELECT count(*) FROM p2p")" 32
"$PY" - "$T/report.json" "$T/job.out" << 'PYEOF' || fail "the report does not hold (above)"
import json, re, statistics, sys
rep = json.load(open(sys.argv[1]))
job = open(sys.argv[2]).read()
steps = rep["steps"]
assert steps["count"] == 8, "steps: %s, want the 8 ProfilerStep#N" % steps["count"]
print("ok: 8 steps, from %s" % steps["source"])
slowest = [s["slowest_rank"] for s in steps["list"]]
assert slowest.count(2) >= 6, "rank 2 slowest in only %d of 8 steps: %s" % (slowest.count(2), slowest)
print("ok: rank 2 slowest in %d of 8 steps" % slowest.count(2))
verdicts = [(v["kind"], v["rank"]) for v in rep["stragglers"] if v["kind"] in ("persistent", "transient", "recurring")]
assert verdicts == [("persistent", 2)], "straggler verdicts %s, want rank 2 persistent only" % verdicts
print("ok: rank 2 is the persistent straggler")
ms = [float(x) for line in re.findall(r"^steps: rank \d+ ms=([0-9.,]+)$", job, re.M) for x in line.split(",")]
assert len(ms) == 32, "the job printed %d step times, want 32" % len(ms)
want, got = statistics.median(ms), steps["median_ns"] / 1e6
assert abs(got - want) <= 0.2 * want, "median step %.2f ms in the report, %.2f ms measured by the job" % (got, want)
print("ok: median step %.2f ms, the job measured %.2f ms" % (got, want))
# One story (issue 31): the slowdown blames the straggler, with S and a
# saving near the job's own figures: rank 2 sleeps 40 ms in each step, so
# S is about the median step over the step less the sleep and the saving
# about the sleep (the others' compute overlaps part of it: 36 ms saved on
# a quiet machine, against a clean run), and the ideal step is about the
# job's own step with no rank slow (16 steps run so, 8 before the
# profiled ones and 8 after; the load of a shared machine moves them by
# 10-20 % between runs, far more at a load of 7-9 on 2 cores).
sd, ans, delay = rep["slowdown"], rep["answer"], 40.0
clean = statistics.median([float(x) for line in re.findall(r"^clean: rank \d+ ms=([0-9.,]+)$", job, re.M)
                           for x in line.split(",")])
assert (sd["verdict"], sd["culprit"]) == ("slow_worker", "2"), \
    "slowdown verdict %s, culprit %r, S %.3f: want slow_worker 2" % (sd["verdict"], sd["culprit"], sd["S"])
truth = want / (want - delay)
assert abs(sd["S"] - truth) <= 0.25 * truth, "S %.3f, the job's figures give %.3f" % (sd["S"], truth)
ideal = sd["ideal_step_ns"] / 1e6
# the clean steps run unprofiled, before and after the profiled ones: on a
# machine whose load moves the job's steps (below) they are another
# interval's figure, so within 2x there, 25 % on a steady machine
cleans = [float(x) for line in re.findall(r"^clean: rank \d+ ms=([0-9.,]+)$", job, re.M) for x in line.split(",")]
swing = max(statistics.median([abs(x - want) for x in ms]) / want,
            statistics.median([abs(x - clean) for x in cleans]) / clean)
if swing <= 0.10:
    assert abs(ideal - clean) <= 0.25 * clean, "ideal step %.2f ms, the job's clean step %.2f ms" % (ideal, clean)
else:
    assert clean / 2 <= ideal <= 2 * clean, "ideal step %.2f ms, the job's clean step %.2f ms (not within 2x)" % (ideal, clean)
    print("note: the job's steps moved by %.0f %%: the ideal step checked within 2x of the clean one" % (100 * swing))
print("ok: the slowdown: slow worker rank 2, S %.3f (the job's %.2f ms less its 40 ms sleep: %.3f), "
      "ideal step %.2f ms (the job's step with no rank slow: %.2f ms)" % (sd["S"], want, truth, ideal, clean))
est = {e["source"]: e["ns"] / 1e6 for e in ans["saving_estimates"]}
assert "slowdown" in est and "stragglers" in est, "saving estimates: %s" % est
# On a machine loaded far beyond its 2 cores the steps swing (a load of 9:
# steps of 76-169 ms, clean ones of 24-235) and the straggler's cost with
# them (70 ms for a 40 ms sleep, its MAD 21 ms): the estimates then only
# within 2x, the slowdown's saving within 50 % of the sleep. The job's
# steps steady, profiled and clean (their MAD within 10 % of their median,
# 4 % on a quiet machine): within 25 %, as the report says.
kept = [v for e in ans["saving_estimates"] if not e["apart"] for v in [e["ns"] / 1e6]]
mad = swing
if mad <= 0.10:
    assert ans["estimates_agree"] is True, "the saving estimates disagree: %s" % est
else:
    assert max(kept) <= 2 * min(kept), "the saving estimates differ by more than 2x: %s" % est
    print("note: the job's steps moved by %.0f %% (MAD over the median): the estimates checked within 2x" % (100 * mad))
tol = 0.25 if swing <= 0.10 else 0.5
assert abs(est["slowdown"] - delay) <= tol * delay, \
    "the slowdown's saving %.2f ms, rank 2 sleeps 40 ms (within %.0f %%)" % (est["slowdown"], 100 * tol)
print("ok: the saving estimates: %s ms (rank 2 sleeps 40 ms a step)" % ", ".join("%s %.2f" % kv for kv in sorted(est.items())))
PYEOF
# The README's example (this job, imported): the text report's first section
# names rank 2 and a saving per step (README.md, docs/guide.md).
"$COLLSCOPE" report "$T/imp" > "$T/report.txt" || fail "collscope report (text) failed"
sed -n '4,5p' "$T/report.txt" | tr '\n' '|' | grep -q '^What limits this job|  culprit: rank 2|$' ||
  fail "the text report does not begin with rank 2 as the culprit: $(head -n 10 "$T/report.txt")"
grep -Eq '^  saving: about [0-9.]+ ms per step if fixed' "$T/report.txt" ||
  fail "the text report gives no saving per step: $(head -n 10 "$T/report.txt")"
echo "ok: the text report begins with rank 2 as the culprit and its saving"
# ... and passes the checks of every source's golden report (units, labels,
# call sites, elisions, percentages: tests/report/check_report.py).
"$COLLSCOPE" report "$T/imp" --full > "$T/report.full" || fail "collscope report --full failed"
"$COLLSCOPE" report "$T/imp" --format markdown > "$T/report.md" || fail "collscope report --format markdown failed"
"$PY" "$S/tests/report/check_report.py" "PyTorch DDP" "$T/report.full" "$T/report.json" "$T/report.md" ||
  fail "the PyTorch job's report (above)"
"$PY" "$S/tests/report/check_report.py" "PyTorch DDP (default)" "$T/report.txt" "$T/report.json" ||
  fail "the PyTorch job's default report (above)"
pass
