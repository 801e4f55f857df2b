#!/bin/sh
# Apply mode for MPI (COLLSCOPE_FUSE=1) on 4 ranks, both MPI libraries:
# - fuse_prog's patterns: exactly the batches it must form, per pattern
#   (grouped by its MPI_Pcontrol markers), and none across a completion call
#   or a communicator; the same batches on every rank; results bit-identical
#   to the untraced run; one warning per fallback; the out-of-memory fallback;
# - the example trainer with 64 nonblocking allreduces per step: identical
#   final weights and loss, 64 calls fused into 1 per step.
# The batching rules themselves, with the on-line guard off (it would run
# the first windows unfused and try other buffer sizes: tests/mpi/
# fuse_guard.sh tests it).
. "$srcdir/tests/lib.sh"
export COLLSCOPE_FUSE_GUARD=0
STEPS=3
ran=0

# fused_counts DB: "P fused members plain" per pattern, per rank and step.
fused_counts() {
  q "$1" "WITH s AS (SELECT x.*, (SELECT p.count FROM spans p WHERE p.rank = x.rank AND p.op = 'MPI_Pcontrol'
                                   AND p.begin_ns <= x.begin_ns ORDER BY p.begin_ns DESC LIMIT 1) AS pat
                      FROM spans x WHERE x.op = 'MPI_Iallreduce')
          SELECT pat, sum((flags & 4) != 0) / (4 * $STEPS), sum((flags & 256) != 0) / (4 * $STEPS),
                 sum((flags & 260) = 0) / (4 * $STEPS)
          FROM s WHERE pat IS NOT NULL GROUP BY pat ORDER BY pat" | tr '|' ' '
}

run_flavor() {
  flavor=$1 prog=$2
  l=$(mpirun_for "$flavor")
  [ -n "$l" ] && [ -x "$l" ] && [ -x "$prog" ] || { echo "note: $flavor not available"; return; }
  ran=$((ran + 1))
  d=$T/$flavor
  "$l" -np 4 "$prog" $STEPS > "$d.plain.out" 2>&1 || fail "$flavor: untraced run failed: $(cat "$d.plain.out")"
  want=$(grep -o 'checksum [0-9a-f]*' "$d.plain.out")
  [ -n "$want" ] || fail "$flavor: no checksum: $(cat "$d.plain.out")"
  grep -q 'wrong values 0' "$d.plain.out" || fail "$flavor: untraced run computed wrong values"

  COLLSCOPE_FUSE=1 "$COLLSCOPE" run -o "$d.fused" -- "$l" -np 4 "$prog" $STEPS > "$d.fused.out" 2> "$d.fused.err" ||
    fail "$flavor: fused run failed: $(cat "$d.fused.out" "$d.fused.err")"
  expect_eq "$flavor: fused run, same result bits" "$(grep -o 'checksum [0-9a-f]*' "$d.fused.out")" "$want"
  grep -q 'wrong values 0' "$d.fused.out" || fail "$flavor: fused run computed wrong values"

  # Exactly the batches each pattern must form (fused calls, their members,
  # calls left alone), per rank and step. See tests/mpi/fuse_prog.c.
  fused_counts "$d.fused/trace.db" > "$d.counts"
  cat > "$d.want" <<EOF
1 1 40 0
2 2 20 0
3 2 4 0
4 2 3 0
5 1 1 1
6 3 3 0
7 0 0 2
8 2 2 1
9 1 4 0
10 2 2 0
11 1 6 0
12 1 3 0
EOF
  diff "$d.want" "$d.counts" > "$d.diff" || fail "$flavor: batches per pattern (P fused members plain), want/got: $(cat "$d.diff")"
  echo "ok: $flavor: the batches of all 12 patterns"

  db=$d.fused/trace.db
  # The program's calls are all still there, one span each.
  COLLSCOPE_FUSE=0 "$COLLSCOPE" run -o "$d.unfused" -- "$l" -np 4 "$prog" $STEPS > "$d.unfused.out" 2>&1 ||
    fail "$flavor: traced unfused run failed"
  expect_eq "$flavor: traced unfused run, same result bits" "$(grep -o 'checksum [0-9a-f]*' "$d.unfused.out")" "$want"
  expect_eq "$flavor: the program's MPI_Iallreduce calls are all traced" \
    "$(q "$db" "SELECT count(*) FROM spans WHERE op='MPI_Iallreduce' AND (flags & 4) = 0")" \
    "$(q "$d.unfused/trace.db" "SELECT count(*) FROM spans WHERE op='MPI_Iallreduce'")"
  expect_eq "$flavor: no fused span in the unfused run" \
    "$(q "$d.unfused/trace.db" "SELECT count(*) FROM spans WHERE (flags & 260) != 0")" 0
  # Every fused call carries exactly its members' totals, on its communicator.
  expect_eq "$flavor: fused calls whose totals differ from their members'" \
    "$(q "$db" "SELECT count(*) FROM spans f WHERE (f.flags & 4) != 0 AND (f.bytes, f.count) IS NOT
               (SELECT sum(m.bytes), sum(m.count) FROM spans m WHERE (m.flags & 256) != 0 AND m.rank = f.rank
                AND m.comm = f.comm AND m.tag = f.tag)")" 0
  expect_eq "$flavor: members without their fused call" \
    "$(q "$db" "SELECT count(*) FROM spans m WHERE (m.flags & 256) != 0 AND NOT EXISTS (SELECT 1 FROM spans f
               WHERE (f.flags & 4) != 0 AND f.rank = m.rank AND f.comm = m.comm AND f.tag = m.tag)")" 0
  # No batch spans a completion call, and every rank formed the same ones.
  [ "$(q "$db" "SELECT count(*) FROM spans WHERE kind = 'complete'")" -gt 0 ] || fail "$flavor: no completion spans"
  expect_eq "$flavor: completion calls inside a batch" \
    "$(q "$db" "SELECT count(*) FROM (SELECT rank, comm, tag, min(begin_ns) b, max(end_ns) e FROM spans
               WHERE (flags & 256) != 0 GROUP BY rank, comm, tag) g JOIN spans c ON c.rank = g.rank
               AND c.kind = 'complete' AND c.begin_ns > g.b AND c.begin_ns < g.e")" 0
  expect_eq "$flavor: fused calls that differ between ranks" \
    "$(q "$db" "SELECT count(*) FROM (SELECT comm, tag FROM spans WHERE (flags & 4) != 0 GROUP BY comm, tag
               HAVING count(*) != 4 OR count(DISTINCT count) != 1)")" 0
  expect_eq "$flavor: fused calls that completed (completions rows)" \
    "$(q "$db" "SELECT count(*) FROM spans f JOIN completions c ON c.rank = f.rank AND c.req = f.req
               WHERE (f.flags & 4) != 0")" "$(q "$db" "SELECT count(*) FROM spans WHERE (flags & 4) != 0")"
  check_seqs "$db"
  # One line per fallback for the whole job.
  for w in 'buffers overlap' 'in-place and out-of-place' 'MPI_DOUBLE_INT allreduces are not fused'; do
    expect_eq "$flavor: one warning: $w" "$(grep -c "$w" "$d.fused.err")" 1
  done

  # No memory for the fusion buffer: every call runs as the program issued
  # it, one warning, same bits.
  COLLSCOPE_FUSE=1 COLLSCOPE_TEST_FUSE_NOMEM=1 "$COLLSCOPE" run -o "$d.nomem" -- "$l" -np 4 "$prog" $STEPS \
    > "$d.nomem.out" 2> "$d.nomem.err" || fail "$flavor: no-memory run failed: $(cat "$d.nomem.err")"
  expect_eq "$flavor: no memory: same result bits" "$(grep -o 'checksum [0-9a-f]*' "$d.nomem.out")" "$want"
  expect_eq "$flavor: no memory: one warning" "$(grep -c 'no memory for a' "$d.nomem.err")" 1
  expect_eq "$flavor: no memory: every fused call ran as one call per member" \
    "$(q "$d.nomem/trace.db" "SELECT count(*) FROM spans WHERE (flags & 4) != 0")" \
    "$(q "$d.nomem/trace.db" "SELECT count(*) FROM spans WHERE (flags & 256) != 0")"

  # The example trainer: 64 nonblocking allreduces per step.
  tr=$B/examples/mpi_trainer_$3
  args="--steps 20 --buckets 64 --nonblocking"
  "$l" -np 4 "$tr" $args > "$d.tr.plain" 2>&1 || fail "$flavor: trainer failed"
  COLLSCOPE_FUSE=1 "$COLLSCOPE" run -o "$d.tr" -- "$l" -np 4 "$tr" $args > "$d.tr.fused" 2>&1 ||
    fail "$flavor: fused trainer failed: $(cat "$d.tr.fused")"
  for k in 'final loss' 'weights checksum'; do
    a=$(grep -o "$k: [0-9a-f.e+-]*" "$d.tr.plain"); b=$(grep -o "$k: [0-9a-f.e+-]*" "$d.tr.fused")
    [ -n "$a" ] || fail "$flavor: trainer printed no $k"
    expect_eq "$flavor: trainer $k, fused" "$b" "$a"
  done
  expect_eq "$flavor: trainer: 64 calls fused into 1 per rank and step" \
    "$(q "$d.tr/trace.db" "SELECT sum((flags & 256) != 0) || ' ' || sum((flags & 4) != 0) FROM spans WHERE op = 'MPI_Iallreduce'")" \
    "$((64 * 20 * 4)) $((20 * 4))"
}

run_flavor openmpi "$B/tests/mpi/fuse_prog_ompi" ompi
run_flavor mpich "$B/tests/mpi/fuse_prog_mpich" mpich
[ $ran -gt 0 ] || skip "neither Open MPI nor MPICH is built here"
pass
