/* store.h: the SQLite store, the contract between capture and analysis.
 *
 * The SQL of the trace's tables lives in libtrace/store_*.c, one file per
 * job (file, schema, import, merge, copy, read, stats, bulk); the analyzer
 * and the TUI read the trace through these functions. The tables they
 * own beside it (the analysis tables, the TUI's index) have their SQL in
 * analyzer/analysis/store_analysis.c and tui/store_tui.c, over the helpers of
 * store_sql.h. The schema is versioned (CS_SCHEMA_VERSION, defined here
 * only) and documented in docs/schema.md. A file of an older version is
 * upgraded when opened for writing; one of a newer or unknown version is
 * refused with a message naming the file and the version.
 *
 * Reads tell a read error (a damaged page, an I/O error) from the end of
 * the data: a function that reads rows returns -1 on the former, never a
 * partial result as a success. */
#ifndef CS_STORE_H
#define CS_STORE_H

#include <stddef.h>
#include <stdint.h>

#define CS_SCHEMA_VERSION 7
#define CS_TRACE_FORMAT "collscope-trace"

/* A store is used by one thread at a time (its SQLite connection is opened
 * without mutexes); parallel work opens a store per process or thread. */
typedef struct cs_store cs_store;

enum cs_store_mode { CS_STORE_READ = 0, CS_STORE_WRITE = 1 };

/* ---- files ---- */

/* Create a new store at path (replacing any file there). */
int cs_store_create(const char *path, cs_store **out, char *err, size_t errlen);
/* The same for a store expected to hold about expect_bytes of rows (< 0:
 * unknown, as cs_store_create): a small one gets small pages. SQLite
 * gives every table and index a page of its own at least, so with the 64
 * KiB pages that speed the scans of a large store, a rank store of a few
 * spans took 1.9 MB (a job of 1,024 such ranks, 1.9 GB). */
int cs_store_create_sized(const char *path, long long expect_bytes, cs_store **out, char *err, size_t errlen);
/* Open an existing store. Checks format and version; CS_STORE_WRITE
 * upgrades an older schema in place. */
int cs_store_open(const char *path, int mode, cs_store **out, char *err, size_t errlen);
void cs_store_close(cs_store *st);
/* Can the store at path be written in place (the file, and its folder for
 * SQLite's side files)? A read-only one still opens CS_STORE_READ. */
int cs_store_sql_writable(const char *path);
/* A private, writable copy of the store at path (in $TMPDIR or /tmp),
 * removed when closed: to analyse a trace that cannot be written. */
int cs_store_open_scratch(const char *path, cs_store **out, char *err, size_t errlen);
const char *cs_store_path(const cs_store *st);
int cs_store_schema_version(const cs_store *st);

/* ---- a full disk (store_sql.c) ---- */

/* Watch SQLite's errors for a full disk: called once at the start of a
 * program (the collscope command), before any store is opened; never in
 * the preload, whose host may use SQLite too. 0, or -1 when SQLite was
 * already in use. */
int cs_store_watch_space(void);
/* Whether a write of this process to a store failed for want of disk
 * space (SQLITE_FULL: ENOSPC, a file size limit) since it started. */
int cs_store_disk_full(void);

/* ---- the alarms raised while the job ran (store_live.c) ---- */

typedef struct cs_store_alarm_row {
    char kind[16];      /* "slow" (a rank's or a stage's own time per step, a communicator's
                         * calls' time or a link's transfers' time per step, shifted) or "hang" */
    int rank;           /* a rank's alarm: the rank; a link's: its lower rank; -1: none */
    int64_t step;       /* where the shift began; -1 */
    int64_t raised;     /* the step at which it was raised */
    int64_t until_step; /* the step where it ended; -1: it lasted to the end */
    double factor;      /* the watched time per step after over before */
    char text[1024];    /* as `collscope top` showed it */
    char subject[8];    /* "rank", "stage", "comm", "link" or "job": what the alarm is about */
    char comm[64];      /* a communicator's, stage's or link's alarm: its communicator's label
                         * (as in the metrics); "" */
    char name[96];      /* the subject as the report names it ("stage 1 (pp1: ranks 2-3)",
                         * "link 1-3"); "": made from rank, comm (an older table) */
    int peer;           /* a link's alarm: its higher rank; -1 */
} cs_store_alarm_row;

/* Replace the table live_alarms (made if absent) with the n alarms a. 0,
 * or -1 with err. */
int cs_store_live_alarms_put(cs_store *st, const cs_store_alarm_row *a, size_t n, char *err, size_t errlen);
/* Each stored alarm in the order raised, to each(); none when the table is
 * absent. 0, or -1 when it cannot be read. */
int cs_store_live_alarms(cs_store *st, int (*each)(const cs_store_alarm_row *, void *), void *arg);

/* ---- damage (store_recover.c) ---- */

/* Does SQLite find damaged pages in the store (PRAGMA quick_check)? 0
 * when not; 1 when it does, with the first problem in what (may be NULL);
 * -1 when it cannot tell (what says why). A page that could not be read
 * for want of memory, an I/O error or a full disk (SQLITE_NOMEM, _IOERR,
 * _FULL) is no damage: -1, and the store keeps the message ("out of
 * memory reading FILE (...)") in cs_store_fault, so that the caller's next
 * check of its input fails with it instead of reading on. */
int cs_store_check_pages(cs_store *st, char *what, size_t len);
/* The same check of the pages of every table of the store and of their
 * indexes, and of the schema, but those of the tables named in skip (a
 * NULL-terminated list; NULL: none): for a reader that reads only the
 * others, or rows of a skipped table only through its indexes (where
 * SQLite names a damaged page it reads as it reads it). Returns as
 * cs_store_check_pages. */
int cs_store_check_tables(cs_store *st, const char *const *skip, char *what, size_t len);
/* The message of the last resource failure cs_store_check_pages or
 * cs_store_check_tables met, or NULL. */
const char *cs_store_fault(const cs_store *st);

/* What a recovery kept and lost. */
typedef struct cs_store_recovery {
    int64_t rows_kept;
    int64_t rows_lost;  /* rows skipped over damaged pages, where rowids count them */
    int rows_uncounted; /* some losses could not be counted (a table's end, meta) */
    int64_t spans_lost; /* spans missing against the processes' own counts */
    int tables_damaged;
    int procs_rebuilt;  /* ranks with spans but no process row left: a row made for each */
    char lost[512];     /* "span: 1234 rows, comms: every row" */
    char summary[1536]; /* one line: rows kept, spans kept per rank, what was lost */
} cs_store_recovery;
/* Copy every row of the (damaged) store src that SQLite can still read
 * into a new store at path (created as cs_store_create does: never
 * through a symbolic link), table by table, by rowid ranges, skipping the
 * pages that do not read; only the trace's own tables (the analysis and
 * the TUI's index are recomputed from it). path NULL: a private file in
 * $TMPDIR, removed when the store is closed. src is only read. The new
 * store's meta says where it came from (cs_store_recovered). 0 and *out
 * open for writing, or -1 with a reason (nothing left at path). */
int cs_store_recover(cs_store *src, const char *path, cs_store **out, cs_store_recovery *r, char *err, size_t errlen);
/* Is st a store made by cs_store_recover? 1 with the damaged file's path
 * and the recovery's summary line, else 0. */
int cs_store_recovered(cs_store *st, char *from, size_t fromlen, char *note, size_t notelen);
/* Does the job store st (cs_store_open_job, cs_store_open_parts) hold
 * rank stores that carry no run id, so that each was checked by its
 * process alone? 1 with a note that says so, else 0. */
int cs_store_job_run_unknown(cs_store *st, char *note, size_t notelen);

/* Convert one process log into its per-rank store DIR/ranks/rank-NNNNNN.db
 * (pid-PID.db when the rank is unknown). out_path, when not NULL, receives
 * the file's path (PATH_MAX bytes). Returns 0, or -1 with a reason. */
int cs_store_convert_log(const char *log_path, const char *dir, char *out_path, char *err, size_t errlen);

/* Counts of what one conversion found. */
typedef struct cs_import_stats {
    int64_t spans, comms, callsites, completions, counters, calibs;
    int64_t dropped;
    int64_t unknown_ops; /* spans of calls this build has no op for (kept as op 0) */
    int closed;          /* the log was closed by a normal exit */
    int rank;
    int64_t bad_records; /* records whose fields cannot be (a local communicator out of range) */
    int64_t inflight;    /* calls that never returned (CS_F_INFLIGHT spans) */
    int64_t hangs;       /* the watchdog's HANG records */
    char damage[256];    /* what the log lacks, "" when whole (see cs_logr_damage) */
} cs_import_stats;
int cs_store_import_log(cs_store *st, const char *log_path, cs_import_stats *stats, char *err, size_t errlen);

/* Is the per-rank store at path a finished conversion of log_path? */
int cs_store_rank_db_current(const char *db_path, const char *log_path);

/* Start a job store at path as a copy of a per-rank store (SQLite copies
 * its pages; no row is decoded), to merge the other ranks' into.
 * Returns 0; 1 when rank_db cannot serve (written by another build, or
 * the copy failed), leaving nothing at path; -1 when rank_db is unreadable,
 * with a reason. */
int cs_store_create_from(const char *path, const char *rank_db, cs_store **out, char *err, size_t errlen);
/* Append a per-rank store into a job store (ATTACH + INSERT ... SELECT). */
int cs_store_merge(cs_store *job, const char *rank_db, char *err, size_t errlen);
/* After merging: indexes, statistics, meta (command, created). */
int cs_store_finish(cs_store *job, const char *command, char *err, size_t errlen);

/* ---- a job as per-rank stores and an index (store_index.c) ---- */

/* The job index: DIR/index.db beside the rank stores of DIR/ranks/, in
 * place of a merged DIR/trace.db (docs/schema.md). */
#define CS_STORE_INDEX_FILE "index.db"
/* Write DIR/index.db for the rank stores rank_dbs[0..n) (each file's
 * ranks, pids, hosts, size, time and communicators), replacing any index
 * there only once the new one is whole. meta: NULL, or key, value, ...,
 * NULL: more meta keys of the job (job_end_ns and job_end_host go into
 * the store cs_store_open_job makes). 0, or -1 with a reason. */
int cs_store_index_write(const char *dir, char *const *rank_dbs, size_t n, const char *command, const char *const *meta,
                         char *err, size_t errlen);
/* Is there a job index in DIR? 1 or 0. */
int cs_store_index_present(const char *dir);
/* The job of DIR/index.db as one store: its rank stores merged into a
 * private file (removed when closed), indexed as cs_store_finish does;
 * cs_store_path names the index. A rank store missing or unreadable, or
 * not the one the index records (one process of the rank, pid, host, run
 * and span count recorded for the file: another run's, a stale one, a
 * copy of another file's), is left out, counted in *nfaults and named in
 * the store's recovery note (cs_store_recovered). A rank store that
 * carries no run id (made before stores recorded it) is read, checked by
 * its process alone (cs_store_job_run_unknown). The meta key job_fingerprint identifies what was
 * read (the index and the files merged). 0, or -1 with a reason (no rank
 * store readable, or no index). */
int cs_store_open_job(const char *dir, cs_store **out, int *nfaults, char *err, size_t errlen);
/* Build the merged trace at path (DIR/trace.db) from the job of
 * DIR/index.db: as cs_store_open_job reads it (a rank store missing,
 * unreadable or not the one recorded left out, counted in *nfaults, and
 * named in the file's recovery note; run_note, when not NULL, gets the
 * note of cs_store_job_run_unknown or ""), written beside and renamed
 * into place. DIR is locked
 * first (dirlock.h) and stays locked until the process ends; another
 * command holding it is an error naming it. 0, or -1 with a reason
 * (nothing left at path). */
int cs_store_job_merge(const char *dir, const char *path, int *nfaults, char *run_note, size_t run_notelen, char *err,
                       size_t errlen);
/* ---- a job read by K processes at once (the parallel analysis) ---- */

/* What a part of a job holds, or the sum over the parts. */
typedef struct cs_store_part {
    int merged;             /* rank stores read into it */
    int nfaults;            /* rank stores left out */
    int unknown_run;        /* rank stores read that carry no run id (made before stores recorded it) */
    uint64_t sum;           /* its share of the job fingerprint */
    int64_t min_id, max_id; /* its span ids (min > max: none) */
    int64_t spans;          /* its span rows */
    char faults[3000];      /* "FILE (why); ..." */
} cs_store_part;
/* Part `part` of nparts of the job of DIR/index.db, written at path: the
 * rank stores of its share of the ranks (the index's files in rank order,
 * cut into nparts runs of about as many files, a rank's files kept
 * together) merged and indexed as cs_store_open_job does. A rank store
 * missing, unreadable or not the one recorded is left out and named in
 * out->faults. 0, or -1
 * with a reason (nothing left at path). */
int cs_store_job_part(const char *dir, const char *path, int part, int nparts, cs_store_part *out, char *err,
                      size_t errlen);
/* The job_fingerprint a read of the whole job would give, from the index
 * and the rank stores' sizes and times, without reading them (a rank store
 * that turns out unreadable makes the real one differ). 0 or -1. */
int cs_store_job_fingerprint(const char *dir, char *fp, size_t len, char *err, size_t errlen);
/* Bound the store pages this process keeps mapped for reading to
 * COLLSCOPE_MAPPED_MB megabytes (a fraction of one too;
 * CS_STORE_MAPPED_MB when unset; 0: no bound) in every SQLite connection
 * it opens from now on: past it, the pages of SQLite's maps leave the
 * resident set and stay in the page cache (store_map.c). For the
 * analysis's processes, which read every part of a job. Returns the bound
 * in MB, or -1 when the variable is not a number of megabytes (the
 * default bound is then set). */
#define CS_STORE_MAPPED_MB 256
double cs_store_map_bound(void);
/* How many times this process dropped its mapped pages. */
int64_t cs_store_map_trims(void);
/* The most parts cs_store_open_parts can read (SQLite's attach limit). */
int cs_store_parts_max(void);
/* The job of DIR/index.db read through its parts (cs_store_job_part),
 * without copying them: a new store at path (removed when closed) holds
 * the job's small tables and its meta (total: the parts summed, as
 * cs_store_open_job's meta says them), and reads the spans, completions,
 * counters and GPU rows of every part in place. Its span iterators merge
 * the parts' ordered reads. cs_store_path names the index. 0, or -1 with a
 * reason. */
int cs_store_open_parts(const char *dir, char *const *parts, int nparts, const char *path, const cs_store_part *total,
                        cs_store **out, char *err, size_t errlen);

/* The file the store's connection reads: its private copy where it has
 * one, else cs_store_path. */
const char *cs_store_file(const cs_store *st);

int cs_store_meta_set(cs_store *st, const char *key, const char *value);
/* Copies the value into buf; returns 0, or -1 when the key is absent. */
int cs_store_meta_get(cs_store *st, const char *key, char *buf, size_t len);

/* ---- call-site symbols (resolved at analysis time) ---- */

typedef struct cs_frame_ref {
    int rank;
    int64_t callsite;
    int level;
    uint64_t pc;
    const char *module; /* path of the mapped object, or NULL */
    uint64_t offset;    /* pc relative to the object's load bias */
} cs_frame_ref;
/* Visit every frame whose module is known and that has no symbol yet. */
int cs_store_frames_unresolved(cs_store *st, int (*cb)(const cs_frame_ref *, void *), void *arg);
int cs_store_frame_set_symbol(cs_store *st, int rank, int64_t callsite, int level, const char *func, const char *file,
                              int line);
/* Label every call site by its first frame outside the tool, the MPI, NCCL
 * and CUDA libraries and libc: "file.c:214 func" or "module+0xoff". */
int cs_store_label_callsites(cs_store *st);

/* ---- reading ---- */

typedef struct cs_proc {
    int rank, pid;
    char host[64];
    char mpi[32];
    char clock[16];
    char status[16]; /* "closed" or "crashed" */
    int64_t spans, dropped;
    int64_t start_ns, end_ns;
    int64_t overhead_ns; /* estimated tool time in this process */
    int64_t clock_offset_ns;
    double clock_drift_ppm;
    int64_t align_residual_ns;
} cs_proc;
/* All processes, ordered by rank; *out is malloc'ed. */
int cs_store_procs(cs_store *st, cs_proc **out, int *n);
/* Record clock alignment results for a rank. */
int cs_store_set_alignment(cs_store *st, int rank, int64_t offset_ns, double drift_ppm, int64_t residual_ns);
/* The clocks table's alignment columns, to be put as they are into the
 * same job's table in another store (the processes of a parallel
 * analysis share the root's). *out malloc'ed. 0 or -1. */
typedef struct cs_clock_row {
    int rank;
    int residual_null;
    int64_t offset_ns, residual_ns, ref_ns;
    double drift_ppm;
} cs_clock_row;
int cs_store_alignment_get(cs_store *st, cs_clock_row **out, int *n);
int cs_store_alignment_put(cs_store *st, const cs_clock_row *rows, int n);

typedef struct cs_op_row {
    int id;
    char name[48];
    char kind[16];
    int nonblocking;
} cs_op_row;
/* The op table of this store, indexed by id; *out is malloc'ed. */
int cs_store_ops(cs_store *st, cs_op_row **out, int *n);

typedef struct cs_span {
    int64_t id;
    int rank, tid, op;
    int64_t comm; /* job-wide communicator id, 0 = none */
    int64_t seq;  /* -1 = none */
    int64_t bytes, count;
    int dtype;
    int peer, peer2, tag;     /* -1 = none (peer2: Sendrecv's receive source) */
    int64_t req;              /* nonblocking request id, 0 = none */
    int64_t begin_ns, end_ns; /* aligned: raw + the rank's clock offset */
    int rc;
    int64_t callsite;
    uint32_t flags; /* CS_F_* (span.h) */
    /* Schema 2 (NCCL, CUDA). GPU times are aligned like begin_ns/end_ns;
     * an analysis may run on them instead when both are non-zero. */
    int64_t gpu_begin_ns, gpu_end_ns; /* 0 = unknown */
    int64_t stream;                   /* cudaStream_t bits, 0 = default or none */
    int64_t grp;                      /* NCCL group id within the rank, 0 = none */
} cs_span;

enum cs_span_order {
    CS_ORDER_RANK_TIME = 0, /* by rank, then begin (then id) */
    CS_ORDER_COMM_SEQ = 1,  /* collectives only, by comm, seq, rank (then id) */
    CS_ORDER_TIME = 2,      /* by begin across ranks (then id) */
};

/* The SQL of a span read: the columns cs_span_next reads, times aligned
 * (raw: as recorded), FROM span s LEFT JOIN clocks k, with where (a WHERE
 * clause on s and k; numbered parameters ?1.. may be bound) and in the
 * order of `order`, ties broken by id; for a job read through parts, one
 * ordered read per part that SQLite merges. sqlite3_free it; NULL when out
 * of memory. CS_ORDER_SEQ: by seq, rank (one communicator's). */
#define CS_ORDER_SEQ 3
typedef struct cs_span_iter cs_span_iter;
char *cs_store_span_sql(const cs_store *st, int raw, const char *where, int order);
/* An iterator over the rows of such SQL (cs_store_span_sql), its
 * parameters bound by bind(stmt, arg) when not NULL. */
cs_span_iter *cs_store_span_query(cs_store *st, const char *sql, void (*bind)(void *stmt, void *arg), void *arg,
                                  char *err, size_t errlen);

typedef struct cs_span_query {
    int order;
    int rank;       /* -1 = all */
    int64_t t0, t1; /* overlapping [t0, t1); t1 = 0 means no bound */
    int64_t comm;   /* CS_ORDER_COMM_SEQ: only this communicator; 0 = all */
    int64_t seq_lo; /* with comm: only its seq_n instances from seq_lo; */
    int64_t seq_n;  /* seq_n = 0 means all */
    /* spans of these nskip op ids left out (the reader skips them in
     * SQL, before reading their columns). A hint: where the list is too
     * long for the query it is not applied, so a caller keeps its own
     * test too. */
    const int *skip_ops;
    int nskip;
} cs_span_query;

cs_span_iter *cs_store_spans(cs_store *st, const cs_span_query *q, char *err, size_t errlen);
/* 1 and the next span, 0 at the end, -1 on error. */
int cs_span_next(cs_span_iter *it, cs_span *out);
void cs_span_iter_free(cs_span_iter *it);

/* Every communicator id of the collective spans but 0, in id order, with
 * its lowest and highest seq: found through the (comm, seq) index a few
 * rows at a time (of each part, for a job read through parts). *out
 * malloc'ed. 0 or -1. */
typedef struct cs_coll_range {
    int64_t comm, seq_lo, seq_hi;
} cs_coll_range;
int cs_store_coll_ranges(cs_store *st, cs_coll_range **out, int *n);

/* Completions of nonblocking requests: (rank, req) -> completing span. */
typedef struct cs_completion {
    int rank;
    int64_t req, span;
    int source, tag;
    int64_t end_ns; /* aligned */
} cs_completion;
int cs_store_completions(cs_store *st, int (*cb)(const cs_completion *, void *), void *arg);

/* Job-wide communicator members: (comm, rank) -> comm_rank, size, when made. */
typedef struct cs_comm_member {
    int64_t comm;
    int rank, comm_rank, size;
    int64_t parent;
    char how[12];
    int64_t created_ns; /* when this rank made it, on its own clock */
} cs_comm_member;
int cs_store_comm_members(cs_store *st, int (*cb)(const cs_comm_member *, void *), void *arg);

/* Call-site labels of one rank: id -> label. */
int cs_store_callsite_label(cs_store *st, int rank, int64_t callsite, char *buf, size_t len);

/* Stream (group key, duration, bytes) for every traced call (not init,
 * finalize, markers, communicator creation), ordered by key then duration.
 * group: "op", "comm", "callsite". A nonblocking collective lasts from its
 * start to the end of the completion call that finished it. share_ns is the
 * call's exclusive share of its rank's time line: each instant covered by
 * several calls of the rank (collectives in flight together) is split
 * among them, and a completion call's time goes to the collectives it
 * completed, so the shares of a rank add up to the union of its calls. */
typedef struct cs_group_row {
    const char *key; /* op name, comm id as text, or call-site label */
    const char *op;  /* the op name */
    int64_t dur_ns, bytes;
    int rank;
    int64_t share_ns;
} cs_group_row;
int cs_store_group_durations(cs_store *st, const char *group, int (*cb)(const cs_group_row *, void *), void *arg);
/* Durations aggregated per group key (as cs_store_group_durations groups
 * them): calls, bytes, total (the sum of the exclusive shares: time
 * counted once per rank), nearest-rank p50/p90/p99 and max of the
 * durations. *out is
 * malloc'ed, in key order. Returns 0, or -1 (read error, out of memory). */
typedef struct cs_group_stat {
    char key[256];
    char op[48]; /* the op, or "(several)" */
    int64_t count, bytes, total, p50, p90, p99, max;
} cs_group_stat;
int cs_store_group_stats(cs_store *st, const char *group, cs_group_stat **out, size_t *n);
/* The figures of two groupings of the same calls (neither "comm", which
 * leaves out calls without a communicator: -1) from one scan of the
 * spans, the same as two calls of cs_store_group_stats. */
int cs_store_group_stats2(cs_store *st, const char *group, cs_group_stat **out, size_t *n, const char *group2,
                          cs_group_stat **out2, size_t *n2);

/* The completion calls (MPI_Wait*, MPI_Test*) that finished nonblocking
 * collectives: rank, span id, the call's duration and how many
 * collectives it finished. */
int cs_store_completion_calls(cs_store *st, int (*cb)(int rank, int64_t span, int64_t dur_ns, int64_t ncoll, void *),
                              void *arg);

/* Per rank: time inside traced calls, and the rank's wall time. */
/* GPU overlap: per rank (ascending), the GPU time of its NCCL calls
 * (coll, rooted, send, recv; the union over each stream, on the rank's raw
 * clock) and the part of it no kernel of another stream ran alongside
 * (CUPTI activity). Returns the number of ranks reported, 0 when the trace
 * has no kernel activity, -1 on error; a non-zero cb stops early. */
int cs_store_gpu_overlap(cs_store *st, int (*cb)(int rank, int64_t comm_ns, int64_t exposed_ns, void *), void *arg);
int cs_store_rank_busy(cs_store *st, int (*cb)(int rank, int64_t in_calls_ns, int64_t wall_ns, int64_t spans, void *),
                       void *arg);

int64_t cs_store_count_spans(cs_store *st);

#endif
