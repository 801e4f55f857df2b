#!/bin/sh
# A rank store that is not the one the job index records is never analysed
# as if it belonged: each rank store carries its run id (meta run_id) and
# the index records, for each file, the process (rank, pid, host), its
# span count and its run. analyze (-j 1 and -j 2), merge, report and the
# TUI name a store of another run, a stale one or a duplicate of another
# rank's, leave it out, and exit 1. Stores made before stores carried a
# run id are read ("run id unknown"), checked by their process alone.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
need_mpi openmpi
mpirun=$(mpirun_for openmpi)
tui=$B/tui/collscope-tui
for r in a b; do
  "$COLLSCOPE" run --no-merge -o "$T/$r" -- "$mpirun" -n 2 "$prog" --steps 4 > /dev/null 2>&1 || fail "run $r failed"
done
runa=$(q "$T/a/index.db" "SELECT value FROM meta WHERE key = 'run_id'")
runb=$(q "$T/b/index.db" "SELECT value FROM meta WHERE key = 'run_id'")
[ -n "$runa" ] && [ -n "$runb" ] && [ "$runa" != "$runb" ] || fail "the runs' ids: '$runa' and '$runb'"
expect_eq "each rank store of run a carries its run id" \
  "$(for f in "$T"/a/ranks/*.db; do q "$f" "SELECT value FROM meta WHERE key = 'run_id'"; done | sort -u)" "$runa"
expect_eq "the index records it for each file" "$(q "$T/a/index.db" "SELECT DISTINCT run_id FROM rank_files")" "$runa"
# a small job's rank stores are made with small pages (a few hundred KB,
# not the 1.9 MB that 64 KiB pages cost every store of a few spans)
expect_eq "page size of each rank store of a 4-step job" \
  "$(for f in "$T"/a/ranks/*.db; do q "$f" "PRAGMA page_size"; done | sort -u)" 4096
cp -r "$T/a" "$T/orig"
cp -r "$T/a" "$T/base"
"$COLLSCOPE" analyze "$T/a" > /dev/null 2> "$T/ok.err" || fail "the job as written does not analyse: $(cat "$T/ok.err")"

# fresh: a copy of run a's folder, as written
fresh() { rm -rf "$T/a"; cp -r "$T/orig" "$T/a"; }
# refused WHAT PATTERN: analyze, analyze -j 2, report, diff (against the
# job as written), merge and the TUI exit 1 and name the rank 1 store with
# PATTERN
refused() {
  for c in "analyze" "analyze -j 2" "report" "diff" "tui" "merge"; do
    case $c in
      tui) "$tui" --index "$T/a" > /dev/null 2> "$T/c.err" ;;
      diff) "$COLLSCOPE" diff "$T/base" "$T/a" > /dev/null 2> "$T/c.err" ;;
      *) "$COLLSCOPE" $c "$T/a" > /dev/null 2> "$T/c.err" ;;
    esac
    st=$?
    expect_eq "$1: $c: exit status (stderr: $(head -c 600 "$T/c.err"))" $st 1
    grep -q "$a1 ($2" "$T/c.err" || fail "$1: $c does not name $a1 ($2): $(cat "$T/c.err")"
  done
  expect_eq "$1: the merged trace holds rank 0 only" "$(q "$T/a/trace.db" "SELECT group_concat(rank) FROM processes")" 0
  [ -f "$T/a/index.db" ] || fail "$1: merge removed the index that records the rank stores"
}

# Rank 1's store of run b copied over rank 1's store of run a.
fresh
a1=$(ls "$T"/a/ranks/rank-000001-*.db)
pida=$(q "$a1" "SELECT pid FROM processes")
cp "$(ls "$T"/b/ranks/rank-000001-*.db)" "$a1"
refused "another run's store" "holds rank 1 pid [0-9]* on .* of run $runb, but the job index records rank 1 pid $pida on .* of run $runa: a rank store of another run, left out"

# The same, with the pid the index records (pids repeat: containers, a
# rebooted node): the run id tells it apart.
fresh
cp "$(ls "$T"/b/ranks/rank-000001-*.db)" "$a1"
q "$a1" "UPDATE processes SET pid = $pida" > /dev/null
refused "another run's store, same pid" "holds rank 1 pid $pida on .* of run $runb, but the job index records rank 1 pid $pida on .* of run $runa: a rank store of another run, left out"

# A stale store: the same process, fewer spans than the index records.
fresh
want=$(q "$a1" "SELECT spans FROM processes")
q "$a1" "DELETE FROM span WHERE id IN (SELECT id FROM span ORDER BY id DESC LIMIT 3); UPDATE processes SET spans = spans - 3" > /dev/null
refused "a stale store" "holds $((want - 3)) spans of rank 1 pid $pida, but the job index records $want: a stale rank store"

# A duplicate: rank 0's store copied over rank 1's.
fresh
a0=$(ls "$T"/a/ranks/rank-000000-*.db)
cp "$a0" "$a1"
refused "a duplicate" "holds rank 0 pid [0-9]*, the process of ranks/$(basename "$a0"): a duplicate of that rank store, left out"

# Stores (and an index) made before stores carried a run id: read, said so.
fresh
for f in "$T"/a/ranks/*.db; do q "$f" "DELETE FROM meta WHERE key = 'run_id'" > /dev/null; done
q "$T/a/index.db" "UPDATE rank_files SET run_id = ''; DELETE FROM meta WHERE key = 'run_id'" > /dev/null
"$COLLSCOPE" analyze -j 2 "$T/a" > /dev/null 2> "$T/old.err"
expect_eq "stores without a run id: analyze -j 2 exit status (stderr: $(cat "$T/old.err"))" $? 0
grep -q "run id unknown for 2 rank stores" "$T/old.err" || fail "the unknown run id is not said: $(cat "$T/old.err")"
"$COLLSCOPE" merge "$T/a" > /dev/null 2> "$T/oldm.err"
expect_eq "stores without a run id: merge exit status (stderr: $(cat "$T/oldm.err"))" $? 0
expect_eq "stores without a run id: the merged trace holds both ranks" \
  "$(q "$T/a/trace.db" "SELECT group_concat(rank) FROM (SELECT rank FROM processes ORDER BY rank)")" 0,1
expect_eq "stores without a run id: the trace says so" "$(q "$T/a/trace.db" "SELECT value FROM meta WHERE key = 'run_id'")" unknown
pass
