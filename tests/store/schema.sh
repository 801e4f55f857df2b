#!/bin/sh
# The store: documented view and tables, indexes that serve per-rank time
# windows, metadata of the run, 64-byte log records, and `--help` pages.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
need_mpi openmpi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
"$COLLSCOPE" run -o "$T/r" -- "$(mpirun_for openmpi)" -np 4 "$prog" --steps 10 > /dev/null 2>&1 || fail "run failed"
db=$T/r/trace.db
expect_eq "format" "$(q "$db" "SELECT value FROM meta WHERE key='format'")" collscope-trace
expect_eq "schema version" "$(q "$db" "SELECT value FROM meta WHERE key='schema_version'")" 7
# Version 3: communicator names, split colors and keys (docs/schema.md comms).
expect_eq "comms columns" "$(q "$db" "SELECT group_concat(name, ' ') FROM pragma_table_info('comms')")" \
  "id rank local comm_rank size parent how created_ns color key name"
expect_eq "MPI_Comm_set_name in the op table" "$(q "$db" "SELECT kind FROM ops WHERE name='MPI_Comm_set_name'")" commname
expect_eq "tool version" "$(q "$db" "SELECT value FROM meta WHERE key='tool_version'")" "$("$COLLSCOPE" --version | sed 's/collscope \([^ ]*\).*/\1/')"
q "$db" "SELECT value FROM meta WHERE key='command'" | grep -q mpi_trainer_ompi || fail "the launch line is not recorded"
expect_eq "journal mode" "$(q "$db" "PRAGMA journal_mode")" wal
# Run metadata: hosts, pids, ranks, overhead, dropped.
expect_eq "processes with host, pid, overhead" \
  "$(q "$db" "SELECT count(*) FROM processes WHERE host != '' AND pid > 0 AND overhead_ns_per_call > 0 AND dropped = 0 AND status = 'closed'")" 4
# Every span column of the view; aligned equals raw before any alignment.
expect_eq "view columns" "$(q "$db" "SELECT count(*) FROM spans WHERE begin_ns = raw_begin_ns AND end_ns >= begin_ns")" \
  "$(q "$db" "SELECT count(*) FROM span")"
# A per-rank time window uses the (rank, begin_ns) index.
plan=$(q "$db" "EXPLAIN QUERY PLAN SELECT * FROM span WHERE rank = 2 AND begin_ns BETWEEN 0 AND 99999999999999999")
echo "$plan" | grep -q 'span_rank_time' || fail "per-rank window query does not use the index: $plan"
echo "ok: time-window queries use span_rank_time"
# Call sites resolved to the trainer's source (built with -g by default).
n=$(q "$db" "SELECT count(*) FROM spans WHERE op='MPI_Allreduce' AND callsite LIKE 'mpi_trainer.c:%'")
[ "$n" -gt 0 ] || fail "allreduce call sites not resolved to mpi_trainer.c: $(q "$db" "SELECT DISTINCT callsite FROM spans LIMIT 5")"
echo "ok: $n allreduces carry a call site in mpi_trainer.c ($(q "$db" "SELECT callsite FROM spans WHERE op='MPI_Allreduce' LIMIT 1"))"
# 64 bytes a record in the log.
for f in "$T/r/logs/"*.cslog; do
  sz=$(stat -c %s "$f")
  [ $(( (sz - 4096) % 65536 )) -eq 0 ] || fail "log size $sz is not whole 64 KiB chunks of 1024 64-byte records"
done
echo "ok: logs are whole chunks of 64-byte records"
for c in run ingest report; do
  "$COLLSCOPE" $c --help | grep -q "^usage: collscope $c" || fail "collscope $c --help"
done
"$COLLSCOPE" --help | grep -q 'commands:' || fail "collscope --help"
echo "ok: --help pages"
pass
