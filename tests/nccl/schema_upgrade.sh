#!/bin/sh
# A trace of schema version 1 (built here from the version-1 DDL, as a
# collscope 0.1 wrote it) is upgraded to the current version when `collscope report`
# opens it, and read: its spans keep their values, the new columns are NULL.
. "$srcdir/tests/lib.sh"
db=$T/v1/trace.db
mkdir -p "$T/v1"
sqlite3 "$db" <<'SQL' || fail "cannot build the version-1 file"
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE processes(rank INTEGER NOT NULL, pid INTEGER NOT NULL, host TEXT, exe TEXT,
  mpi TEXT, clock TEXT, ticks_per_ns REAL, world_size INTEGER, status TEXT,
  spans INTEGER, dropped INTEGER, overhead_ns_per_call INTEGER, overhead_ns INTEGER,
  start_ns INTEGER, end_ns INTEGER, callsites INTEGER, papi_events TEXT, note TEXT,
  tool_version TEXT, log_file TEXT, PRIMARY KEY(rank, pid));
CREATE TABLE clocks(rank INTEGER PRIMARY KEY, clock TEXT, offset_ns INTEGER NOT NULL DEFAULT 0,
  drift_ppm REAL NOT NULL DEFAULT 0, ref_ns INTEGER NOT NULL DEFAULT 0, residual_ns INTEGER);
CREATE TABLE ops(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, api TEXT, kind TEXT,
  nonblocking INTEGER);
CREATE TABLE dtypes(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE comms(id INTEGER NOT NULL, rank INTEGER NOT NULL, local INTEGER,
  comm_rank INTEGER, size INTEGER, parent INTEGER, how TEXT, created_ns INTEGER,
  PRIMARY KEY(id, rank));
CREATE TABLE span(id INTEGER PRIMARY KEY, rank INTEGER NOT NULL, tid INTEGER NOT NULL,
  op INTEGER NOT NULL, comm INTEGER, seq INTEGER, bytes INTEGER, dtype INTEGER,
  count INTEGER, peer INTEGER, peer2 INTEGER, tag INTEGER, req INTEGER,
  begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, rc INTEGER, callsite INTEGER,
  flags INTEGER NOT NULL);
CREATE TABLE completions(rank INTEGER NOT NULL, req INTEGER NOT NULL, span INTEGER,
  source INTEGER, tag INTEGER, end_ns INTEGER, PRIMARY KEY(rank, req));
CREATE TABLE callsites(rank INTEGER NOT NULL, id INTEGER NOT NULL, depth INTEGER,
  label TEXT, PRIMARY KEY(rank, id));
CREATE TABLE frames(rank INTEGER NOT NULL, callsite INTEGER NOT NULL, level INTEGER NOT NULL,
  pc INTEGER, module TEXT, offset INTEGER, func TEXT, file TEXT, line INTEGER,
  PRIMARY KEY(rank, callsite, level));
CREATE TABLE modules(rank INTEGER NOT NULL, lo INTEGER, hi INTEGER, bias INTEGER, path TEXT);
CREATE TABLE counters(span INTEGER NOT NULL, event TEXT NOT NULL, value INTEGER);
CREATE VIEW spans AS SELECT s.id AS id, s.rank AS rank, s.tid AS thread, o.name AS op,
  o.kind AS kind, s.comm AS comm, s.seq AS seq, s.bytes AS bytes, d.name AS datatype,
  s.count AS count, s.peer AS peer, s.peer2 AS peer2, s.tag AS tag, s.req AS req,
  s.begin_ns AS begin_ns, s.end_ns AS end_ns, s.end_ns - s.begin_ns AS dur_ns, s.rc AS rc,
  c.label AS callsite, s.callsite AS callsite_id, s.flags AS flags,
  s.begin_ns AS raw_begin_ns, s.end_ns AS raw_end_ns
  FROM span s JOIN ops o ON o.id = s.op LEFT JOIN dtypes d ON d.id = s.dtype
  LEFT JOIN callsites c ON c.rank = s.rank AND c.id = s.callsite;
INSERT INTO meta VALUES('format','collscope-trace'),('schema_version','1'),('tool_version','0.1.0'),('kind','job');
INSERT INTO ops VALUES(0,'none','','none',0),(1,'MPI_Init','MPI','init',0),(2,'MPI_Init_thread','MPI','init',0),
  (3,'MPI_Finalize','MPI','finalize',0),(4,'MPI_Pcontrol','MPI','marker',0),(5,'MPI_Barrier','MPI','coll',0);
INSERT INTO dtypes VALUES(0,'');
INSERT INTO processes VALUES(0,100,'h','/bin/x','openmpi','monotonic',1.0,2,'closed',6,0,50,300,1000,90000,0,'','','0.1.0','a'),
  (1,101,'h','/bin/x','openmpi','monotonic',1.0,2,'closed',6,0,50,300,1000,90000,0,'','','0.1.0','b');
INSERT INTO clocks(rank, clock) VALUES(0,'monotonic'),(1,'monotonic');
INSERT INTO comms VALUES(7,0,0,0,2,NULL,'world',1000),(7,1,0,1,2,NULL,'world',1000);
INSERT INTO span(id,rank,tid,op,comm,seq,begin_ns,end_ns,rc,flags) VALUES
  (1,0,0,1,NULL,NULL,1000,2000,0,0),(2,0,0,5,7,0,10000,30000,0,40),(3,0,0,5,7,1,40000,60000,0,40),(4,0,0,3,NULL,NULL,80000,90000,0,0),
  (5,1,0,1,NULL,NULL,1000,2000,0,0),(6,1,0,5,7,0,25000,30000,0,40),(7,1,0,5,7,1,55000,60000,0,40),(8,1,0,3,NULL,NULL,80000,90000,0,0);
SQL
"$COLLSCOPE" report "$T/v1" > "$T/report.txt" 2> "$T/report.err" || { cat "$T/report.err"; fail "report of a version-1 trace failed"; }
expect_eq "upgraded to the current version" "$(q "$db" "SELECT value FROM meta WHERE key='schema_version'")" 7
expect_eq "the flagged spans' index made (version 6): the MPI_Finalize calls" \
  "$(q "$db" "SELECT group_concat(id) FROM span INDEXED BY span_flagged WHERE (flags & 512) != 0 OR op = 3")" "4,8"
expect_eq "spans kept" "$(q "$db" "SELECT count(*) FROM spans WHERE gpu_begin_ns IS NULL AND stream IS NULL")" 8
expect_eq "a span's values kept" "$(q "$db" "SELECT op, comm, seq, dur_ns FROM spans WHERE id = 2")" "MPI_Barrier|7|0|20000"
expect_eq "new ops added, old ids kept" "$(q "$db" "SELECT (SELECT name FROM ops WHERE id=5), count(*) > 6, sum(name='ncclAllReduce') FROM ops")" "MPI_Barrier|1|1"
check "gpu_activity table exists" q "$db" "SELECT count(*) FROM gpu_activity"
expect_eq "the imported kernels' launches (version 7): table span_launch, empty" \
  "$(q "$db" "SELECT group_concat(name, ' ') FROM pragma_table_info('span_launch')") $(q "$db" "SELECT count(*) FROM span_launch")" \
  "span lead_ns 0"
grep -q . "$T/report.txt" || fail "the report is empty"
echo "ok: report of the upgraded trace: $(head -n 1 "$T/report.txt")"
"$COLLSCOPE" report "$T/v1" > "$T/report2.txt" 2>&1 || fail "second report (already upgraded) failed"
pass
