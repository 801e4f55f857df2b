#!/bin/sh
# Bad input for the cross-rank analysis: an empty trace, ranks
# missing from the trace, a rank killed mid-run (by the trainer's
# --crash-mode kill; and a trace cut so that its last collectives are
# unmatched), a single-rank trace. Each must give a report (exit 0), in
# text and JSON, that says what is missing, and never crash.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 shell not installed"
L=$(mpirun_for openmpi); TR=$B/examples/mpi_trainer_ompi
if [ -z "$L" ] || [ ! -x "$L" ] || [ ! -x "$TR" ]; then
  L=$(mpirun_for mpich); TR=$B/examples/mpi_trainer_mpich
  [ -n "$L" ] && [ -x "$L" ] && [ -x "$TR" ] || skip "no MPI implementation with its trainer is built"
fi

# report_has NAME TRACE PATTERN...: text and JSON reports succeed, the JSON
# parses with the analysis keys, and its notes match every PATTERN (python re).
report_has() {
  _n=$1; _t=$2; shift 2
  "$COLLSCOPE" report "$_t" > "$T/$_n.txt" 2> "$T/$_n.err" || { cat "$T/$_n.err"; fail "$_n: text report failed (exit $?)"; }
  grep -q '^Stragglers' "$T/$_n.txt" || fail "$_n: the text report has no Stragglers section"
  grep -q '^What is missing' "$T/$_n.txt" || fail "$_n: the text report does not say what is missing"
  "$COLLSCOPE" report "$_t" --format json -o "$T/$_n.json" 2>> "$T/$_n.err" || fail "$_n: JSON report failed"
  "$PY" - "$T/$_n.json" "$@" <<'PYEOF' || fail "$_n: JSON report incomplete (see above)"
import json, re, sys
d = json.load(open(sys.argv[1]))
for k in ("clocks", "stragglers", "steps", "rank_stats", "tails", "notes", "instances", "incomplete_instances"):
    if k not in d:
        sys.exit("missing key %s" % k)
notes = " | ".join(d["notes"])
for pat in sys.argv[2:]:
    if not re.search(pat, notes):
        sys.exit("no note matches %r in: %s" % (pat, notes))
print("notes:", notes)
PYEOF
  echo "ok: $_n: report made, notes say what is missing"
}

# A clean 4-rank run to cut up.
"$COLLSCOPE" run -o "$T/base" -- "$L" -np 4 "$TR" --steps 8 > "$T/base.out" 2>&1 || fail "traced base run failed"

# 1. empty: the store without any process or span
mkdir -p "$T/empty"; cp "$T/base/trace.db" "$T/empty/trace.db"
q "$T/empty/trace.db" "DELETE FROM span; DELETE FROM processes; DELETE FROM comms; DELETE FROM completions; DELETE FROM clocks;"
report_has empty "$T/empty" "no process"
[ "$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["stragglers"]))' "$T/empty.json")" = 0 ] ||
  fail "empty: a verdict from nothing"

# 2. ranks 1 and 3 missing (their files never arrived): the highest rank
# too, so only the job size says it is missing
mkdir -p "$T/missing"; cp "$T/base/trace.db" "$T/missing/trace.db"
for tb in span processes completions callsites frames comms clocks modules; do
  q "$T/missing/trace.db" "DELETE FROM $tb WHERE rank IN (1, 3)"
done
report_has missing "$T/missing" "ranks missing.*1,3" "incomplete"

# 3. rank 1 killed just before the gradient allreduce of step 3
"$COLLSCOPE" run -o "$T/crash" -- "$L" -np 4 "$TR" --steps 6 --crash-rank 1 --crash-step 3 --crash-mode kill \
  > "$T/crash.out" 2>&1 && fail "crash: the job did not fail"
[ -f "$T/crash/trace.db" ] || "$COLLSCOPE" ingest "$T/crash" > "$T/ingest.out" 2>&1 || fail "crash: ingest failed"
report_has crash "$T/crash" "rank 1 crashed"
# 3b. the same, cut where the others went on: rank 1 stops after its 10th
# collective while the others finished theirs (unmatched seqs)
mkdir -p "$T/cut"; cp "$T/base/trace.db" "$T/cut/trace.db"
q "$T/cut/trace.db" "DELETE FROM span WHERE rank = 1 AND begin_ns > (SELECT begin_ns FROM span WHERE rank = 1
  AND seq IS NOT NULL ORDER BY begin_ns LIMIT 1 OFFSET 9); UPDATE processes SET status = 'crashed' WHERE rank = 1"
report_has cut "$T/cut" "rank 1 crashed" "[0-9]+ collective instances are incomplete"

# 4. a single rank
"$COLLSCOPE" run -o "$T/single" -- "$L" -np 1 "$TR" --steps 5 > "$T/single.out" 2>&1 || fail "single: traced run failed"
report_has single "$T/single" "single rank"
pass
