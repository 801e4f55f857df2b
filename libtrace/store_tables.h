/* store_tables.h: the SQL of the current schema (CS_SCHEMA_VERSION, store.h;
 * docs/schema.md), and the upgrades from older versions (store_schema.c). */
#ifndef CS_STORE_TABLES_H
#define CS_STORE_TABLES_H

/* A raw time of rank k's clock on the job's common time line: the offset
 * and drift the alignment found (0 until it runs). Written once, used by
 * the spans view and every read query. */
#define CS_ALIGNED(col)                                                                  \
    "(" col " + COALESCE(k.offset_ns, 0) + CAST(COALESCE(k.drift_ppm, 0) * 1e-6 * (" col \
    " - COALESCE(k.ref_ns, 0)) AS INTEGER))"

/* Version 2: NCCL and CUDA calls. Span columns appended to version 1's:
 * the stream, the NCCL group, the reduction op, the correlation id, and
 * the GPU begin/end of collectives (NULL when unknown). */
#define CS_SPAN_V2_COLUMNS                                                                   \
    ",\n  stream INTEGER, grp INTEGER, redop INTEGER, corr INTEGER, gpu_begin_ns INTEGER,\n" \
    "  gpu_end_ns INTEGER"

/* Version 3: communicator names. Columns appended to the comms table: a
 * split's color (a create's group leader) and key, and the name set with
 * MPI_Comm_set_name (NULL when none). */
#define CS_COMMS_V3_COLUMNS ", color INTEGER, key INTEGER, name TEXT"

/* CUPTI activity (kernels, memcpys) on the GPU timeline. */
#define CS_GPU_ACTIVITY_SQL                                                                       \
    "CREATE TABLE gpu_activity(rank INTEGER NOT NULL, kind TEXT, name INTEGER, stream INTEGER,\n" \
    "  corr INTEGER, begin_ns INTEGER, end_ns INTEGER, bytes INTEGER, device INTEGER);\n"

/* NCCL's own view of each collective (its profiler plugin): a table added
 * without a version bump, created on every file opened for writing. */
#define CS_NCCL_COLL_COLUMNS \
    "(span INTEGER, algo TEXT, proto TEXT, nchannels INTEGER, gpu_begin_ns INTEGER, gpu_end_ns INTEGER)"
#define CS_NCCL_COLL_SQL "CREATE TABLE IF NOT EXISTS nccl_coll" CS_NCCL_COLL_COLUMNS ";\n"

/* Apply mode's on-line guard (interpose/fuse/fuse_guard.h), one row per
 * FUSEGUARD record: a window's figure (what 'window': the setting it ran,
 * its fusion buffer, the ranks' summed time in MPI calls and fusable calls)
 * or a decision (what 'decision': the setting chosen from `window` on,
 * why, the median time per call of unfused and of it, and the best fused
 * setting's median ratio to unfused the choice rests on); family says
 * which engine's guard: 'mpi' (comm an MPI communicator, time in MPI
 * calls) or 'nccl' (an NCCL communicator, time in NCCL and CUDA runtime
 * calls). Added without a version bump, like nccl_coll (a file written
 * before family has no such column: its rows are MPI's). */
#define CS_FUSE_GUARD_COLUMNS                                                                                                    \
    "(rank INTEGER NOT NULL, comm INTEGER, what TEXT, window INTEGER, setting INTEGER, buffer INTEGER,\n"                        \
    "  time_ns INTEGER, calls INTEGER, why TEXT, unfused_ns REAL, chosen_ns REAL, ratio REAL, at_ns INTEGER, wall_ns INTEGER,\n" \
    "  family TEXT)"
#define CS_FUSE_GUARD_SQL "CREATE TABLE IF NOT EXISTS fuse_guard" CS_FUSE_GUARD_COLUMNS ";\n"

/* Version 4: what the watchdog found (interpose/watchdog.c): one row per
 * HANG record. op is the call's name; comm its job-wide communicator id;
 * stack the CALLSITE id (callsites, frames) of the sampled stack, callsite
 * the call's own call site. */
#define CS_HANGS_SQL                                                                                    \
    "CREATE TABLE IF NOT EXISTS hangs(rank INTEGER NOT NULL, pid INTEGER, tid INTEGER, ktid INTEGER,\n" \
    "  reason TEXT, action TEXT, op TEXT, comm INTEGER, seq INTEGER, peer INTEGER, tag INTEGER,\n"      \
    "  bytes INTEGER, since_ns INTEGER, detected_ns INTEGER, stack INTEGER, callsite INTEGER);\n"

/* The names of GPU kernels, copies and sets (imported traces): each name
 * once, and the span it names (version 5). */
#define CS_KERNEL_NAMES_SQL                                                                         \
    "CREATE TABLE IF NOT EXISTS kernel_names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);\n" \
    "CREATE TABLE IF NOT EXISTS span_kernel(span INTEGER PRIMARY KEY, name INTEGER NOT NULL);\n"

/* The launch of an imported GPU kernel, copy or set: its correlated CUDA
 * runtime call began lead_ns before the span (version 7). */
#define CS_SPAN_LAUNCH_COLUMNS "(span INTEGER PRIMARY KEY, lead_ns INTEGER NOT NULL)"
#define CS_SPAN_LAUNCH_SQL "CREATE TABLE IF NOT EXISTS span_launch" CS_SPAN_LAUNCH_COLUMNS ";\n"

#define CS_SPANS_VIEW_SQL                                                                                                \
    "CREATE VIEW spans AS SELECT s.id AS id, s.rank AS rank, s.tid AS thread, o.name AS op,\n"                           \
    "  o.kind AS kind, s.comm AS comm, s.seq AS seq, s.bytes AS bytes, d.name AS datatype,\n"                            \
    "  s.count AS count, s.peer AS peer, s.peer2 AS peer2, s.tag AS tag, s.req AS req,\n"                                \
    "  " CS_ALIGNED("s.begin_ns") " AS begin_ns, " CS_ALIGNED(                                                           \
        "s.end_ns") " AS end_ns,\n"                                                                                      \
                    "  s.end_ns - s.begin_ns AS dur_ns, s.rc AS rc, c.label AS callsite, s.callsite AS callsite_id,\n"   \
                    "  s.flags AS flags, s.begin_ns AS raw_begin_ns, s.end_ns AS raw_end_ns,\n"                          \
                    "  s.stream AS stream, s.grp AS grp, s.redop AS redop, s.corr AS corr,\n"                            \
                    "  " CS_ALIGNED("s.gpu_begin_ns") " AS gpu_begin_ns, " CS_ALIGNED(                                   \
                        "s.gpu_end_ns") " AS gpu_end_ns,\n"                                                              \
                                        "  s.gpu_end_ns - s.gpu_begin_ns AS gpu_dur_ns\n"                                \
                                        "  FROM span s JOIN ops o ON o.id = s.op LEFT JOIN dtypes d ON d.id = s.dtype\n" \
                                        "  LEFT JOIN callsites c ON c.rank = s.rank AND c.id = s.callsite\n"             \
                                        "  LEFT JOIN clocks k ON k.rank = s.rank;\n"

#define CS_SCHEMA_TABLES_SQL                                                                                  \
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;\n"                                    \
    "CREATE TABLE processes(rank INTEGER NOT NULL, pid INTEGER NOT NULL, host TEXT, exe TEXT,\n"              \
    "  mpi TEXT, clock TEXT, ticks_per_ns REAL, world_size INTEGER, status TEXT,\n"                           \
    "  spans INTEGER, dropped INTEGER, overhead_ns_per_call INTEGER, overhead_ns INTEGER,\n"                  \
    "  start_ns INTEGER, end_ns INTEGER, callsites INTEGER, papi_events TEXT, note TEXT,\n"                   \
    "  tool_version TEXT, log_file TEXT, PRIMARY KEY(rank, pid));\n"                                          \
    "CREATE TABLE clocks(rank INTEGER PRIMARY KEY, clock TEXT, offset_ns INTEGER NOT NULL DEFAULT 0,\n"       \
    "  drift_ppm REAL NOT NULL DEFAULT 0, ref_ns INTEGER NOT NULL DEFAULT 0, residual_ns INTEGER);\n"         \
    "CREATE TABLE ops(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, api TEXT, kind TEXT,\n"              \
    "  nonblocking INTEGER);\n"                                                                               \
    "CREATE TABLE dtypes(id INTEGER PRIMARY KEY, name TEXT);\n"                                               \
    "CREATE TABLE comms(id INTEGER NOT NULL, rank INTEGER NOT NULL, local INTEGER,\n"                         \
    "  comm_rank INTEGER, size INTEGER, parent INTEGER, how TEXT, created_ns INTEGER" CS_COMMS_V3_COLUMNS     \
    ",\n  PRIMARY KEY(id, rank));\n"                                                                          \
    "CREATE TABLE span(id INTEGER PRIMARY KEY, rank INTEGER NOT NULL, tid INTEGER NOT NULL,\n"                \
    "  op INTEGER NOT NULL, comm INTEGER, seq INTEGER, bytes INTEGER, dtype INTEGER,\n"                       \
    "  count INTEGER, peer INTEGER, peer2 INTEGER, tag INTEGER, req INTEGER,\n"                               \
    "  begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, rc INTEGER, callsite INTEGER,\n"                   \
    "  flags INTEGER NOT NULL" CS_SPAN_V2_COLUMNS ");\n"                                                      \
    "CREATE TABLE completions(rank INTEGER NOT NULL, req INTEGER NOT NULL, span INTEGER,\n"                   \
    "  source INTEGER, tag INTEGER, end_ns INTEGER);\n"                                                       \
    "CREATE TABLE callsites(rank INTEGER NOT NULL, id INTEGER NOT NULL, depth INTEGER,\n"                     \
    "  label TEXT, PRIMARY KEY(rank, id));\n"                                                                 \
    "CREATE TABLE frames(rank INTEGER NOT NULL, callsite INTEGER NOT NULL, level INTEGER NOT NULL,\n"         \
    "  pc INTEGER, module TEXT, offset INTEGER, func TEXT, file TEXT, line INTEGER,\n"                        \
    "  PRIMARY KEY(rank, callsite, level));\n"                                                                \
    "CREATE TABLE modules(rank INTEGER NOT NULL, lo INTEGER, hi INTEGER, bias INTEGER, path TEXT);\n"         \
    "CREATE TABLE counters(span INTEGER NOT NULL, event TEXT NOT NULL, value INTEGER);\n" CS_GPU_ACTIVITY_SQL \
        CS_NCCL_COLL_SQL CS_FUSE_GUARD_SQL CS_SPANS_VIEW_SQL CS_HANGS_SQL CS_KERNEL_NAMES_SQL CS_SPAN_LAUNCH_SQL

/* Version 1 -> 2, run by cs_store_open on a file opened for writing. */
#define CS_UPGRADE_1_TO_2_SQL                                               \
    "ALTER TABLE span ADD COLUMN stream INTEGER;\n"                         \
    "ALTER TABLE span ADD COLUMN grp INTEGER;\n"                            \
    "ALTER TABLE span ADD COLUMN redop INTEGER;\n"                          \
    "ALTER TABLE span ADD COLUMN corr INTEGER;\n"                           \
    "ALTER TABLE span ADD COLUMN gpu_begin_ns INTEGER;\n"                   \
    "ALTER TABLE span ADD COLUMN gpu_end_ns INTEGER;\n" CS_GPU_ACTIVITY_SQL \
    "DROP VIEW IF EXISTS spans;\n" CS_SPANS_VIEW_SQL

/* Version 2 -> 3. */
#define CS_UPGRADE_2_TO_3_SQL                       \
    "ALTER TABLE comms ADD COLUMN color INTEGER;\n" \
    "ALTER TABLE comms ADD COLUMN key INTEGER;\n"   \
    "ALTER TABLE comms ADD COLUMN name TEXT;\n"

/* Version 3 -> 4. */
#define CS_UPGRADE_3_TO_4_SQL CS_HANGS_SQL

/* Version 4 -> 5. */
#define CS_UPGRADE_4_TO_5_SQL CS_KERNEL_NAMES_SQL

/* Version 5 -> 6 (the index is defined below). */
#define CS_UPGRADE_5_TO_6_SQL CS_SCHEMA_FLAGGED_INDEX_SQL

/* Version 6 -> 7. */
#define CS_UPGRADE_6_TO_7_SQL CS_SPAN_LAUNCH_SQL

/* The calls that never returned (CS_F_INFLIGHT, 512) and MPI_Finalize
 * (op 3: op ids never change): a handful of rows, found without reading
 * the spans (cs_failure_from_store's query names the same condition). */
#define CS_SCHEMA_FLAGGED_WHERE "(flags & 512) != 0 OR op = 3"
#define CS_SCHEMA_FLAGGED_INDEX_SQL \
    "CREATE INDEX IF NOT EXISTS span_flagged ON span(rank) WHERE " CS_SCHEMA_FLAGGED_WHERE ";\n"

/* The per-rank time index is kept up while spans are written: they come
 * nearly in time order, so each entry lands at the index's end, and per-
 * rank files merged in rank order append theirs (cs_store_merge). The
 * flagged spans' index too: a few rows, and a test of two columns a row
 * written. */
#define CS_SCHEMA_TIME_INDEX_SQL \
    "CREATE INDEX IF NOT EXISTS span_rank_time ON span(rank, begin_ns);\n" CS_SCHEMA_FLAGGED_INDEX_SQL

/* Built after bulk loads (keeping them up during the inserts costs more
 * than building them once). */
#define CS_SCHEMA_INDEXES_SQL \
    CS_SCHEMA_TIME_INDEX_SQL  \
    "CREATE INDEX IF NOT EXISTS span_comm_seq ON span(comm, seq) WHERE seq IS NOT NULL;\n"

#endif
