#!/bin/sh
# The forked workers of the parallel analysis (analyzer/par/par_fork.c) and
# `collscope analyze -j K`'s options. The transport alone (test_par_fork,
# with a stand-in of the analysis): 3 processes gather 300 MB and receive a
# 300 MB broadcast, every byte checked, with the byte counters; a worker
# stopped at once, in a gather or in a broadcast: the run fails naming it,
# with no child process and no descriptor left. End to end on a 64-rank job
# of rank stores: -j 2 and -j 3 --via workers write DIR/results.db with the
# serial analysis's report; COLLSCOPE_VERBOSE names the transport; a worker
# killed: one message naming it, exit 1, no results.db, no process left;
# bad -j and --via values: exit 2 with the usage; -j 2 on a merged trace:
# one note, analysed serially.
. "$srcdir/tests/lib.sh"
. "$S/tests/store/par_transport.inc.sh"
TPF=$B/tests/unit/test_par_fork
[ -x "$TPF" ] || fail "tests/unit/test_par_fork not built"

COLLSCOPE_PAR_TEST_MB=300 "$TPF" 3 > "$T/tpf.out" 2>&1
rc=$?
cat "$T/tpf.out"
expect_eq "300 MB each way among 3 processes: exit status" "$rc" 0
grep -q '^ok: gathered 300000021 bytes from 3 processes$' "$T/tpf.out" || fail "the gather was not checked"
grep -q '^ok: broadcast 300000003 bytes to 2 processes, sent 600000038 bytes$' "$T/tpf.out" ||
  fail "the broadcast or the root's byte count is wrong"
for k in 2 1:1 2:2 1:4; do
  COLLSCOPE_PAR_TEST_MB=20 COLLSCOPE_PAR_TEST_KILL=$k "$TPF" 3 > "$T/tpf.out" 2>&1
  rc=$?
  expect_eq "worker stopped ($k): exit status" "$rc" 3
  grep -q "^error: analysis process ${k%:*} stopped (exit 9)$" "$T/tpf.out" || { cat "$T/tpf.out"; fail "worker ${k%:*} not named"; }
  grep -q '^ok: no file descriptor left open' "$T/tpf.out" && grep -q '^ok: no child process left' "$T/tpf.out" ||
    { cat "$T/tpf.out"; fail "worker stopped ($k): something left behind"; }
done

for j in 2 3; do
  par_job w$j
  COLLSCOPE_VERBOSE=1 "$COLLSCOPE" analyze -j $j --via workers "$T/w$j" 2> "$T/w$j.err" ||
    { cat "$T/w$j.err"; fail "analyze -j $j --via workers failed"; }
  grep -q "analysing $T/w$j with $j forked processes" "$T/w$j.err" || { cat "$T/w$j.err"; fail "-j $j: transport not named"; }
  par_same w$j "-j $j --via workers"
done
par_job j1
"$COLLSCOPE" analyze -j 1 "$T/j1" 2> /dev/null || fail "analyze -j 1 failed"
par_same j1 "-j 1"

# a worker that stops
par_job kill
COLLSCOPE_PAR_TEST_KILL=2 "$COLLSCOPE" analyze -j 3 --via workers "$T/kill" > "$T/kill.out" 2> "$T/kill.err"
rc=$?
cat "$T/kill.err"
expect_eq "worker killed: exit status" "$rc" 1
expect_eq "worker killed: the message" "$(cat "$T/kill.err")" "collscope: analysis process 2 stopped (exit 9)"
[ ! -e "$T/kill/results.db" ] || fail "worker killed: results.db written"
left=$(pgrep -f "analyze -j 3 --via workers $T/kill" || true)
[ -z "$left" ] || fail "worker killed: processes left: $left"
echo "ok: no results.db and no process left"

# bad usage
for a in "-j 0" "-j abc" "-j -1" "-j 2.5" "-j 2 --via carrier-pigeon" "--via workers"; do
  # shellcheck disable=SC2086
  "$COLLSCOPE" analyze $a "$T/serial" > /dev/null 2> "$T/usage.err"
  rc=$?
  expect_eq "analyze $a: exit status" "$rc" 2
  grep -q '^usage: collscope analyze ' "$T/usage.err" || fail "analyze $a: no usage: $(cat "$T/usage.err")"
done

# a merged trace: analysed by one process, one note
"$GEN" "$T/merged.db" --ranks 8 --steps 4 --seed 3 > /dev/null || fail "gen_trace (merged) failed"
"$COLLSCOPE" analyze -j 2 "$T/merged.db" 2> "$T/merged.err" || { cat "$T/merged.err"; fail "analyze -j 2 of a merged trace failed"; }
expect_eq "merged trace: notes" "$(grep -c 'a merged trace is analysed by one process' "$T/merged.err")" 1
expect_eq "merged trace: analysed" "$(q "$T/merged.db" 'SELECT count(*) > 0 FROM steps')" 1
pass
