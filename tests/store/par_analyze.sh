#!/bin/sh
# The parallel analysis gives the serial one's results, table for table.
# - A 128-rank synthetic job of rank stores (bench/gen_trace: a persistent
#   straggler on rank 77, a transient delay on rank 100, a slow link) analysed
#   by one process (K = 1) and by K = 2 and 12 forked workers (12: more
#   processes than SQLite attaches parts or stores at once): every results
#   table (instances, waits, steps, rank_stats, stragglers, p2p, tails,
#   models, proposals, layout, slowdown, group_stats, rank_busy, clocks) holds the same rows in the
#   same order, and `report --format json` is the same document but for the
#   trace's path; COLLSCOPE_PAR_STATS shows K processes, the workers
#   receiving the root's clocks and steps and sending their share back.
#   A dense 16-rank job by K=2: with COLLSCOPE_MAPPED_MB=1 both processes
#   drop their mapped store pages again and again and hold under half the
#   resident memory beyond their private memory that they hold with no
#   bound, with the same tables; a bad value is said once.
#   The same job merged into one trace.db and analysed there (the
#   one-store path) has the same tables.
# - Traced MPI jobs kept unmerged: the example trainer on 8 ranks (split
#   communicators, halo exchange, rank 5 late) analysed by
#   `mpirun.mpich -np 2 collscope analyze DIR` and by `-j 3 --via openmpi`,
#   and nbloop on 6 ranks (nonblocking allreduces completed by Waitall, no
#   step markers) by -j 3 workers: the serial analysis's tables; the
#   trainer's job merged (`collscope merge`) reports as the unmerged one
#   (its verdicts are scale_mpi.sh's to check: they follow the run's timing);
#   a 4-rank halo exchange with a slow link 1 -> 2 gives the same tables
#   by K = 1 and 2 (the paired messages read back from the processes'
#   files) as merged (in memory), with a slow_link verdict.
# - The 128-rank job with one rank store removed and another overwritten
#   with garbage, by -j 2: both files named on stderr, exit 1, the other 126
#   ranks analysed as the serial analysis of the same damaged job does.
# - A worker that stops while the messages are routed, paired or the
#   collectives matched ends the analysis with one message naming it,
#   exit 1, no results.db, no private folder, no process left.
# - No private folder (.collscope-analyze.*) is left in any job; one left
#   by an analysis that was killed, or planted with a free lock, is removed
#   by the next analysis; one in use, another user's or a link is not.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
TABLES="instances waits steps rank_stats stragglers p2p tails models proposals layout slowdown group_stats rank_busy clocks"

# same_results REF DIR WHAT: every results table and the JSON report of
# DIR equal REF's
same_results() {
  [ -s "$T/$2/results.db" ] || fail "$3: no results.db"
  for t in $TABLES; do
    a=$(q "$T/$1/results.db" "SELECT * FROM $t" | md5sum)
    b=$(q "$T/$2/results.db" "SELECT * FROM $t" | md5sum)
    [ "$a" = "$b" ] || fail "$3: table $t differs from the serial analysis's"
  done
  # (exit 1: a job with rank stores left out is reported as damaged)
  for d in "$1" "$2"; do
    rm -f "$T/$d.json"
    "$COLLSCOPE" report "$T/$d" --format json -o "$T/$d.json" 2> /dev/null
    [ $? -le 1 ] && [ -s "$T/$d.json" ] || fail "$3: report of $d failed"
  done
  "$PY" - "$T/$1.json" "$T/$2.json" << 'PYEOF' || fail "$3: the JSON report differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("trace")
    # the notes name the job's folder
    d["notes"] = [n.replace(sys.argv[1][:-5], "").replace(sys.argv[2][:-5], "") for n in d.get("notes", [])]
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print("differs:", k, str(a.get(k))[:300], "|", str(b.get(k))[:300])
    sys.exit(1)
PYEOF
  n=$(q "$T/$2/results.db" "SELECT (SELECT count(*) FROM instances) || '|' || (SELECT count(*) FROM waits)")
  ls -a "$T/$2" | grep -q '^\.collscope-analyze' && fail "$3: the private folder was left"
  echo "ok: $3: the serial analysis's tables and report (instances|waits $n)"
}

args="--ranks 128 --steps 14 --persistent 77:3000 --transient 100:5-7:8000 --slow-link 10:11:400 --seed 9"
"$GEN" "$T/job" --rank-stores $args > /dev/null || fail "gen_trace --rank-stores failed"
cp -a "$T/job" "$T/k1"
"$COLLSCOPE" analyze "$T/k1" 2> /dev/null || fail "serial analyze failed"
for k in 2 12; do
  cp -a "$T/job" "$T/k$k"
  COLLSCOPE_PAR_STATS=1 "$COLLSCOPE" analyze -j $k --via workers "$T/k$k" 2> "$T/k$k.err" ||
    { cat "$T/k$k.err"; fail "analyze -j $k failed"; }
  expect_eq "K=$k: processes that took part" "$(grep -c '^collscope: process [0-9]*: peak memory' "$T/k$k.err")" $k
  # the workers received the root's clocks and steps, and sent their share
  for r in $(seq 1 $((k - 1))); do
    grep "^collscope: process $r: " "$T/k$k.err" | "$PY" -c '
import re, sys
m = re.search(r"sent (\d+) B, received (\d+) B", sys.stdin.read())
sys.exit(not (m and int(m.group(1)) > 1000 and int(m.group(2)) > 1000))' ||
      { cat "$T/k$k.err"; fail "K=$k: process $r exchanged nothing"; }
  done
  same_results k1 k$k "128 ranks, K=$k"
done
# the one-store analysis of the same job merged into one trace.db: the
# classic path, where the wait rows go into the trace itself
cp -a "$T/job" "$T/km"
"$COLLSCOPE" merge "$T/km" > /dev/null || fail "collscope merge (synthetic) failed"
"$COLLSCOPE" analyze "$T/km" 2> /dev/null || fail "analyze of the merged synthetic job failed"
for t in $TABLES; do
  [ "$(q "$T/km/trace.db" "SELECT * FROM $t" | md5sum)" = "$(q "$T/k1/results.db" "SELECT * FROM $t" | md5sum)" ] ||
    fail "128 ranks: table $t of the merged trace's analysis differs from the rank stores' (K=1)"
done
echo "ok: 128 ranks: the merged trace's analysis has the rank stores' tables"
"$PY" - "$T/k1.json" << 'PYEOF' || fail "the synthetic job's verdicts are not the expected ones"
import json, sys
a = json.load(open(sys.argv[1]))
kinds = {(s["kind"], s["rank"]) for s in a["stragglers"]}
if ("persistent", 77) not in kinds or a["processes"] != 128:
    sys.exit("want a persistent verdict on rank 77 among 128 processes: %s" % sorted(kinds))
print("ok: verdicts", sorted(kinds))
PYEOF

# the bound on the store pages a process keeps mapped (COLLSCOPE_MAPPED_MB),
# on a dense job (16 ranks, 400 000 spans) by K=2: with 1 MB both processes
# drop their mapped pages again and again, and what they hold resident
# beyond their private memory is under half what it is with no bound (0:
# never dropped); the same tables either way; a bad value is said once
"$GEN" "$T/dense" --rank-stores --ranks 16 --spans 200000 --seed 3 > /dev/null || fail "gen_trace (dense) failed"
for m in 0 1 12x; do
  cp -a "$T/dense" "$T/dense$m"
  COLLSCOPE_MAPPED_MB=$m COLLSCOPE_PAR_STATS=1 "$COLLSCOPE" analyze -j 2 --via workers "$T/dense$m" 2> "$T/dense$m.err" ||
    { cat "$T/dense$m.err"; fail "analyze -j 2 of the dense job (COLLSCOPE_MAPPED_MB=$m) failed"; }
done
same_results dense0 dense1 "dense job, K=2, 1 MB mapped at most against no bound"
expect_eq "COLLSCOPE_MAPPED_MB=12x said" \
  "$(grep -c '^collscope: COLLSCOPE_MAPPED_MB=12x is not a number of megabytes: the default bound, 256 MB$' "$T/dense12x.err")" 1
"$PY" - "$T/dense0.err" "$T/dense1.err" << 'PYEOF' || { cat "$T/dense0.err" "$T/dense1.err"; fail "the bound on mapped pages did not hold"; }
import re, sys
def stats(path):
    pat = r"^collscope: process (\d+): peak memory (\d+) KB, private (\d+) KB, .* mapped pages dropped (\d+) times$"
    return {int(m[0]): (int(m[1]) - int(m[2]), int(m[3])) for m in re.findall(pat, open(path).read(), re.M)}
free, bound = stats(sys.argv[1]), stats(sys.argv[2])
if sorted(free) != [0, 1] or sorted(bound) != [0, 1]:
    sys.exit("want two processes' statistics: %s %s" % (free, bound))
for p in (0, 1):
    if free[p][1] != 0 or bound[p][1] < 2:
        sys.exit("process %d dropped its mapped pages %d times with no bound, %d with 1 MB"
                 % (p, free[p][1], bound[p][1]))
    if not bound[p][0] * 2 < free[p][0]:
        sys.exit("process %d: resident beyond private %d KB with 1 MB mapped, %d KB with no bound"
                 % (p, bound[p][0], free[p][0]))
    print("ok: process %d: resident beyond private %d KB with 1 MB mapped at most (%d drops), %d KB with no bound"
          % (p, bound[p][0], bound[p][1], free[p][0]))
PYEOF

# traced MPI jobs, kept unmerged
MPI_OMPI=$(mpirun_for openmpi)
MPI_MPICH=$(mpirun_for mpich)
TRAINER=$B/examples/mpi_trainer_ompi
NBLOOP=$B/tests/progs/nbloop_ompi
if [ -x "$MPI_OMPI" ] && [ -x "$TRAINER" ] && [ -x "$NBLOOP" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
  "$COLLSCOPE" run -o "$T/tr" --no-merge -- "$MPI_OMPI" --oversubscribe -np 8 "$TRAINER" --steps 12 --buckets 2 \
    --halo --split --delay-us 30000 --delay-ranks 5 > "$T/tr.out" 2>&1 || { tail "$T/tr.out"; fail "traced trainer failed"; }
  [ "$(q "$T/tr/index.db" 'SELECT count(DISTINCT id) FROM comms')" -gt 2 ] || fail "the trainer's job lacks its communicators"
  cp -a "$T/tr" "$T/tr1"
  cp -a "$T/tr" "$T/trm"
  "$COLLSCOPE" analyze "$T/tr1" 2> /dev/null || fail "serial analyze (trainer) failed"
  if [ -x "$MPI_MPICH" ] && [ -x "$B/analyzer/collscope-analyze-mpich" ]; then
    cp -a "$T/tr" "$T/tr2"
    "$MPI_MPICH" -np 2 "$COLLSCOPE" analyze "$T/tr2" 2> "$T/tr2.err" || { cat "$T/tr2.err"; fail "mpirun -np 2 collscope analyze failed"; }
    same_results tr1 tr2 "trainer, mpirun.mpich -np 2 collscope analyze"
  fi
  if [ -x "$B/analyzer/collscope-analyze-openmpi" ]; then
    cp -a "$T/tr" "$T/tr3"
    "$COLLSCOPE" analyze -j 3 --via openmpi "$T/tr3" 2> "$T/tr3.err" || { cat "$T/tr3.err"; fail "-j 3 --via openmpi failed"; }
    same_results tr1 tr3 "trainer, -j 3 --via openmpi"
  fi
  "$COLLSCOPE" merge "$T/trm" > /dev/null || fail "collscope merge failed"
  [ -s "$T/trm/trace.db" ] || fail "merge wrote no trace.db"
  "$COLLSCOPE" report "$T/trm/trace.db" --format json -o "$T/trm.json" 2> /dev/null || fail "report (merged) failed"
  "$PY" - "$T/tr1.json" "$T/trm.json" << 'PYEOF' || fail "the merged trainer's job reports differently"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("trace")
if a != b:
    sys.exit("differs: %s" % [k for k in set(a) | set(b) if a.get(k) != b.get(k)])
if a["processes"] != 8:
    sys.exit("processes %s, want 8" % a["processes"])
print("ok: merged and unmerged trainer jobs report the same (%d verdicts)" % len(a["stragglers"]))
PYEOF
  # a slow link in a halo exchange (Sendrecv): the slow-link verdict and
  # its echo test read the paired messages back, here from the processes'
  # files, against the merged trace's messages in memory
  COLLSCOPE_TEST_P2P_DELAY=1:2:50000 "$COLLSCOPE" run -o "$T/sl" --no-merge -- "$MPI_OMPI" --oversubscribe -np 4 \
    "$TRAINER" --steps 16 --compute-us 500 --buckets 2 --halo > "$T/sl.out" 2>&1 || { tail "$T/sl.out"; fail "traced halo run failed"; }
  cp -a "$T/sl" "$T/sl1"
  cp -a "$T/sl" "$T/sl2"
  cp -a "$T/sl" "$T/slm"
  "$COLLSCOPE" analyze "$T/sl1" 2> /dev/null || fail "serial analyze (halo) failed"
  "$COLLSCOPE" analyze -j 2 --via workers "$T/sl2" 2> /dev/null || fail "-j 2 (halo) failed"
  same_results sl1 sl2 "halo with a slow link, -j 2 workers"
  "$COLLSCOPE" merge "$T/slm" > /dev/null && "$COLLSCOPE" analyze "$T/slm" 2> /dev/null || fail "merged halo analysis failed"
  for t in stragglers p2p layout; do
    [ "$(q "$T/slm/trace.db" "SELECT * FROM $t" | md5sum)" = "$(q "$T/sl1/results.db" "SELECT * FROM $t" | md5sum)" ] ||
      fail "halo: table $t of the merged trace differs from the rank stores'"
  done
  # (which link is named follows the run's timing: verdicts.inc.sh checks it)
  n=$(q "$T/sl1/results.db" "SELECT count(*) FROM stragglers WHERE kind = 'slow_link'")
  [ "$n" -ge 1 ] || fail "halo: no slow link found"
  echo "ok: halo: $n slow link(s), merged and unmerged alike"
  "$COLLSCOPE" run -o "$T/nb" --no-merge -- "$MPI_OMPI" --oversubscribe -np 6 "$NBLOOP" --steps 30 --buckets 4 \
    > "$T/nb.out" 2>&1 || { tail "$T/nb.out"; fail "traced nbloop failed"; }
  cp -a "$T/nb" "$T/nb1"
  cp -a "$T/nb" "$T/nb3"
  "$COLLSCOPE" analyze "$T/nb1" 2> /dev/null || fail "serial analyze (nbloop) failed"
  "$COLLSCOPE" analyze -j 3 --via workers "$T/nb3" 2> /dev/null || fail "-j 3 (nbloop) failed"
  [ "$(q "$T/nb1/results.db" 'SELECT count(*) FROM instances')" -ge 100 ] || fail "nbloop: too few instances"
  same_results nb1 nb3 "nbloop (nonblocking), -j 3 workers"
else
  echo "note: Open MPI, the trainer or nbloop missing: the traced jobs are left out"
fi

# a worker that stops in the middle of the work (its Nth exchange: 4 the
# barrier after the message ends are routed, 6 the paired messages' counts,
# 8 the match's sums, 10 process 1's word that it copied the waits into the
# results' file): one message naming it, exit 1, no results.db, no private
# folder, no process left
for x in 4 6 8 10; do
  rm -rf "$T/kx"
  cp -a "$T/job" "$T/kx"
  COLLSCOPE_PAR_TEST_KILL=1:$x "$COLLSCOPE" analyze -j 3 --via workers "$T/kx" > /dev/null 2> "$T/kx.err"
  expect_eq "worker stopped at exchange $x: exit status" $? 1
  grep -q 'analysis process 1 stopped' "$T/kx.err" || { cat "$T/kx.err"; fail "exchange $x: the stopped worker is not named"; }
  [ ! -e "$T/kx/results.db" ] || fail "exchange $x: results.db written"
  ls -a "$T/kx" | grep -q '^\.collscope-analyze' && fail "exchange $x: the private folder was left"
  left=$(pgrep -f "analyze -j 3 --via workers $T/kx" || true)
  [ -z "$left" ] || fail "exchange $x: processes left: $left"
done
echo "ok: a worker stopped in routing, pairing, the match or the copy of the waits ends the analysis cleanly"

# a rank store missing and one corrupt
cp -a "$T/job" "$T/bad1"
gone=$(ls "$T/bad1/ranks" | sed -n 4p)
junk=$(ls "$T/bad1/ranks" | sed -n 101p)
rm "$T/bad1/ranks/$gone"
echo "not a store" > "$T/bad1/ranks/$junk"
cp -a "$T/bad1" "$T/bad2"
"$COLLSCOPE" analyze "$T/bad1" 2> /dev/null
expect_eq "damaged job, serial: exit status" $? 1
"$COLLSCOPE" analyze -j 2 --via workers "$T/bad2" 2> "$T/bad2.err"
expect_eq "damaged job, K=2: exit status" $? 1
grep -q "$gone (missing)" "$T/bad2.err" || { cat "$T/bad2.err"; fail "the missing rank store is not named"; }
grep -q "$junk (not a collscope trace" "$T/bad2.err" || { cat "$T/bad2.err"; fail "the corrupt rank store is not named"; }
expect_eq "damaged job, K=2: ranks analysed" "$(q "$T/bad2/results.db" 'SELECT count(*) FROM rank_stats')" \
  "$(q "$T/bad1/results.db" 'SELECT count(*) FROM rank_stats')"
same_results bad1 bad2 "damaged job (2 of 128 rank stores), K=2"

# a span whose begin is not a time, in one rank store: the part that holds
# it fails its check, and the analysis stops with one message naming the job
cp -a "$T/job" "$T/bad3"
one=$(ls "$T/bad3/ranks" | sed -n 65p)
q "$T/bad3/ranks/$one" "UPDATE span SET begin_ns = 'soon' WHERE id = (SELECT min(id) FROM span)" > /dev/null
for k in 1 3; do
  "$COLLSCOPE" analyze -j $k --via workers "$T/bad3" 2> "$T/bad3.err"
  rc=$?
  [ $rc -ne 0 ] || fail "a span whose begin is not a time, K=$k: the analysis did not fail"
  grep -q "bad3/index.db: damaged trace: 1 spans whose begin or end is not a time" "$T/bad3.err" ||
    { cat "$T/bad3.err"; fail "K=$k: the damaged span is not reported"; }
  ls -a "$T/bad3" | grep -q '^\.collscope-analyze' && fail "K=$k: the private folder was left"
done
echo "ok: a damaged span is reported by the part that holds it (K=1 and 3)"

# private folders left by analyses that stopped: the root of a -j 2 run
# killed (SIGKILL) once its part is being made, and a planted one whose
# lock nobody holds, are removed by the next analysis, with one line each;
# one whose lock is held (an analysis at work), one of another user, and
# a link named like one are left alone
cp -a "$T/job" "$T/st"
"$COLLSCOPE" analyze -j 2 --via workers "$T/st" > /dev/null 2>&1 &
victim=$!
i=0
until ls "$T"/st/.collscope-analyze.*/part-0.db > /dev/null 2>&1 || [ $i -ge 200 ]; do
  sleep 0.05
  i=$((i + 1))
done
kill -9 $victim 2> /dev/null
wait $victim 2> /dev/null
killed=$(ls -d "$T"/st/.collscope-analyze.* 2> /dev/null)
[ -n "$killed" ] || fail "stale folders: the killed analysis left no private folder to clean (it ran past its part?)"
mkdir "$T/st/.collscope-analyze.dead01" "$T/st/.collscope-analyze.live01" "$T/st/.collscope-analyze.other1" \
  "$T/elsewhere"
for d in dead01 live01 other1; do : > "$T/st/.collscope-analyze.$d/lock"; : > "$T/st/.collscope-analyze.$d/part-0.db"; done
: > "$T/elsewhere/lock"
: > "$T/elsewhere/part-0.db"
ln -s "$T/elsewhere" "$T/st/.collscope-analyze.link01"
chown -R nobody "$T/st/.collscope-analyze.other1" 2> /dev/null || rm -rf "$T/st/.collscope-analyze.other1"
flock "$T/st/.collscope-analyze.live01/lock" sleep 60 &
holder=$!
sleep 0.3
"$COLLSCOPE" analyze "$T/st" > /dev/null 2> "$T/st.err" || { cat "$T/st.err"; fail "stale folders: the analysis failed"; }
pkill -P $holder 2> /dev/null
kill $holder 2> /dev/null
wait $holder 2> /dev/null
for d in $killed "$T/st/.collscope-analyze.dead01"; do
  [ ! -e "$d" ] || fail "stale folders: $d was not removed"
  grep -qF "$d: removed: the private folder of an analysis that stopped" "$T/st.err" ||
    { cat "$T/st.err"; fail "stale folders: the removal of $d is not told"; }
done
[ -f "$T/st/.collscope-analyze.live01/part-0.db" ] || fail "stale folders: a folder in use was removed"
[ ! -d "$T/st/.collscope-analyze.other1" ] || [ -f "$T/st/.collscope-analyze.other1/part-0.db" ] ||
  fail "stale folders: another user's folder was removed"
[ -L "$T/st/.collscope-analyze.link01" ] && [ -f "$T/elsewhere/part-0.db" ] ||
  fail "stale folders: a link (or what it points to) was removed"
[ "$(grep -c 'removed: the private folder' "$T/st.err")" = "$(echo $killed | wc -w | awk '{print $1 + 1}')" ] ||
  { cat "$T/st.err"; fail "stale folders: other folders reported removed"; }
rm -rf "$T"/st/.collscope-analyze.* "$T/elsewhere"
# a folder left while the results are current goes too (the analysis
# keeps them and does nothing else)
mkdir "$T/st/.collscope-analyze.dead02"
: > "$T/st/.collscope-analyze.dead02/lock"
"$COLLSCOPE" analyze "$T/st" > /dev/null 2> "$T/st.err" || { cat "$T/st.err"; fail "stale folders: a current analysis failed"; }
[ ! -e "$T/st/.collscope-analyze.dead02" ] || fail "stale folders: left while the results are current"
echo "ok: private folders of stopped analyses are removed by the next, and only those"
pass
