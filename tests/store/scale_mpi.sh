#!/bin/sh
# A traced 8-rank MPI job (the example trainer, Open MPI, rank 5 100 ms late
# every step, halo exchange and split communicators) kept unmerged
# (`collscope run --no-merge`): DIR/ranks holds 8 rank stores, DIR/index.db
# lists them with their ranks, pids and communicators and when the
# launcher ended (kept by `collscope merge`), and there is no trace.db. The same logs ingested merged (`ingest --merge` on a copy)
# give the same `report --format json` but for the trace's path
# (verdicts, culprit, steps and every figure), with the persistent
# straggler on rank 5 in both. `ingest` past COLLSCOPE_MERGE_MAX (1 byte)
# leaves the job unmerged again (trace.db removed, index.db written) with
# the same report; a COLLSCOPE_MERGE_MAX that is no number is refused by
# name. The delay is 100 ms: beside 8 busy loops and a build (load 15)
# the job's steps took 520 ms and a 30 ms delay was lost in that noise
# (no straggler found, in either report alike).
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"

"$COLLSCOPE" run -o "$T/job" --no-merge -- "$MPIRUN" -np 8 "$TRAINER" --steps 12 --buckets 2 --halo --split \
  --delay-us 100000 --delay-ranks 5 > "$T/run.out" 2>&1 || { tail "$T/run.out"; fail "traced run failed"; }
grep -q 'job/ranks (index.db)' "$T/run.out" || fail "run does not say the job was left unmerged"
[ ! -e "$T/job/trace.db" ] || fail "run --no-merge wrote trace.db"
expect_eq "rank stores" "$(ls "$T/job/ranks" | grep -c '^rank-.*\.db$')" 8
expect_eq "index: ranks, pids, hosts" "$(q "$T/job/index.db" "SELECT count(DISTINCT rank), count(DISTINCT pid), sum(host != '') FROM rank_files")" "8|8|8"
expect_eq "index: MPI_COMM_WORLD's members" "$(q "$T/job/index.db" "SELECT count(*) FROM comms WHERE how = 'world'")" 8
[ "$(q "$T/job/index.db" "SELECT count(DISTINCT id) FROM comms")" -gt 2 ] || fail "index lacks the split communicators"
# when the launcher ended, as a merged trace keeps it (a post mortem's
# "waiting" time ends there), in the index and in the job read from it
end=$(q "$T/job/index.db" "SELECT value FROM meta WHERE key = 'job_end_ns'")
[ "${end:-0}" -gt 0 ] || fail "the index has no job_end_ns"
expect_eq "index: job_end_host" "$(q "$T/job/index.db" "SELECT value FROM meta WHERE key = 'job_end_host'")" "$(hostname)"
cp -a "$T/job" "$T/tomerge"
"$COLLSCOPE" merge "$T/tomerge" > /dev/null || fail "collscope merge failed"
expect_eq "merged from the index: job_end_ns" "$(q "$T/tomerge/trace.db" "SELECT value FROM meta WHERE key = 'job_end_ns'")" "$end"

cp -a "$T/job" "$T/merged"
"$COLLSCOPE" ingest --merge "$T/merged" > /dev/null || fail "ingest --merge failed"
[ -s "$T/merged/trace.db" ] && [ ! -e "$T/merged/index.db" ] || fail "ingest --merge left no trace.db, or an index"

"$COLLSCOPE" report "$T/merged" --format json -o "$T/merged.json" || fail "report (merged) failed"
"$COLLSCOPE" report "$T/job" --format json -o "$T/job.json" || fail "report (unmerged) failed"
cmpjson() {
  "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("trace")
bad = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
for k in bad:
    print("differs:", k, str(a.get(k))[:300], "|", str(b.get(k))[:300])
v = [(s["kind"], s["rank"]) for s in a["stragglers"]]
print("verdicts:", v, "processes:", a["processes"], "spans:", a["spans"])
if bad or a["processes"] != 8 or ("persistent", 5) not in v:
    sys.exit(1)
PYEOF
}
cmpjson "$T/merged.json" "$T/job.json" || fail "merged and unmerged reports differ, or rank 5 is not found"
echo "ok: identical reports, persistent straggler on rank 5"

# past the size: unmerged again
COLLSCOPE_MERGE_MAX=1 "$COLLSCOPE" ingest "$T/merged" > "$T/ingest.out" || fail "ingest past COLLSCOPE_MERGE_MAX failed"
[ ! -e "$T/merged/trace.db" ] && [ -s "$T/merged/index.db" ] || fail "ingest past COLLSCOPE_MERGE_MAX merged the job"
"$COLLSCOPE" report "$T/merged" --format json -o "$T/again.json" || fail "report after the unmerged ingest failed"
cmpjson "$T/merged.json" "$T/again.json" || fail "the report changed after the unmerged ingest"
echo "ok: past COLLSCOPE_MERGE_MAX the job stays unmerged, same report"
COLLSCOPE_MERGE_MAX=lots "$COLLSCOPE" ingest "$T/merged" > /dev/null 2> "$T/bad.err"
expect_eq "COLLSCOPE_MERGE_MAX=lots exit status" "$?" 1
grep -q COLLSCOPE_MERGE_MAX "$T/bad.err" || fail "the bad COLLSCOPE_MERGE_MAX is not named: $(cat "$T/bad.err")"

pass
