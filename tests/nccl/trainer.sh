#!/bin/sh
# The NCCL trainer under the CPU stand-ins, on 4 ranks, traced: exact
# per-op counts (NCCL, CUDA, MPI; the stand-in's own MPI calls stay out of
# the trace), sequence numbers that match across ranks (world, the split
# communicator, grouped calls), GPU begin and end for every collective, and
# results identical to an untraced run.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
args="--steps 4 --buckets 3 --split --all-ops"
"$(mpirun_for openmpi)" -np 4 "$TRAINER" $args > "$T/bare.out" 2>&1 || { cat "$T/bare.out"; fail "untraced run failed"; }
run_trainer "$T/r" "$T/run.out" $args
db=$T/r/trace.db
expect_eq "results as untraced" "$(grep -E '^(final loss|weights checksum)' "$T/run.out")" \
  "$(grep -E '^(final loss|weights checksum)' "$T/bare.out")"
check_all_counts "$T/run.out" "$db"
check_seqs "$db"
expect_eq "NCCL communicators (world + 2 split halves)" "$(q "$db" "SELECT count(DISTINCT id) FROM comms WHERE how LIKE 'nccl%'")" 3
expect_eq "split halves name the world as parent" \
  "$(q "$db" "SELECT count(*) FROM comms c WHERE how='nccl_split' AND parent IN (SELECT id FROM comms WHERE how='nccl')")" 4
expect_eq "split collectives per rank (2 a step)" "$(q "$db" "SELECT count(*) FROM spans s JOIN comms c ON c.id=s.comm AND c.rank=s.rank WHERE c.how='nccl_split' AND s.rank=0 AND s.seq IS NOT NULL")" 8
# Grouped calls: 3 bucket allreduces + send/recv a step share a group id with their Start/End.
expect_eq "groups per rank" "$(q "$db" "SELECT count(DISTINCT grp) FROM spans WHERE rank=1 AND grp IS NOT NULL")" 8
expect_eq "calls in groups per rank" "$(q "$db" "SELECT count(*) FROM spans WHERE rank=1 AND grp IS NOT NULL AND op IN ('ncclAllReduce','ncclSend','ncclRecv')")" 20
bad=$(q "$db" "SELECT grp FROM spans WHERE grp IS NOT NULL GROUP BY rank, grp HAVING sum(op='ncclGroupStart') != 1 OR sum(op='ncclGroupEnd') != 1 LIMIT 3")
expect_eq "every group has one Start and one End" "$bad" ""
# GPU times: every NCCL collective and p2p call, inside its group's bounds.
nc=$(q "$db" "SELECT count(*) FROM spans WHERE kind IN ('coll','rooted','send','recv') AND op LIKE 'nccl%'")
expect_eq "NCCL calls with GPU begin and end" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE kind IN ('coll','rooted','send','recv') AND op LIKE 'nccl%' AND gpu_begin_ns > 0 AND gpu_end_ns >= gpu_begin_ns")" "$nc"
expect_eq "stream recorded on every NCCL collective" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE kind IN ('coll','rooted','send','recv') AND op LIKE 'nccl%' AND stream IS NOT NULL AND stream != 0")" "$nc"
# Ungrouped collectives run during the call on the stand-in: GPU times lie within the span (10 us slack).
out=$(q "$db" "SELECT count(*) FROM spans WHERE op LIKE 'nccl%' AND grp IS NULL AND gpu_begin_ns IS NOT NULL
               AND (gpu_begin_ns < begin_ns - 10000 OR gpu_end_ns > end_ns + 10000)")
expect_eq "ungrouped GPU times inside their call" "$out" 0
expect_eq "reduction op recorded" "$(q "$db" "SELECT count(*) FROM spans WHERE op='ncclAllReduce' AND redop IS NULL")" 0
expect_eq "bytes of a bucket allreduce" "$(q "$db" "SELECT bytes FROM spans WHERE op='ncclAllReduce' AND rank=0 AND grp IS NOT NULL ORDER BY begin_ns LIMIT 1")" 1392
expect_eq "datatype" "$(q "$db" "SELECT DISTINCT datatype FROM spans WHERE op='ncclAllReduce'")" ncclFloat64
# The stand-in's MPI traffic is not in the trace.
expect_eq "MPI ops in the trace" "$(q "$db" "SELECT group_concat(op) FROM (SELECT DISTINCT op FROM spans WHERE op LIKE 'MPI_%' ORDER BY op)")" \
  "MPI_Bcast,MPI_Finalize,MPI_Init,MPI_Pcontrol"
# NCCL communicators by name: nccl comm 1, its split halves by parent and color.
"$COLLSCOPE" report "$T/r" > "$T/report.txt" 2>&1 || fail "report: $(tail -3 "$T/report.txt")"
sed -n '/^Per communicator/,/^$/p' "$T/report.txt" > "$T/comms.txt"
grep -Eq '^  nccl comm 1 \(4 ranks\) ' "$T/comms.txt" &&
  grep -Eq '^  split\(nccl comm 1, color 0\) \(2 ranks\) ' "$T/comms.txt" &&
  grep -Eq '^  split\(nccl comm 1, color 1\) \(2 ranks\) ' "$T/comms.txt" ||
  fail "NCCL communicators not named: $(cat "$T/comms.txt")"
! grep -Eq '^  [0-9]{6,}' "$T/comms.txt" || fail "a bare communicator id: $(cat "$T/comms.txt")"
echo "ok: NCCL communicators named nccl comm 1 and split(nccl comm 1, color C)"
pass
