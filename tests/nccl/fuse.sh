#!/bin/sh
# Apply mode's NCCL fusion (COLLSCOPE_FUSE=1) under the CPU stand-ins, on 4
# ranks, with tests/nccl/fuse_prog: results identical to the unfused and
# the untraced runs; in the trace, the fused calls (flags 4) and their
# members (flags 256) with matching ids and totals; no fusion across a
# stream, a communicator or a group, nor of a call outside a group or over
# the threshold; chunks under a small COLLSCOPE_FUSE_BUFFER; and each
# fallback (overlapping buffers, in-place mixed with out-of-place, an
# unsupported datatype, no memory for the fusion buffer) with the same
# results and one warning for the job.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
PROG=$B/tests/nccl/fuse_prog
need_standins "$PROG"
unset COLLSCOPE_FUSE COLLSCOPE_FUSE_BUFFER COLLSCOPE_FUSE_THRESHOLD COLLSCOPE_TEST_FUSE_NOMEM
# the fusion itself, every eligible batch fused (the guard: fuse_guard.sh)
export COLLSCOPE_FUSE_GUARD=0
MPIRUN=$(mpirun_for openmpi)
steps=3
# Per rank and step, in fuse_prog: 24 float32 + 8 int32 small calls on
# communicator A and stream 1 (two batches), then one on stream 2, one on
# communicator B, one over the threshold, in the group; one outside.
NMEMB=32; NOTHER=3

# bare MODE: the untraced program, into $T/bare-MODE.out.
bare() {
  timeout 120 "$MPIRUN" -np 4 "$PROG" --steps $steps --mode "$1" > "$T/bare-$1.out" 2>&1 ||
    { cat "$T/bare-$1.out"; fail "untraced fuse_prog --mode $1 failed"; }
  grep -q '^checksum: [0-9a-f]' "$T/bare-$1.out" || fail "untraced fuse_prog --mode $1 printed no checksum"
}
# traced NAME MODE [VAR=VALUE...]: a traced run into $T/NAME, with that environment.
traced() {
  _n=$1; _m=$2; shift 2
  env "$@" timeout 180 "$COLLSCOPE" run -o "$T/$_n" -- "$MPIRUN" -np 4 "$PROG" --steps $steps --mode "$_m" \
    > "$T/$_n.out" 2> "$T/$_n.err" || { tail -n 20 "$T/$_n.err"; fail "traced run $_n (--mode $_m) failed"; }
  grep -q '^checksum: [0-9a-f]' "$T/$_n.out" || fail "traced run $_n printed no checksum"
}
# same_results NAME MODE: the traced run NAME printed the checksum of the untraced MODE run.
same_results() {
  expect_eq "checksum of $1 as untraced" "$(grep '^checksum:' "$T/$1.out")" "$(grep '^checksum:' "$T/bare-$2.out")"
}
# member_checks DB: every member's id names a fused call of its rank and
# communicator, in the same group, stream, datatype and op; every fused
# call's count and bytes are its members' totals; ids are 1.. per
# communicator, the same fused call on every rank.
member_checks() {
  expect_eq "members without their fused call" "$(q "$1" "SELECT count(*) FROM spans m WHERE m.flags & 256 AND NOT EXISTS
    (SELECT 1 FROM spans f WHERE f.flags & 4 AND f.rank = m.rank AND f.comm = m.comm AND f.tag = m.tag AND f.grp = m.grp
     AND f.stream = m.stream AND f.datatype = m.datatype AND f.redop = m.redop)")" 0
  expect_eq "fused calls whose totals are not their members'" "$(q "$1" "SELECT count(*) FROM spans f WHERE f.flags & 4 AND
    (SELECT count(*) < 2 OR sum(m.count) != f.count OR sum(m.bytes) != f.bytes
     FROM spans m WHERE m.flags & 256 AND m.rank = f.rank AND m.comm = f.comm AND m.tag = f.tag)")" 0
  expect_eq "fused calls not alike on all 4 ranks" "$(q "$1" "SELECT count(*) FROM (SELECT comm, tag FROM spans
    WHERE flags & 4 GROUP BY comm, tag HAVING count(*) != 4 OR count(DISTINCT bytes) != 1 OR count(DISTINCT datatype) != 1)")" 0
  expect_eq "fused-call ids not 1..N per communicator" "$(q "$1" "SELECT count(*) FROM (SELECT rank, comm, min(tag) lo,
    max(tag) hi, count(*) n FROM spans WHERE flags & 4 GROUP BY rank, comm) WHERE lo != 1 OR hi != n")" 0
  expect_eq "fused calls that are not ncclAllReduce, have a seq or lack a comm" "$(q "$1" "SELECT count(*) FROM spans
    WHERE flags & 4 AND (op != 'ncclAllReduce' OR seq IS NOT NULL OR comm IS NULL OR NOT flags & 32)")" 0
  expect_eq "fused or member spans outside a group" "$(q "$1" "SELECT count(*) FROM spans WHERE flags & 260 AND grp IS NULL")" 0
  # User calls keep their sequence numbers: every instance on all 4 ranks.
  check_seqs "$1"
}
# warned NAME TEXT: exactly one warning line with TEXT for the job (rank 0's), and no other.
warned() {
  expect_eq "warnings '$2' ($1)" "$(grep -c "collscope: apply mode: .*$2" "$T/$1.err")" 1
  expect_eq "other apply-mode warnings ($1)" "$(grep 'collscope: apply mode' "$T/$1.err" | grep -vc "$2")" 0
}

# ---- the plain burst ----
bare none
traced unfused none
same_results unfused none
db=$T/unfused/trace.db
expect_eq "fusion marks without apply mode" "$(q "$db" "SELECT count(*) FROM spans WHERE flags & 260")" 0
traced fused none COLLSCOPE_FUSE=1
same_results fused none
expect_eq "apply-mode warnings" "$(grep -c 'collscope: apply mode' "$T/fused.err")" 0
db=$T/fused/trace.db
# The program's own calls are all there, as before.
for r in 0 1 2 3; do
  n=$(grep -o "calls: rank $r ncclAllReduce=[0-9]*" "$T/fused.out" | sed 's/.*=//')
  [ -n "$n" ] || fail "rank $r printed no call count"
  expect_eq "rank $r user ncclAllReduce spans" "$(q "$db" "SELECT count(*) FROM spans WHERE rank=$r AND op='ncclAllReduce' AND NOT flags & 4")" "$n"
done
expect_eq "fused calls per rank (float32 and int32 batch a step)" \
  "$(q "$db" "SELECT group_concat(n) FROM (SELECT count(*) n FROM spans WHERE flags & 4 GROUP BY rank)")" \
  "$((2 * steps)),$((2 * steps)),$((2 * steps)),$((2 * steps))"
expect_eq "member spans per rank" "$(q "$db" "SELECT group_concat(n) FROM (SELECT count(*) n FROM spans WHERE flags & 256 GROUP BY rank)")" \
  "$((NMEMB * steps)),$((NMEMB * steps)),$((NMEMB * steps)),$((NMEMB * steps))"
expect_eq "datatypes of the fused calls" "$(q "$db" "SELECT group_concat(datatype) FROM (SELECT DISTINCT datatype FROM spans WHERE flags & 4 ORDER BY datatype)")" \
  "ncclFloat32,ncclInt32"
expect_eq "members of a fused float32 call (rank 2, id 1)" "$(q "$db" "SELECT count(*) FROM spans WHERE rank=2 AND flags & 256 AND tag=1")" 24
expect_eq "members of a fused int32 call (rank 2, id 2)" "$(q "$db" "SELECT count(*) FROM spans WHERE rank=2 AND flags & 256 AND tag=2")" 8
member_checks "$db"
expect_eq "fused calls with GPU begin and end" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE flags & 4 AND gpu_begin_ns > 0 AND gpu_end_ns >= gpu_begin_ns")" "$((8 * steps))"
# Not fused: the call on stream 2, the one on communicator B, the large one.
expect_eq "grouped calls left alone per rank" \
  "$(q "$db" "SELECT group_concat(n) FROM (SELECT count(*) n FROM spans WHERE op='ncclAllReduce' AND grp IS NOT NULL AND NOT flags & 260 GROUP BY rank)")" \
  "$((NOTHER * steps)),$((NOTHER * steps)),$((NOTHER * steps)),$((NOTHER * steps))"
expect_eq "streams of the members (one)" "$(q "$db" "SELECT count(DISTINCT stream) FROM spans WHERE rank=0 AND flags & 256")" 1
expect_eq "calls on another stream than the members' fused" "$(q "$db" "SELECT count(*) FROM spans s WHERE grp IS NOT NULL AND op='ncclAllReduce'
  AND stream NOT IN (SELECT stream FROM spans WHERE flags & 256 AND rank = s.rank) AND flags & 260")" 0
expect_eq "calls on another stream, per rank" "$(q "$db" "SELECT count(*) FROM spans s WHERE rank=1 AND grp IS NOT NULL AND op='ncclAllReduce'
  AND stream NOT IN (SELECT stream FROM spans WHERE flags & 256 AND rank = 1)")" "$steps"
expect_eq "calls on communicator B fused" "$(q "$db" "SELECT count(*) FROM spans s JOIN comms c ON c.id = s.comm AND c.rank = s.rank
  WHERE c.how = 'nccl_split' AND s.op = 'ncclAllReduce' AND s.flags & 260")" 0
expect_eq "calls on communicator B" "$(q "$db" "SELECT count(*) FROM spans s JOIN comms c ON c.id = s.comm AND c.rank = s.rank
  WHERE c.how = 'nccl_split' AND s.op = 'ncclAllReduce'")" "$((4 * steps))"
expect_eq "members over the 64 KiB threshold" "$(q "$db" "SELECT count(*) FROM spans WHERE flags & 256 AND bytes > 65536")" 0
expect_eq "calls over the threshold left alone" "$(q "$db" "SELECT count(*) FROM spans WHERE op='ncclAllReduce' AND bytes = 160000 AND NOT flags & 260")" "$((4 * steps))"
# A call outside any group is never fused.
expect_eq "calls outside a group" "$(q "$db" "SELECT count(*) FROM spans WHERE op='ncclAllReduce' AND grp IS NULL AND NOT flags & 260")" "$((4 * steps))"

# ---- chunks: at most COLLSCOPE_FUSE_BUFFER bytes a fused call ----
traced chunks none COLLSCOPE_FUSE=1 COLLSCOPE_FUSE_BUFFER=4K
same_results chunks none
db=$T/chunks/trace.db
member_checks "$db"
nf=$(q "$db" "SELECT count(*) FROM spans WHERE rank=0 AND flags & 4")
[ "$nf" -gt $((2 * steps)) ] || fail "fused calls with 4 KiB chunks: $nf, want more than $((2 * steps))"
echo "ok: $nf fused calls on rank 0 with 4 KiB chunks"
expect_eq "fused calls over 4 KiB" "$(q "$db" "SELECT count(*) FROM spans WHERE flags & 4 AND bytes > 4096")" 0
expect_eq "small grouped calls of communicator A on stream 1 fused or left alone, none lost" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE rank=0 AND op='ncclAllReduce' AND grp IS NOT NULL AND NOT flags & 4")" "$(((NMEMB + NOTHER) * steps))"

# ---- fallbacks: the same results, one warning for the job, which succeeds ----
bare overlap
traced overlap overlap COLLSCOPE_FUSE=1
same_results overlap overlap
warned overlap "buffers overlap"
db=$T/overlap/trace.db
member_checks "$db"
expect_eq "members with an overlapping call left out (rank 3)" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE rank=3 AND flags & 256")" "$(((NMEMB - 1) * steps))"
expect_eq "grouped calls left alone (rank 3)" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE rank=3 AND op='ncclAllReduce' AND grp IS NOT NULL AND NOT flags & 260")" "$(((NOTHER + 2) * steps))"

bare inplace
traced inplace inplace COLLSCOPE_FUSE=1
same_results inplace inplace
warned inplace "in-place"
db=$T/inplace/trace.db
member_checks "$db"
# In-place calls fuse with each other: the three in-place max calls a step.
expect_eq "fused calls (rank 0)" "$(q "$db" "SELECT count(*) FROM spans WHERE rank=0 AND flags & 4")" "$((3 * steps))"
expect_eq "fused max calls of 3 members (rank 0)" "$(q "$db" "SELECT count(*) FROM spans f WHERE rank=0 AND flags & 4 AND redop=2
  AND (SELECT count(*) FROM spans m WHERE m.rank=0 AND m.flags & 256 AND m.comm=f.comm AND m.tag=f.tag) = 3")" "$steps"
expect_eq "members (rank 0)" "$(q "$db" "SELECT count(*) FROM spans WHERE rank=0 AND flags & 256")" "$(((NMEMB + 3) * steps))"
expect_eq "grouped calls left alone with the in-place ones (rank 0)" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE rank=0 AND op='ncclAllReduce' AND grp IS NOT NULL AND NOT flags & 260")" "$(((NOTHER + 3) * steps))"

bare dtype
traced dtype dtype COLLSCOPE_FUSE=1
same_results dtype dtype
warned dtype "unsupported datatype"
db=$T/dtype/trace.db
member_checks "$db"
expect_eq "8-bit float calls, none fused" "$(q "$db" "SELECT count(*), sum(flags & 260 != 0) FROM spans WHERE datatype='ncclFloat8e4m3'")" \
  "$((12 * steps))|0"
expect_eq "members (rank 0)" "$(q "$db" "SELECT count(*) FROM spans WHERE rank=0 AND flags & 256")" "$((NMEMB * steps))"

traced nomem none COLLSCOPE_FUSE=1 COLLSCOPE_TEST_FUSE_NOMEM=1
same_results nomem none
warned nomem "no device memory"
db=$T/nomem/trace.db
expect_eq "fused and member spans with no memory" "$(q "$db" "SELECT count(*) FROM spans WHERE flags & 260")" 0
expect_eq "grouped calls all issued as made (rank 0)" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE rank=0 AND op='ncclAllReduce' AND grp IS NOT NULL")" "$(((NMEMB + NOTHER) * steps))"
check_seqs "$db"
pass
