#!/bin/sh
# Apply mode's guard on NCCL (interpose/fuse/nccl_fuse.c, fuse_guard.h)
# under the CPU stand-ins, 2 ranks, tests/nccl/fuse_prog (33 grouped calls
# a step that could be fused on communicator A: a window is 2 steps),
# judged by the program's own timer and checksum:
# - fusing made to lose (CS_STANDIN_ALLREDUCE_COST=0:4096:200000: an
#   allreduce of more than 4 KiB, i.e. a fused call, costs 200 ms; a step
#   has two): the guard chooses unfused after its trial ("unfused wins the
#   trial"), and the program's own step times confirm it (shorter in the
#   unfused windows than in the trial's fused ones; the cost is that large
#   because on a loaded machine the 66 small unfused calls of a step,
#   each a message between two ranks sharing busy cores, took 88-650 ms
#   a step where they take 0.1 ms on a quiet one); fused windows are the
#   trial's only;
# - fusing made to win (CS_STANDIN_ALLREDUCE_COST=2000: every allreduce
#   costs 2 ms, 36 a step unfused): the guard keeps a fused setting, and
#   the program's steps with it are shorter than its steps in the trial's
#   unfused windows;
# - every run's checksum identical to the untraced unfused run; every rank
#   recorded the same decisions and window figures (the votes agree), with
#   family 'nccl'; the report shows the NCCL guard's decisions (and still
#   reads a file written before the family column).
CS_TEST_NAME=nccl-fuse_guard # (its work folder: /tmp/cs-nccl-fuse_guard.*)
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
PROG=$B/tests/nccl/fuse_prog
need_standins "$PROG" CS_STANDIN_ALLREDUCE_COST
unset COLLSCOPE_FUSE COLLSCOPE_FUSE_BUFFER COLLSCOPE_FUSE_THRESHOLD COLLSCOPE_TEST_FUSE_NOMEM COLLSCOPE_FUSE_GUARD \
  CS_STANDIN_ALLREDUCE_COST
MPIRUN=$(mpirun_for openmpi)
PY=/usr/bin/python3
[ -x "$PY" ] || skip "python3 not installed"
STEPS=60

timeout 120 "$MPIRUN" -np 2 "$PROG" --steps $STEPS --mode guard > "$T/bare.out" 2>&1 || { cat "$T/bare.out"; fail "untraced fuse_prog failed"; }
want=$(grep '^checksum:' "$T/bare.out")
[ -n "$want" ] || fail "untraced fuse_prog printed no checksum: $(cat "$T/bare.out")"

# guarded NAME COST: a traced apply-mode run with that cost per allreduce.
guarded() {
  CS_STANDIN_ALLREDUCE_COST=$2 COLLSCOPE_FUSE=1 timeout 240 "$COLLSCOPE" run -o "$T/$1" -- \
    "$MPIRUN" -np 2 "$PROG" --steps $STEPS --mode guard > "$T/$1.out" 2> "$T/$1.err" ||
    { tail -n 20 "$T/$1.err"; fail "traced run $1 failed"; }
  expect_eq "$1: checksum as the untraced unfused run" "$(grep '^checksum:' "$T/$1.out")" "$want"
  expect_eq "$1: apply-mode warnings" "$(grep -c 'collscope: apply mode' "$T/$1.err")" 0
  db=$T/$1/trace.db
  expect_eq "$1: guard rows not NCCL's" "$(q "$db" "SELECT count(*) FROM fuse_guard WHERE family IS NOT 'nccl'")" 0
  # communicator A (its windows end at a step's group); B has 1 call a step
  ca=$(q "$db" "SELECT comm FROM fuse_guard WHERE what = 'window' GROUP BY comm ORDER BY count(*) DESC LIMIT 1")
  expect_eq "$1: guard on an NCCL communicator" "$(q "$db" "SELECT DISTINCT how FROM comms WHERE id = $ca")" nccl
  expect_eq "$1: decisions that differ between the ranks" \
    "$(q "$db" "SELECT count(*) FROM (SELECT comm, window, setting, buffer, why FROM fuse_guard WHERE what = 'decision'
               GROUP BY comm, window, setting, buffer, why HAVING count(*) != 2)")" 0
  expect_eq "$1: window figures that differ between the ranks" \
    "$(q "$db" "SELECT count(*) FROM (SELECT comm, window FROM fuse_guard WHERE what = 'window'
               GROUP BY comm, window, setting, calls HAVING count(*) != 2 OR max(time_ns) > 1.01 * min(time_ns))")" 0
  nw=$(q "$db" "SELECT count(*) FROM fuse_guard WHERE what = 'window' AND rank = 0 AND comm = $ca")
  [ "$nw" -ge 20 ] || fail "$1: $nw windows measured on communicator A, want 20 or more"
  expect_eq "$1: calls per window on A (33 a step, 2 steps)" \
    "$(q "$db" "SELECT DISTINCT calls FROM fuse_guard WHERE what = 'window' AND comm = $ca")" 132
  first=$(q "$db" "SELECT setting || ' ' || why FROM fuse_guard WHERE what = 'decision' AND rank = 0 AND comm = $ca
                   ORDER BY window LIMIT 1")
  last=$(q "$db" "SELECT setting FROM fuse_guard WHERE what = 'decision' AND rank = 0 AND comm = $ca
                  ORDER BY window DESC LIMIT 1")
  nfused=$(q "$db" "SELECT count(*) FROM fuse_guard WHERE what = 'window' AND rank = 0 AND comm = $ca AND setting != 0")
  med=$(sed -n 's/^comm_us_med: //p' "$T/$1.out")
  [ -n "$med" ] || fail "$1: the program printed no comm_us_med"
  # the program's own step times (its "step:" lines) in the windows the
  # guard ran unfused and in those it ran fused (with the last decision's
  # setting where that is fused): a window is 2 steps (checked above: 33
  # fusable calls a step and rank, 132 in a window of 2 ranks), window w
  # steps 2w and 2w+1 ("at_ns" is when its record was written, after its
  # vote came back two windows later); "UNFUSED_MEDIAN FUSED_MEDIAN" in
  # us, or "-" where there was none
  bys=$("$PY" - "$T/$1.out" "$db" "$ca" "$last" <<'PYEOF'
import sqlite3, statistics, sys
steps = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("step: ")]
db = sqlite3.connect(sys.argv[2])
setting = dict(db.execute("SELECT window, setting FROM fuse_guard WHERE what = 'window' AND rank = 0 AND comm = ?",
                          (int(sys.argv[3]),)).fetchall())
keep = int(sys.argv[4])
u, f = [], []
for step, us in steps:
    w = setting.get(int(step) // 2)
    if w == 0:
        u.append(float(us))
    elif w is not None and (keep == 0 or w == keep):
        f.append(float(us))
print(" ".join("%.0f" % statistics.median(x) if x else "-" for x in (u, f)))
PYEOF
) || fail "$1: the program's steps could not be placed in the guard's windows"
  um=${bys% *} fm=${bys#* }
  [ "$um" != - ] && [ "$fm" != - ] || fail "$1: no program step in an unfused window ($um) or a fused one ($fm)"
}

# ---- fusing loses: back to unfused, and why ----
guarded lose 0:4096:200000
expect_eq "lose: the trial's decision" "$first" "0 unfused wins the trial"
expect_eq "lose: the last decision" "$last" 0
# the trial's fused windows only (3 settings x 3 rounds; no check yet)
[ "$nfused" -le 9 ] || fail "lose: $nfused of $nw windows ran fused"
# fused calls in the trace: the trial's only (2 a step, 2 steps a window)
nf=$(q "$db" "SELECT count(*) FROM spans WHERE rank = 0 AND flags & 4")
[ "$nf" -le $((9 * 4)) ] && [ "$nf" -gt 0 ] || fail "lose: $nf fused calls on rank 0, want 1..36"
# the program's own timer confirms the choice: its steps in the unfused
# windows are shorter than those in the trial's fused ones (same run,
# interleaved: a loaded machine slows both; beside 8 busy loops the 66
# small unfused calls of a step took 0.6 s, where they take 0.1 ms alone)
awk -v u="$um" -v f="$fm" 'BEGIN { exit !(u < f) }' ||
  fail "lose: the program's median step is $um us in unfused windows, $fm us in fused ones"
echo "ok: lose: unfused after the trial ($nfused of $nw windows fused), the program's median step $um us unfused, $fm us fused"

# ---- fusing wins: kept ----
guarded win 2000
case $first in 0\ *) fail "win: the trial chose unfused ($first)" ;; esac
expect_eq "win: why" "${first#* }" "best of the trial"
[ "$last" != 0 ] || fail "win: ends unfused"
awk -v u="$um" -v f="$fm" 'BEGIN { exit !(f < u) }' ||
  fail "win: the program's median step is $fm us with the kept setting, $um us unfused"
echo "ok: win: fused setting $last kept ($nfused of $nw windows fused), the program's median step $fm us with it, $um us unfused"
"$COLLSCOPE" report "$T/win" > "$T/win.report" 2>&1 || fail "report failed: $(cat "$T/win.report")"
grep -q "Apply mode's guard" "$T/win.report" || fail "the report does not show the guard: $(cat "$T/win.report")"
grep -q "nccl comm 1 .*windows measured (NCCL" "$T/win.report" ||
  fail "the report does not show the NCCL guard's windows: $(cat "$T/win.report")"
grep -q "nccl comm 1 .*from window [0-9]*: fused, buffers of" "$T/win.report" ||
  fail "the report does not show the NCCL guard's decision: $(cat "$T/win.report")"
# a file written before the family column: its rows read as the MPI guard's
mkdir "$T/old" && cp "$T/win/trace.db" "$T/old/" || fail "cannot copy the trace"
sqlite3 "$T/old/trace.db" "ALTER TABLE fuse_guard DROP COLUMN family" || fail "cannot drop the family column"
"$COLLSCOPE" report "$T/old" > "$T/old.report" 2>&1 || fail "report of a file without family failed: $(cat "$T/old.report")"
grep -q "nccl comm 1 .*from window [0-9]*: fused, buffers of" "$T/old.report" ||
  fail "the report of a file without family lost the decisions: $(cat "$T/old.report")"
! grep -q "windows measured (NCCL" "$T/old.report" || fail "a file without family read as NCCL's"
pass
