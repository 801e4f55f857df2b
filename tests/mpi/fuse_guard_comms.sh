#!/bin/sh
# Apply mode's guard on many communicators (interpose/fuse/mpi_fuse.c),
# 2 ranks, both MPI libraries, tests/mpi/manycomm_prog: rank 0 first uses 8
# communicators of its own (split with MPI_UNDEFINED on rank 1), then
# every rank 40 dups and splits of the world, each used round-robin for 16
# windows of 64 nonblocking allreduces of 256 B and a Waitall, then half of
# them freed and replaced, 16 windows more. The guard once kept its state
# in a table of 32 communicators: rank 0 ran out of room 8 communicators
# earlier than rank 1, so rank 1 voted alone on some communicators (and
# ran fused calls against rank 0's unfused ones) and the job hung. Now:
# - the job ends (under timeout) with its values right and the result
#   bits of the untraced run on both ranks;
# - every communicator with fusable calls is measured on each of its
#   members (window rows from every member), and every member recorded the
#   same window figures and decisions for it; no apply-mode warning.
. "$srcdir/tests/lib.sh"
unset COLLSCOPE_FUSE_GUARD COLLSCOPE_FUSE_BUFFER COLLSCOPE_FUSE_THRESHOLD COLLSCOPE_TEST_GUARD_SLOW
ARGS="8 40 16 64 256"
ran=0

# field FILE RANK NAME: NAME=value on that rank's COMMS line
field() { grep -o "COMMS rank=$2 .*" "$1" | tr ' ' '\n' | sed -n "s/^$3=//p"; }

run_flavor() {
  flavor=$1 prog=$2
  l=$(mpirun_for "$flavor")
  [ -n "$l" ] && [ -x "$l" ] && [ -x "$prog" ] || { echo "note: $flavor not available"; return; }
  ran=$((ran + 1))
  d=$T/$flavor
  timeout 120 "$l" -np 2 "$prog" $ARGS > "$d.plain" 2>&1 || fail "$flavor: untraced run failed: $(cat "$d.plain")"
  COLLSCOPE_FUSE=1 timeout 90 "$COLLSCOPE" run -o "$d" -- "$l" -np 2 "$prog" $ARGS > "$d.out" 2> "$d.err"
  rc=$?
  [ $rc = 124 ] && fail "$flavor: the job hung under apply mode's guard (killed after 90 s)"
  [ $rc = 0 ] || fail "$flavor: traced run failed ($rc): $(tail -n 20 "$d.out" "$d.err")"
  for r in 0 1; do
    want=$(field "$d.plain" $r checksum)
    [ -n "$want" ] || fail "$flavor: rank $r printed no checksum: $(cat "$d.plain")"
    expect_eq "$flavor: rank $r values" "$(field "$d.out" $r wrong)" 0
    expect_eq "$flavor: rank $r result bits" "$(field "$d.out" $r checksum)" "$want"
  done
  expect_eq "$flavor: communicators made on rank 0 / 1" "$(field "$d.out" 0 comms) / $(field "$d.out" 1 comms)" "68 / 60"
  expect_eq "$flavor: apply-mode warnings" "$(grep -c 'collscope: apply mode' "$d.err")" 0
  db=$d/trace.db
  expect_eq "$flavor: communicators measured on rank 0 / 1" \
    "$(q "$db" "SELECT count(DISTINCT comm) FROM fuse_guard WHERE what = 'window' AND rank = 0") / $(
       q "$db" "SELECT count(DISTINCT comm) FROM fuse_guard WHERE what = 'window' AND rank = 1")" "68 / 60"
  # every communicator measured on each of its members
  expect_eq "$flavor: communicators measured on fewer ranks than their members" \
    "$(q "$db" "SELECT count(*) FROM (SELECT f.comm, count(DISTINCT f.rank) n, (SELECT max(size) FROM comms c WHERE c.id = f.comm) sz
               FROM fuse_guard f WHERE f.what = 'window' GROUP BY f.comm) WHERE n != sz")" 0
  # (a window's figure is recorded when its vote is read, two windows
  # later: a communicator's last two are never read)
  expect_eq "$flavor: windows recorded per communicator on rank 1 (16 or 32 run)" \
    "$(q "$db" "SELECT group_concat(DISTINCT n) FROM (SELECT count(*) n FROM fuse_guard WHERE what = 'window' AND rank = 1
               GROUP BY comm ORDER BY n)")" "14,30"
  # each member recorded the same figures and decisions for it (the votes agree)
  expect_eq "$flavor: window figures that differ between members" \
    "$(q "$db" "SELECT count(*) FROM (SELECT f.comm, f.window FROM fuse_guard f WHERE f.what = 'window'
               GROUP BY f.comm, f.window, f.setting, f.calls
               HAVING count(*) != (SELECT max(size) FROM comms c WHERE c.id = f.comm) OR max(f.time_ns) > 1.01 * min(f.time_ns))")" 0
  nd=$(q "$db" "SELECT count(*) FROM fuse_guard WHERE what = 'decision' AND rank = 1")
  [ "$nd" -ge 40 ] || fail "$flavor: $nd decisions on rank 1, want one or more per communicator"
  expect_eq "$flavor: decisions that differ between members" \
    "$(q "$db" "SELECT count(*) FROM (SELECT f.comm FROM fuse_guard f WHERE f.what = 'decision'
               GROUP BY f.comm, f.window, f.setting, f.buffer, f.why
               HAVING count(*) != (SELECT max(size) FROM comms c WHERE c.id = f.comm))")" 0
  nf=$(q "$db" "SELECT count(*) FROM fuse_guard WHERE what = 'window' AND setting != 0 AND rank = 1")
  [ "$nf" -gt 0 ] || fail "$flavor: no window ran fused"
  echo "ok: $flavor: 68 / 60 communicators measured, $nd decisions and $nf fused windows on rank 1, all alike"
}

run_flavor openmpi "$B/tests/mpi/manycomm_prog_ompi"
run_flavor mpich "$B/tests/mpi/manycomm_prog_mpich"
[ $ran -gt 0 ] || skip "no MPI implementation with its test program"
pass
