/* store_analysis.c: the SQL of the derived analysis tables and of the
 * extra reads the analysis makes (see store_analysis.h). */
#include "config.h"
#include "analyzer/analysis/store_analysis.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

static sqlite3 *cs_db(cs_store *st)
{
    return cs_store_sql_db(st);
}

#define CS_ANALYSIS_TABLES_SQL                                                                                   \
    "CREATE TABLE IF NOT EXISTS instances(comm INTEGER, seq INTEGER, op INTEGER, nranks INTEGER,\n"              \
    "  expected INTEGER, bytes INTEGER, first_entry_ns INTEGER, last_entry_ns INTEGER, last_rank INTEGER,\n"     \
    "  last_exit_ns INTEGER, skew_ns INTEGER, transfer_ns INTEGER, step INTEGER, callsite TEXT,\n"               \
    "  bucket INTEGER, PRIMARY KEY(comm, seq));\n"                                                               \
    "CREATE TABLE IF NOT EXISTS waits(span INTEGER PRIMARY KEY, rank INTEGER, comm INTEGER, seq INTEGER,\n"      \
    "  wait_ns INTEGER);\n"                                                                                      \
    "CREATE TABLE IF NOT EXISTS steps(step INTEGER PRIMARY KEY, begin_ns INTEGER, end_ns INTEGER,\n"             \
    "  time_ns INTEGER, slowest_rank INTEGER, whatif_ns INTEGER);\n"                                             \
    "CREATE TABLE IF NOT EXISTS rank_stats(rank INTEGER PRIMARY KEY, times_last INTEGER,\n"                      \
    "  imposed_wait_ns INTEGER, median_lateness_ns INTEGER);\n"                                                  \
    "CREATE TABLE IF NOT EXISTS layout(rank INTEGER PRIMARY KEY, dp INTEGER, pp INTEGER, tp INTEGER);\n"         \
    "CREATE TABLE IF NOT EXISTS slowdown(kind TEXT, name TEXT, ranks TEXT, s REAL, share REAL,\n"                \
    "  compute_share REAL, actual_ns INTEGER, ideal_ns INTEGER);\n"                                              \
    "CREATE TABLE IF NOT EXISTS stragglers(id INTEGER PRIMARY KEY, kind TEXT, rank INTEGER, src INTEGER,\n"      \
    "  dst INTEGER, comm INTEGER, first_step INTEGER, last_step INTEGER, begin_ns INTEGER, end_ns INTEGER,\n"    \
    "  lateness_ns INTEGER, cost_ns INTEGER, evidence TEXT, period INTEGER, phase INTEGER, affected INTEGER,\n"  \
    "  total_ns INTEGER, steps TEXT);\n"                                                                         \
    "CREATE TABLE IF NOT EXISTS p2p(send_span INTEGER, recv_span INTEGER, comm INTEGER, src INTEGER,\n"          \
    "  dst INTEGER, tag INTEGER, late_sender_ns INTEGER, late_receiver_ns INTEGER, transfer_ns INTEGER);\n"      \
    "CREATE TABLE IF NOT EXISTS tails(op INTEGER, comm INTEGER, bucket INTEGER, callsite TEXT,\n"                \
    "  count INTEGER, p50_ns INTEGER, p90_ns INTEGER, p99_ns INTEGER, p999_ns INTEGER, max_ns INTEGER,\n"        \
    "  common TEXT);\n"                                                                                          \
    "CREATE TABLE IF NOT EXISTS models(comm INTEGER, op INTEGER, algo TEXT, points INTEGER, cells INTEGER,\n"    \
    "  min_bytes INTEGER, max_bytes INTEGER, alpha_ns REAL, beta_ns_per_byte REAL, r2 REAL, rel_resid REAL,\n"   \
    "  fitted INTEGER, note TEXT, gamma_ns REAL);\n"                                                             \
    "CREATE TABLE IF NOT EXISTS proposals(id INTEGER PRIMARY KEY, kind TEXT, comm INTEGER, op INTEGER,\n"        \
    "  callsite TEXT, calls_per_step REAL, min_bytes INTEGER, max_bytes INTEGER, bytes_per_step INTEGER,\n"      \
    "  bucket_bytes INTEGER, groups_per_step REAL, gain_ns INTEGER, step_ns INTEGER, evidence TEXT, env TEXT,\n" \
    "  curve TEXT);\n"                                                                                           \
    "CREATE TABLE IF NOT EXISTS gpu_time(rank INTEGER, step INTEGER, window_ns INTEGER, compute_ns INTEGER,\n"   \
    "  comm_exposed_ns INTEGER, comm_overlapped_ns INTEGER, memory_ns INTEGER, idle_ns INTEGER,\n"               \
    "  outlier INTEGER, PRIMARY KEY(rank, step));\n"                                                             \
    "CREATE TABLE IF NOT EXISTS kernel_stats(rank INTEGER, name TEXT, category TEXT, count INTEGER,\n"           \
    "  total_ns INTEGER, median_ns INTEGER, p99_ns INTEGER, PRIMARY KEY(rank, name));\n"                         \
    "CREATE TABLE IF NOT EXISTS group_stats(grp TEXT, key TEXT, op TEXT, count INTEGER, bytes INTEGER,\n"        \
    "  total_ns INTEGER, p50_ns INTEGER, p90_ns INTEGER, p99_ns INTEGER, max_ns INTEGER);\n"                     \
    "CREATE TABLE IF NOT EXISTS rank_busy(rank INTEGER PRIMARY KEY, busy_ns INTEGER, wall_ns INTEGER,\n"         \
    "  spans INTEGER);\n"

#define CS_ANALYSIS_CLEAR_SQL                                                                                  \
    "DELETE FROM instances; DELETE FROM waits; DELETE FROM steps; DELETE FROM rank_stats;\n"                   \
    "DELETE FROM stragglers; DELETE FROM p2p; DELETE FROM tails; DELETE FROM models; DELETE FROM proposals;\n" \
    "DELETE FROM layout; DELETE FROM slowdown; DELETE FROM gpu_time; DELETE FROM kernel_stats;\n"              \
    "DELETE FROM group_stats; DELETE FROM rank_busy;\n"                                                        \
    "DELETE FROM meta WHERE key IN ('analysis_version', 'analysis_spans', 'analysis_layout',\n"                \
    "  'analysis_layout_source') OR key LIKE 'slowdown!_%' ESCAPE '!' OR key LIKE 'whatif!_%' ESCAPE '!';\n"

/* Built after the bulk insert. */
#define CS_ANALYSIS_INDEXES_SQL                                               \
    "CREATE INDEX IF NOT EXISTS instances_skew ON instances(skew_ns DESC);\n" \
    "CREATE INDEX IF NOT EXISTS waits_comm_seq ON waits(comm, seq);\n"

/* ---- reading ---- */

int cs_bytes_bucket(int64_t bytes)
{
    int b = 0;
    while (bytes > 1) {
        bytes >>= 1;
        b++;
    }
    return b;
}

/* What a reader may assume of the trace's own tables: integer times,
 * sequence numbers and rank ids, times within +-2^61 ns, clock drifts that
 * are finite and below 10^6 ppm. Each check is the rows that fail it,
 * named after what is wrong, for the message. */
#define SA_LIM "2305843009213693952"
#define SA_BAD_TIME(c) "(typeof(" c ") != 'integer' OR " c " NOT BETWEEN -" SA_LIM " AND " SA_LIM ")"
#define SA_BAD_OPT(c) "(" c " IS NOT NULL AND " SA_BAD_TIME(c) ")"
#define SA_BAD_RANK "(typeof(rank) != 'integer' OR rank NOT BETWEEN 0 AND 2147483647)"
enum { SA_SPANS = 1, SA_TABLES = 2 };
static const struct {
    const char *table, *what, *bad;
} sa_checks[] = {
    { "span", "spans whose begin or end is not a time (not an integer, or beyond 2^61 ns)",
      SA_BAD_TIME("begin_ns") " OR " SA_BAD_TIME("end_ns") " OR " SA_BAD_OPT("gpu_begin_ns") " OR " SA_BAD_OPT(
          "gpu_end_ns") },
    { "span", "spans whose sequence number is not an integer in 0 to 2^61",
      "seq IS NOT NULL AND (typeof(seq) != 'integer' OR seq NOT BETWEEN 0 AND " SA_LIM ")" },
    { "span", "spans or processes whose rank is not an integer in 0 to 2^31-1", SA_BAD_RANK },
    { "processes", "spans or processes whose rank is not an integer in 0 to 2^31-1", SA_BAD_RANK },
    { "processes", "processes whose start or end is not a time", SA_BAD_OPT("start_ns") " OR " SA_BAD_OPT("end_ns") },
    { "clocks", "clock offsets or drifts out of range (beyond 2^61 ns, 10^6 ppm, or not numbers)",
      SA_BAD_TIME("offset_ns") " OR " SA_BAD_OPT(
          "ref_ns") " OR typeof(drift_ppm) NOT IN ('integer', 'real') OR NOT abs(drift_ppm) < 1e6" },
};
#define SA_NCHECKS (sizeof sa_checks / sizeof sa_checks[0])

/* One number of table: SELECT what FROM table[ WHERE ...] for the checks
 * [i, j), how is "count" (the rows failing any: one cheap read) or
 * "total" (column k: the rows failing check i + k). */
static int sa_check_read(cs_store *st, size_t i, size_t j, int count, const char *name, long long *n, char *err,
                         size_t errlen)
{
    sqlite3_str *q = sqlite3_str_new(cs_db(st));
    if (count) {
        sqlite3_str_appendall(q, "SELECT count(*) FROM ");
        sqlite3_str_appendall(q, sa_checks[i].table);
        for (size_t k = i; k < j; k++)
            sqlite3_str_appendf(q, "%s(%s)", k > i ? " OR " : " WHERE ", sa_checks[k].bad);
    } else {
        for (size_t k = i; k < j; k++)
            sqlite3_str_appendf(q, "%stotal(%s)", k > i ? ", " : "SELECT ", sa_checks[k].bad);
        sqlite3_str_appendf(q, " FROM %s", sa_checks[i].table);
    }
    char *sql = sqlite3_str_finish(q);
    sqlite3_stmt *s = NULL;
    int rc = sql ? sqlite3_prepare_v2(cs_db(st), sql, -1, &s, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    for (size_t k = i; rc == SQLITE_ROW && k < (count ? i + 1 : j); k++)
        n[k] = (long long)sqlite3_column_double(s, (int)(k - i));
    if (rc != SQLITE_ROW)
        snprintf(err, errlen, "%s: corrupt trace (%s)", name, sqlite3_errmsg(cs_db(st)));
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* The checks of sa_checks on the span table (of: SA_SPANS) and the others
 * (SA_TABLES), the trace named name: a read of each table for any failing
 * row (the checks of a table are listed together), a second only where
 * one does, to name the first check that fails. */
static int sa_check(cs_store *st, int of, const char *name, char *err, size_t errlen)
{
    for (size_t i = 0, j; i < SA_NCHECKS; i = j) {
        for (j = i; j < SA_NCHECKS && strcmp(sa_checks[j].table, sa_checks[i].table) == 0; j++)
            ;
        if (!(of & (strcmp(sa_checks[i].table, "span") == 0 ? SA_SPANS : SA_TABLES)))
            continue;
        long long n[SA_NCHECKS] = { 0 };
        if (sa_check_read(st, i, j, 1, name, n, err, errlen) != 0)
            return -1;
        if (n[i] == 0)
            continue;
        if (sa_check_read(st, i, j, 0, name, n, err, errlen) != 0)
            return -1;
        for (size_t k = i; k < j; k++)
            if (n[k] != 0) {
                snprintf(err, errlen, "%s: damaged trace: %lld %s", name, n[k], sa_checks[k].what);
                return -1;
            }
    }
    return 0;
}

int cs_store_analysis_check_input(cs_store *st, char *err, size_t errlen)
{
    /* the page check ran out of memory (or met an I/O error): no analysis
     * of a trace not read whole */
    if (cs_store_fault(st)) {
        snprintf(err, errlen, "%s", cs_store_fault(st));
        return -1;
    }
    return sa_check(st, SA_SPANS | SA_TABLES, cs_store_path(st), err, errlen);
}

int cs_store_analysis_check_spans(cs_store *st, const char *name, char *err, size_t errlen)
{
    return sa_check(st, SA_SPANS, name, err, errlen);
}

int cs_store_analysis_check_tables(cs_store *st, char *err, size_t errlen)
{
    return sa_check(st, SA_TABLES, cs_store_path(st), err, errlen);
}

int cs_store_analysis_exists(cs_store *st)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_db(st),
                           "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                           " ('instances','waits','steps','rank_stats','stragglers','p2p')",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
    sqlite3_finalize(s);
    return n < 0 ? -1 : n == 6;
}

int cs_store_analysis_current(cs_store *st)
{
    if (cs_store_analysis_exists(st) != 1)
        return 0;
    char v[64], n[64], want[64];
    if (cs_store_meta_get(st, "analysis_version", v, sizeof v) != 0 ||
        cs_store_meta_get(st, "analysis_spans", n, sizeof n) != 0)
        return 0;
    snprintf(want, sizeof want, "%d", CS_ANALYSIS_VERSION);
    if (strcmp(v, want) != 0)
        return 0;
    return strtoll(n, NULL, 10) == cs_store_count_spans(st);
}

/* What a results store holds: the analysis tables and the clocks (the
 * meta goes whole). */
static const char *const cs_results_tables[] = { "instances",    "waits",       "steps",      "rank_stats",
                                                 "layout",       "slowdown",    "stragglers", "p2p",
                                                 "tails",        "models",      "proposals",  "gpu_time",
                                                 "kernel_stats", "group_stats", "rank_busy",  "clocks" };

/* The waits of the stores files[0..n) into the results file at path, by
 * span as one process writes them: merged by SQLite when they can all be
 * attached at once, else gathered a batch at a time into a table keyed by
 * span and copied from it in order. The file's waits table is empty, or,
 * when create is set, the file is new and the table is made like the
 * stores' (CREATE TABLE AS, as the other results tables are made). */
static int cs_results_waits(const char *path, int create, char *const *files, int n, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "cannot write %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close_v2(db);
        return -1;
    }
    /* the stores are read by the root at the same time */
    sqlite3_busy_timeout(db, 60000);
    int max = sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1);
    int ok = max > 0 && sqlite3_exec(db,
                                     "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE;"
                                     " CREATE TEMP TABLE cs_w(span INTEGER PRIMARY KEY, rank, comm, seq, wait_ns)",
                                     NULL, NULL, NULL) == SQLITE_OK;
    const char *into = n <= max ? "main.waits" : "temp.cs_w";
    for (int b = 0; ok && b < n; b += max) {
        int e = b + max < n ? b + max : n;
        for (int i = b; ok && i < e; i++) {
            char *sql = sqlite3_mprintf("ATTACH DATABASE %Q AS m%d", files[i], i - b);
            ok = sql && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
            sqlite3_free(sql);
        }
        if (ok && create && b == 0)
            ok = sqlite3_exec(db, "CREATE TABLE main.waits AS SELECT * FROM m0.waits WHERE 0", NULL, NULL, NULL) ==
                 SQLITE_OK;
        sqlite3_str *q = sqlite3_str_new(db);
        sqlite3_str_appendf(q, "BEGIN; INSERT INTO %s SELECT * FROM (", into);
        for (int i = b; i < e; i++)
            sqlite3_str_appendf(q, "%sSELECT span, rank, comm, seq, wait_ns FROM m%d.waits", i > b ? " UNION ALL " : "",
                                i - b);
        sqlite3_str_appendall(q, " ORDER BY 1); COMMIT");
        char *sql = sqlite3_str_finish(q);
        ok = ok && sql && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
        sqlite3_free(sql);
        for (int i = b; i < e; i++) {
            char d[32];
            snprintf(d, sizeof d, "DETACH DATABASE m%d", i - b);
            sqlite3_exec(db, d, NULL, NULL, NULL);
        }
    }
    if (ok && n > max)
        ok = sqlite3_exec(db, "INSERT INTO main.waits SELECT * FROM temp.cs_w ORDER BY span", NULL, NULL, NULL) ==
             SQLITE_OK;
    if (!ok)
        cs_store_sql_fail(err, errlen, "cannot write %s: %s", path, sqlite3_errmsg(db));
    sqlite3_close_v2(db);
    return ok ? 0 : -1;
}

int cs_store_analysis_save(cs_store *st, const char *path, char *err, size_t errlen)
{
    return cs_store_analysis_save_from(st, path, NULL, 0, NULL, err, errlen);
}

int cs_store_results_waits_file(const char *path, char *const *waits_from, int n, char *err, size_t errlen)
{
    if (n < 1) {
        snprintf(err, errlen, "%s: no store to take the waits from", path);
        return -1;
    }
    unlink(path);
    if (cs_results_waits(path, 1, waits_from, n, err, errlen) != 0) {
        unlink(path);
        return -1;
    }
    return 0;
}

int cs_store_analysis_save_from(cs_store *st, const char *path, char *const *waits_from, int n, const char *waits_file,
                                char *err, size_t errlen)
{
    sqlite3 *db = cs_db(st);
    char tmp[4200], sql[256];
    if (waits_file) {
        snprintf(tmp, sizeof tmp, "%s", waits_file);
    } else {
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        unlink(tmp);
    }
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS res", -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: %s", tmp, sqlite3_errmsg(db));
    sqlite3_bind_text(s, 1, tmp, -1, SQLITE_TRANSIENT);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    if (!ok)
        return cs_store_sql_fail(err, errlen, "cannot create %s: %s", tmp, sqlite3_errmsg(db));
    ok = sqlite3_exec(db, "PRAGMA res.journal_mode=OFF; BEGIN; CREATE TABLE res.meta AS SELECT * FROM main.meta", NULL,
                      NULL, NULL) == SQLITE_OK;
    for (size_t i = 0; ok && i < sizeof cs_results_tables / sizeof cs_results_tables[0]; i++) {
        if (waits_file && strcmp(cs_results_tables[i], "waits") == 0)
            continue; /* there already */
        snprintf(sql, sizeof sql, "CREATE TABLE res.%s AS SELECT * FROM main.%s", cs_results_tables[i],
                 cs_results_tables[i]);
        ok = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
    }
    if (ok)
        ok = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    if (!ok) {
        cs_store_sql_fail(err, errlen, "cannot write %s: %s", tmp, sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_exec(db, "DETACH DATABASE res", NULL, NULL, NULL);
    if (ok && !waits_file && n > 0 && cs_results_waits(tmp, 0, waits_from, n, err, errlen) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0) {
        cs_store_sql_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
        ok = 0;
    }
    if (!ok)
        unlink(tmp);
    return ok ? 0 : -1;
}

/* The value of meta key in the attached schema db ("main", "res"). */
static void cs_results_meta(sqlite3 *db, const char *schema, const char *key, char *buf, size_t len)
{
    char sql[128];
    buf[0] = '\0';
    snprintf(sql, sizeof sql, "SELECT value FROM %s.meta WHERE key = ?", schema);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

int cs_store_results_current(const char *path, const char *fingerprint)
{
    sqlite3 *db = NULL;
    if (access(path, R_OK) != 0 ||
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        sqlite3_close_v2(db);
        return 0;
    }
    char theirs[256], v[32], want[32];
    cs_results_meta(db, "main", "job_fingerprint", theirs, sizeof theirs);
    cs_results_meta(db, "main", "analysis_version", v, sizeof v);
    sqlite3_close_v2(db);
    snprintf(want, sizeof want, "%d", CS_ANALYSIS_VERSION);
    return fingerprint[0] && strcmp(fingerprint, theirs) == 0 && strcmp(v, want) == 0;
}

int cs_store_analysis_load(cs_store *st, const char *path)
{
    if (access(path, R_OK) != 0)
        return 0;
    sqlite3 *db = cs_db(st);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS res", -1, &s, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(s, 1, path, -1, SQLITE_TRANSIENT);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    if (!ok)
        return 0;
    char mine[256], theirs[256], v[32], want[32];
    cs_results_meta(db, "main", "job_fingerprint", mine, sizeof mine);
    cs_results_meta(db, "res", "job_fingerprint", theirs, sizeof theirs);
    cs_results_meta(db, "res", "analysis_version", v, sizeof v);
    snprintf(want, sizeof want, "%d", CS_ANALYSIS_VERSION);
    ok = mine[0] && strcmp(mine, theirs) == 0 && strcmp(v, want) == 0;
    if (ok)
        ok = sqlite3_exec(db, "BEGIN;" CS_ANALYSIS_TABLES_SQL, NULL, NULL, NULL) == SQLITE_OK;
    for (size_t i = 0; ok && i < sizeof cs_results_tables / sizeof cs_results_tables[0]; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "DELETE FROM main.%s; INSERT INTO main.%s SELECT * FROM res.%s", cs_results_tables[i],
                 cs_results_tables[i], cs_results_tables[i]);
        ok = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
    }
    if (ok)
        ok = sqlite3_exec(db,
                          "INSERT OR REPLACE INTO main.meta SELECT * FROM res.meta;" CS_ANALYSIS_INDEXES_SQL "COMMIT",
                          NULL, NULL, NULL) == SQLITE_OK;
    if (!ok)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_exec(db, "DETACH DATABASE res", NULL, NULL, NULL);
    return ok;
}

#define CS_INST_COLS                                                                                  \
    "comm, seq, op, nranks, expected, bytes, first_entry_ns, last_entry_ns, last_rank, last_exit_ns," \
    " skew_ns, transfer_ns, step, COALESCE(callsite, '')"

/* The columns of CS_INST_COLS but the call site (NULL when "" in the
 * table, so written apart), for the reader and the writer. */
static const cs_store_sql_col cs_inst_cols[] = { CS_SQL_I64(cs_instance, comm),
                                                 CS_SQL_I64(cs_instance, seq),
                                                 CS_SQL_INT(cs_instance, op),
                                                 CS_SQL_INT(cs_instance, nranks),
                                                 CS_SQL_INT(cs_instance, expected),
                                                 CS_SQL_I64(cs_instance, bytes),
                                                 CS_SQL_I64(cs_instance, first_entry_ns),
                                                 CS_SQL_I64(cs_instance, last_entry_ns),
                                                 CS_SQL_INT(cs_instance, last_rank),
                                                 CS_SQL_I64(cs_instance, last_exit_ns),
                                                 CS_SQL_I64(cs_instance, skew_ns),
                                                 CS_SQL_I64(cs_instance, transfer_ns),
                                                 CS_SQL_I64(cs_instance, step) };

static const cs_store_sql_col cs_wait_cols[] = { CS_SQL_I64(cs_wait, span), CS_SQL_INT(cs_wait, rank),
                                                 CS_SQL_I64(cs_wait, comm), CS_SQL_I64(cs_wait, seq),
                                                 CS_SQL_I64(cs_wait, wait_ns) };

static void cs_inst_row(sqlite3_stmt *s, cs_instance *o)
{
    cs_store_sql_read_row(s, cs_inst_cols, CS_SQL_NCOLS(cs_inst_cols), o);
    cs_store_sql_text(s, CS_SQL_NCOLS(cs_inst_cols), o->callsite, sizeof o->callsite);
}

struct cs_instance_iter {
    sqlite3_stmt *s;
};

cs_instance_iter *cs_store_instances_by_skew(cs_store *st, int64_t comm, int64_t t0, int64_t t1)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT " CS_INST_COLS " FROM instances WHERE 1%s%s ORDER BY skew_ns DESC, comm, seq",
             comm ? " AND comm = ?1" : "", t1 > 0 ? " AND first_entry_ns >= ?2 AND first_entry_ns < ?3" : "");
    cs_instance_iter *it = calloc(1, sizeof *it);
    if (!it)
        return NULL;
    if (sqlite3_prepare_v2(cs_db(st), sql, -1, &it->s, NULL) != SQLITE_OK) {
        free(it);
        return NULL;
    }
    if (comm)
        sqlite3_bind_int64(it->s, 1, comm);
    if (t1 > 0) {
        sqlite3_bind_int64(it->s, 2, t0);
        sqlite3_bind_int64(it->s, 3, t1);
    }
    return it;
}

int cs_instance_next(cs_instance_iter *it, cs_instance *out)
{
    int rc = sqlite3_step(it->s);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return -1;
    cs_inst_row(it->s, out);
    return 1;
}

void cs_instance_iter_free(cs_instance_iter *it)
{
    if (!it)
        return;
    sqlite3_finalize(it->s);
    free(it);
}

int cs_store_instance_get(cs_store *st, int64_t comm, int64_t seq, cs_instance *out)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_db(st), "SELECT " CS_INST_COLS " FROM instances WHERE comm = ? AND seq = ?", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(s, 1, comm);
    sqlite3_bind_int64(s, 2, seq);
    int rc = sqlite3_step(s);
    int ret = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
    if (rc == SQLITE_ROW)
        cs_inst_row(s, out);
    sqlite3_finalize(s);
    return ret;
}

int cs_store_instance_of_span(cs_store *st, int64_t span_id, cs_instance *inst, cs_wait **waits, int *nwaits)
{
    *waits = NULL;
    *nwaits = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_db(st),
                           "SELECT comm, seq FROM span WHERE id = ? AND seq IS NOT NULL AND comm IS NOT NULL", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(s, 1, span_id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        return rc == SQLITE_DONE ? 1 : -1;
    }
    int64_t comm = sqlite3_column_int64(s, 0), seq = sqlite3_column_int64(s, 1);
    sqlite3_finalize(s);
    int r = cs_store_instance_get(st, comm, seq, inst);
    if (r != 0)
        return r;
    if (sqlite3_prepare_v2(cs_db(st),
                           "SELECT span, rank, comm, seq, wait_ns FROM waits WHERE comm = ? AND seq = ?"
                           " ORDER BY rank",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(s, 1, comm);
    sqlite3_bind_int64(s, 2, seq);
    size_t cap = 0;
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        if (CS_VEC_RESERVE(*waits, cap, (size_t)*nwaits + 1) != 0) {
            step = SQLITE_NOMEM;
            break;
        }
        cs_store_sql_read_row(s, cs_wait_cols, CS_SQL_NCOLS(cs_wait_cols), &(*waits)[(*nwaits)++]);
    }
    sqlite3_finalize(s);
    if (step != SQLITE_DONE) {
        free(*waits);
        *waits = NULL;
        *nwaits = 0;
        return -1;
    }
    return 0;
}

static const cs_store_sql_col cs_step_cols[] = {
    CS_SQL_I64(cs_step_row, step),    CS_SQL_I64(cs_step_row, begin_ns),     CS_SQL_I64(cs_step_row, end_ns),
    CS_SQL_I64(cs_step_row, time_ns), CS_SQL_INT(cs_step_row, slowest_rank), CS_SQL_I64(cs_step_row, whatif_ns)
};
CS_SQL_ROWS_TRAMPOLINE(cs_step_row)

int cs_store_steps_list(cs_store *st, int (*cb)(const cs_step_row *, void *), void *arg)
{
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT step, begin_ns, end_ns, time_ns, slowest_rank, whatif_ns FROM steps ORDER BY step",
                            cs_step_cols, cs_step_row, cb, arg);
}

static const cs_store_sql_col cs_straggler_cols[] = {
    CS_SQL_I64(cs_straggler, id),         CS_SQL_STR(cs_straggler, kind),        CS_SQL_INT(cs_straggler, rank),
    CS_SQL_INT(cs_straggler, src),        CS_SQL_INT(cs_straggler, dst),         CS_SQL_I64(cs_straggler, comm),
    CS_SQL_I64(cs_straggler, first_step), CS_SQL_I64(cs_straggler, last_step),   CS_SQL_I64(cs_straggler, begin_ns),
    CS_SQL_I64(cs_straggler, end_ns),     CS_SQL_I64(cs_straggler, lateness_ns), CS_SQL_I64(cs_straggler, cost_ns),
    CS_SQL_STR(cs_straggler, evidence),   CS_SQL_I64(cs_straggler, period),      CS_SQL_I64(cs_straggler, phase),
    CS_SQL_I64(cs_straggler, affected),   CS_SQL_I64(cs_straggler, total_ns),    CS_SQL_STR(cs_straggler, steps)
};
CS_SQL_ROWS_TRAMPOLINE(cs_straggler)

int cs_store_stragglers(cs_store *st, int (*cb)(const cs_straggler *, void *), void *arg)
{
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT id, kind, rank, src, dst, comm, first_step, last_step, begin_ns, end_ns,"
                            " lateness_ns, cost_ns, evidence, period, phase, affected, total_ns, steps"
                            " FROM stragglers ORDER BY cost_ns DESC, id",
                            cs_straggler_cols, cs_straggler, cb, arg);
}

static const cs_store_sql_col cs_rank_stat_cols[] = { CS_SQL_INT(cs_rank_stat, rank),
                                                      CS_SQL_I64(cs_rank_stat, times_last),
                                                      CS_SQL_I64(cs_rank_stat, imposed_wait_ns),
                                                      CS_SQL_I64(cs_rank_stat, median_lateness_ns) };
CS_SQL_ROWS_TRAMPOLINE(cs_rank_stat)

static const cs_store_sql_col cs_layout_cols[] = { CS_SQL_INT(cs_layout_row, rank), CS_SQL_INT(cs_layout_row, dp),
                                                   CS_SQL_INT(cs_layout_row, pp), CS_SQL_INT(cs_layout_row, tp) };
CS_SQL_ROWS_TRAMPOLINE(cs_layout_row)

static const cs_store_sql_col cs_slowdown_cols[] = {
    CS_SQL_STR(cs_slowdown_row, kind),      CS_SQL_STR(cs_slowdown_row, name),
    CS_SQL_STR(cs_slowdown_row, ranks),     CS_SQL_DBL(cs_slowdown_row, s),
    CS_SQL_DBL(cs_slowdown_row, share),     CS_SQL_DBL(cs_slowdown_row, compute_share),
    CS_SQL_I64(cs_slowdown_row, actual_ns), CS_SQL_I64(cs_slowdown_row, ideal_ns)
};
CS_SQL_ROWS_TRAMPOLINE(cs_slowdown_row)

int cs_store_slowdown(cs_store *st, int (*cb)(const cs_slowdown_row *, void *), void *arg)
{
    if (cs_store_sql_table_exists(cs_db(st), "slowdown") != 1)
        return 0;
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT kind, name, ranks, s, share, compute_share, actual_ns, ideal_ns FROM slowdown"
                            " ORDER BY rowid",
                            cs_slowdown_cols, cs_slowdown_row, cb, arg);
}

static const cs_store_sql_col cs_gpu_time_cols[] = { CS_SQL_INT(cs_gpu_time_row, rank),
                                                     CS_SQL_I64(cs_gpu_time_row, step),
                                                     CS_SQL_I64(cs_gpu_time_row, window_ns),
                                                     CS_SQL_I64(cs_gpu_time_row, compute_ns),
                                                     CS_SQL_I64(cs_gpu_time_row, comm_exposed_ns),
                                                     CS_SQL_I64(cs_gpu_time_row, comm_overlapped_ns),
                                                     CS_SQL_I64(cs_gpu_time_row, memory_ns),
                                                     CS_SQL_I64(cs_gpu_time_row, idle_ns),
                                                     CS_SQL_INT(cs_gpu_time_row, outlier) };
CS_SQL_ROWS_TRAMPOLINE(cs_gpu_time_row)

int cs_store_gpu_time(cs_store *st, int (*cb)(const cs_gpu_time_row *, void *), void *arg)
{
    if (cs_store_sql_table_exists(cs_db(st), "gpu_time") != 1)
        return 0;
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT rank, step, window_ns, compute_ns, comm_exposed_ns, comm_overlapped_ns, memory_ns,"
                            " idle_ns, outlier FROM gpu_time ORDER BY rank, step",
                            cs_gpu_time_cols, cs_gpu_time_row, cb, arg);
}

static const cs_store_sql_col cs_kernel_cols[] = {
    CS_SQL_INT(cs_kernel_row, rank),  CS_SQL_STR(cs_kernel_row, name),     CS_SQL_STR(cs_kernel_row, category),
    CS_SQL_I64(cs_kernel_row, count), CS_SQL_I64(cs_kernel_row, total_ns), CS_SQL_I64(cs_kernel_row, median_ns),
    CS_SQL_I64(cs_kernel_row, p99_ns)
};
CS_SQL_ROWS_TRAMPOLINE(cs_kernel_row)

int cs_store_kernel_stats(cs_store *st, int (*cb)(const cs_kernel_row *, void *), void *arg)
{
    if (cs_store_sql_table_exists(cs_db(st), "kernel_stats") != 1)
        return 0;
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT rank, name, category, count, total_ns, median_ns, p99_ns FROM kernel_stats"
                            " ORDER BY rank, total_ns DESC, name",
                            cs_kernel_cols, cs_kernel_row, cb, arg);
}

int cs_store_group_stats_stored(cs_store *st, const char *grp, cs_group_stat **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3 *db = cs_db(st);
    int have = cs_store_sql_table_exists(db, "group_stats");
    if (have != 1)
        return have < 0 ? -1 : 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT key, op, count, bytes, total_ns, p50_ns, p90_ns, p99_ns, max_ns FROM group_stats"
                           " WHERE grp = ?",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, grp, -1, SQLITE_STATIC);
    cs_group_stat *a = NULL;
    size_t cap = 0, m = 0;
    int step, rc = 1;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        if (CS_VEC_RESERVE(a, cap, m + 1) != 0) {
            rc = -1;
            break;
        }
        cs_group_stat *g = &a[m++];
        const char *k = (const char *)sqlite3_column_text(s, 0), *op = (const char *)sqlite3_column_text(s, 1);
        snprintf(g->key, sizeof g->key, "%s", k ? k : "");
        snprintf(g->op, sizeof g->op, "%s", op ? op : "");
        int64_t *v[] = { &g->count, &g->bytes, &g->total, &g->p50, &g->p90, &g->p99, &g->max };
        for (int i = 0; i < 7; i++)
            *v[i] = sqlite3_column_int64(s, 2 + i);
    }
    if (rc == 1 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    if (rc != 1) {
        free(a);
        return -1;
    }
    *out = a;
    *n = m;
    return 1;
}

int cs_store_rank_busy_stored(cs_store *st, int (*cb)(int, int64_t, int64_t, int64_t, void *), void *arg)
{
    sqlite3 *db = cs_db(st);
    int have = cs_store_sql_table_exists(db, "rank_busy");
    if (have != 1)
        return have < 0 ? -1 : 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, "SELECT rank, busy_ns, wall_ns, spans FROM rank_busy ORDER BY rank", -1, &s, NULL) !=
        SQLITE_OK)
        return -1;
    int step, rc = 1;
    while ((step = sqlite3_step(s)) == SQLITE_ROW)
        if (cb(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
               sqlite3_column_int64(s, 3), arg) != 0) {
            rc = -1;
            break;
        }
    if (rc == 1 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_kernel_spans(cs_store *st,
                          int (*cb)(int rank, int64_t name_id, const char *name, int memory, int64_t dur_ns, void *),
                          void *arg)
{
    sqlite3 *db = cs_db(st);
    int have = cs_store_sql_table_exists(db, "span_kernel");
    if (have != 1)
        return have < 0 ? -1 : 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT s.rank, k.name, n.name, o.name = 'memory_gpu', s.end_ns - s.begin_ns"
                           " FROM span_kernel k JOIN span s ON s.id = k.span JOIN kernel_names n ON n.id = k.name"
                           " JOIN ops o ON o.id = s.op ORDER BY s.rank, k.name",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 2);
        rc = cb(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), name ? name : "", sqlite3_column_int(s, 3),
                sqlite3_column_int64(s, 4), arg);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

/* The GPU intervals in rank order, then by begin (see the header). CUPTI
 * records are read only where the table exists (files from before it). */
int cs_store_gpu_intervals(cs_store *st, int (*cb)(int rank, int cls, int64_t stream, int64_t b, int64_t e, void *),
                           void *arg)
{
    sqlite3 *db = cs_db(st);
    int act = cs_store_sql_table_exists(db, "gpu_activity");
    if (act < 0)
        return -1;
    sqlite3_str *q = sqlite3_str_new(db);
    sqlite3_str_appendf(q,
                        "SELECT s.rank, CASE WHEN o.name = 'memory_gpu' THEN %d ELSE %d END, -1, s.begin_ns, s.end_ns"
                        " FROM span s JOIN ops o ON o.id = s.op"
                        " WHERE o.name IN ('compute_gpu', 'memory_gpu') AND s.end_ns > s.begin_ns"
                        " UNION ALL SELECT s.rank, %d, COALESCE(s.stream, 0), s.gpu_begin_ns, s.gpu_end_ns"
                        " FROM span s JOIN ops o ON o.id = s.op"
                        " WHERE o.kind IN ('coll', 'rooted', 'send', 'recv', 'sendrecv')"
                        " AND s.gpu_begin_ns IS NOT NULL AND s.gpu_end_ns > s.gpu_begin_ns",
                        CS_GPU_MEMORY, CS_GPU_COMPUTE, CS_GPU_COMM);
    if (act == 1)
        sqlite3_str_appendf(q,
                            " UNION ALL SELECT rank, CASE WHEN kind = 'kernel' THEN %d ELSE %d END,"
                            " COALESCE(stream, 0), begin_ns, end_ns FROM gpu_activity"
                            " WHERE kind IN ('kernel', 'memcpy', 'memset') AND end_ns > begin_ns",
                            CS_GPU_KERNEL, CS_GPU_MEMORY);
    sqlite3_str_appendall(q, " ORDER BY 1, 4");
    char *sql = sqlite3_str_finish(q);
    sqlite3_stmt *s = NULL;
    int rc = sql && sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK ? 0 : -1;
    sqlite3_free(sql);
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW)
        rc = cb(sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int64(s, 2),
                sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4), arg);
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_layout(cs_store *st, int (*cb)(const cs_layout_row *, void *), void *arg)
{
    if (cs_store_sql_table_exists(cs_db(st), "layout") != 1)
        return 0;
    return CS_SQL_READ_ROWS(cs_db(st), "SELECT rank, dp, pp, tp FROM layout ORDER BY rank", cs_layout_cols,
                            cs_layout_row, cb, arg);
}

int cs_store_rank_stats(cs_store *st, int (*cb)(const cs_rank_stat *, void *), void *arg)
{
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT rank, times_last, imposed_wait_ns, median_lateness_ns FROM rank_stats"
                            " ORDER BY median_lateness_ns DESC, times_last DESC, rank",
                            cs_rank_stat_cols, cs_rank_stat, cb, arg);
}

static const cs_store_sql_col cs_tail_cols[] = { CS_SQL_INT(cs_tail_row, op),      CS_SQL_I64(cs_tail_row, comm),
                                                 CS_SQL_INT(cs_tail_row, bucket),  CS_SQL_STR(cs_tail_row, callsite),
                                                 CS_SQL_I64(cs_tail_row, count),   CS_SQL_I64(cs_tail_row, p50_ns),
                                                 CS_SQL_I64(cs_tail_row, p90_ns),  CS_SQL_I64(cs_tail_row, p99_ns),
                                                 CS_SQL_I64(cs_tail_row, p999_ns), CS_SQL_I64(cs_tail_row, max_ns),
                                                 CS_SQL_STR(cs_tail_row, common) };
CS_SQL_ROWS_TRAMPOLINE(cs_tail_row)

int cs_store_tails(cs_store *st, int (*cb)(const cs_tail_row *, void *), void *arg)
{
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT op, comm, bucket, COALESCE(callsite, ''), count, p50_ns, p90_ns, p99_ns,"
                            " p999_ns, max_ns, COALESCE(common, '') FROM tails ORDER BY p99_ns DESC",
                            cs_tail_cols, cs_tail_row, cb, arg);
}

/* The models and proposals tables, and nccl_coll, may be missing from a
 * file analysed or written by an older collscope: readers then see no
 * rows. 1 when present, else what the readers return (0, or -1 when the
 * file cannot be read). */
static int cs_table_exists(cs_store *st, const char *name)
{
    return cs_store_sql_table_exists(cs_db(st), name);
}

static const cs_store_sql_col cs_guard_cols[] = {
    CS_SQL_I64(cs_guard_row, comm),       CS_SQL_STR(cs_guard_row, family),    CS_SQL_STR(cs_guard_row, what),
    CS_SQL_I64(cs_guard_row, window),     CS_SQL_INT(cs_guard_row, setting),   CS_SQL_I64(cs_guard_row, buffer),
    CS_SQL_I64(cs_guard_row, time_ns),    CS_SQL_I64(cs_guard_row, calls),     CS_SQL_STR(cs_guard_row, why),
    CS_SQL_DBL(cs_guard_row, unfused_ns), CS_SQL_DBL(cs_guard_row, chosen_ns), CS_SQL_DBL(cs_guard_row, ratio)
};
CS_SQL_ROWS_TRAMPOLINE(cs_guard_row)

int cs_store_fuse_guard(cs_store *st, int (*cb)(const cs_guard_row *, void *), void *arg)
{
    int have = cs_table_exists(st, "fuse_guard");
    if (have != 1)
        return have;
    /* a file written before the family column holds the MPI guard's rows only */
    sqlite3_stmt *q = NULL;
    int fam = 0;
    if (sqlite3_prepare_v2(cs_db(st), "SELECT count(*) FROM pragma_table_info('fuse_guard') WHERE name = 'family'", -1,
                           &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        fam = sqlite3_column_int(q, 0) > 0;
    sqlite3_finalize(q);
    return CS_SQL_READ_ROWS(
        cs_db(st),
        fam ? "SELECT COALESCE(comm, 0), COALESCE(family, 'mpi'), COALESCE(what, ''),"
              " COALESCE(window, 0), COALESCE(setting, 0), COALESCE(buffer, 0),"
              " COALESCE(time_ns, 0), COALESCE(calls, 0), COALESCE(why, ''),"
              " COALESCE(unfused_ns, 0), COALESCE(chosen_ns, 0), COALESCE(ratio, 0) FROM fuse_guard f"
              " WHERE rank = (SELECT min(rank) FROM fuse_guard g WHERE g.comm IS f.comm)"
              " ORDER BY comm, window, what DESC"
            : "SELECT COALESCE(comm, 0), 'mpi', COALESCE(what, ''), COALESCE(window, 0),"
              " COALESCE(setting, 0), COALESCE(buffer, 0), COALESCE(time_ns, 0),"
              " COALESCE(calls, 0), COALESCE(why, ''), COALESCE(unfused_ns, 0),"
              " COALESCE(chosen_ns, 0), COALESCE(ratio, 0) FROM fuse_guard f"
              " WHERE rank = (SELECT min(rank) FROM fuse_guard g WHERE g.comm IS f.comm)"
              " ORDER BY comm, window, what DESC",
        cs_guard_cols, cs_guard_row, cb, arg);
}

static const cs_store_sql_col cs_model_cols[] = { CS_SQL_I64(cs_model_row, comm),
                                                  CS_SQL_INT(cs_model_row, op),
                                                  CS_SQL_STR(cs_model_row, algo),
                                                  CS_SQL_I64(cs_model_row, points),
                                                  CS_SQL_I64(cs_model_row, cells),
                                                  CS_SQL_I64(cs_model_row, min_bytes),
                                                  CS_SQL_I64(cs_model_row, max_bytes),
                                                  CS_SQL_DBL(cs_model_row, alpha_ns),
                                                  CS_SQL_DBL(cs_model_row, beta_ns_per_byte),
                                                  CS_SQL_DBL(cs_model_row, r2),
                                                  CS_SQL_DBL(cs_model_row, rel_resid),
                                                  CS_SQL_INT(cs_model_row, fitted),
                                                  CS_SQL_STR(cs_model_row, note),
                                                  CS_SQL_DBL(cs_model_row, gamma_ns) };
CS_SQL_ROWS_TRAMPOLINE(cs_model_row)

int cs_store_models(cs_store *st, int (*cb)(const cs_model_row *, void *), void *arg)
{
    int have = cs_table_exists(st, "models");
    if (have != 1)
        return have;
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT comm, op, COALESCE(algo, ''), points, cells, min_bytes, max_bytes, alpha_ns,"
                            " beta_ns_per_byte, r2, rel_resid, fitted, COALESCE(note, ''), COALESCE(gamma_ns, alpha_ns)"
                            " FROM models ORDER BY points DESC, comm, op",
                            cs_model_cols, cs_model_row, cb, arg);
}

static const cs_store_sql_col cs_proposal_cols[] = { CS_SQL_I64(cs_proposal, id),
                                                     CS_SQL_STR(cs_proposal, kind),
                                                     CS_SQL_I64(cs_proposal, comm),
                                                     CS_SQL_INT(cs_proposal, op),
                                                     CS_SQL_STR(cs_proposal, callsite),
                                                     CS_SQL_DBL(cs_proposal, calls_per_step),
                                                     CS_SQL_I64(cs_proposal, min_bytes),
                                                     CS_SQL_I64(cs_proposal, max_bytes),
                                                     CS_SQL_I64(cs_proposal, bytes_per_step),
                                                     CS_SQL_I64(cs_proposal, bucket_bytes),
                                                     CS_SQL_DBL(cs_proposal, groups_per_step),
                                                     CS_SQL_I64(cs_proposal, gain_ns),
                                                     CS_SQL_I64(cs_proposal, step_ns),
                                                     CS_SQL_STR(cs_proposal, evidence),
                                                     CS_SQL_STR(cs_proposal, env),
                                                     CS_SQL_STR(cs_proposal, curve) };
CS_SQL_ROWS_TRAMPOLINE(cs_proposal)

int cs_store_proposals(cs_store *st, int (*cb)(const cs_proposal *, void *), void *arg)
{
    int have = cs_table_exists(st, "proposals");
    if (have != 1)
        return have;
    return CS_SQL_READ_ROWS(cs_db(st),
                            "SELECT id, kind, comm, op, COALESCE(callsite, ''), calls_per_step, min_bytes,"
                            " max_bytes, bytes_per_step, bucket_bytes, groups_per_step, gain_ns, step_ns,"
                            " COALESCE(evidence, ''), COALESCE(env, ''), COALESCE(curve, '') FROM proposals"
                            " ORDER BY gain_ns DESC, id",
                            cs_proposal_cols, cs_proposal, cb, arg);
}

int cs_store_nccl_algos(cs_store *st, int (*cb)(int64_t span, const char *algo, const char *proto, void *), void *arg)
{
    int have = cs_table_exists(st, "nccl_coll");
    if (have != 1)
        return have;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_db(st), "SELECT span, COALESCE(algo, ''), COALESCE(proto, '') FROM nccl_coll", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW)
        if ((rc = cb(sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1),
                     (const char *)sqlite3_column_text(s, 2), arg)) != 0)
            break;
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

/* ---- writing ---- */

enum {
    W_INST,
    W_WAIT,
    W_STEP,
    W_RANK,
    W_STRAG,
    W_P2P,
    W_TAIL,
    W_MODEL,
    W_PROP,
    W_LAYOUT,
    W_SLOW,
    W_GPU,
    W_KERN,
    W_GROUP,
    W_BUSY,
    W_N
};
static const char *const cs_awriter_sql[W_N] = {
    [W_INST] = "INSERT OR REPLACE INTO instances(comm, seq, op, nranks, expected, bytes, first_entry_ns,"
               " last_entry_ns, last_rank, last_exit_ns, skew_ns, transfer_ns, step, callsite, bucket)"
               " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [W_WAIT] = "INSERT OR REPLACE INTO waits(span, rank, comm, seq, wait_ns) VALUES(?,?,?,?,?)",
    [W_STEP] = "INSERT OR REPLACE INTO steps(step, begin_ns, end_ns, time_ns, slowest_rank, whatif_ns)"
               " VALUES(?,?,?,?,?,?)",
    [W_RANK] = "INSERT OR REPLACE INTO rank_stats(rank, times_last, imposed_wait_ns, median_lateness_ns)"
               " VALUES(?,?,?,?)",
    [W_STRAG] = "INSERT INTO stragglers(kind, rank, src, dst, comm, first_step, last_step, begin_ns, end_ns,"
                " lateness_ns, cost_ns, evidence, period, phase, affected, total_ns, steps)"
                " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [W_P2P] = "INSERT INTO p2p(send_span, recv_span, comm, src, dst, tag, late_sender_ns, late_receiver_ns,"
              " transfer_ns) VALUES(?,?,?,?,?,?,?,?,?)",
    [W_TAIL] = "INSERT INTO tails(op, comm, bucket, callsite, count, p50_ns, p90_ns, p99_ns, p999_ns, max_ns,"
               " common) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    [W_MODEL] = "INSERT INTO models(comm, op, algo, points, cells, min_bytes, max_bytes, alpha_ns, beta_ns_per_byte,"
                " r2, rel_resid, fitted, note, gamma_ns) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [W_PROP] = "INSERT INTO proposals(kind, comm, op, callsite, calls_per_step, min_bytes, max_bytes, bytes_per_step,"
               " bucket_bytes, groups_per_step, gain_ns, step_ns, evidence, env, curve)"
               " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [W_LAYOUT] = "INSERT OR REPLACE INTO layout(rank, dp, pp, tp) VALUES(?,?,?,?)",
    [W_SLOW] = "INSERT INTO slowdown(kind, name, ranks, s, share, compute_share, actual_ns, ideal_ns)"
               " VALUES(?,?,?,?,?,?,?,?)",
    [W_GPU] = "INSERT OR REPLACE INTO gpu_time(rank, step, window_ns, compute_ns, comm_exposed_ns,"
              " comm_overlapped_ns, memory_ns, idle_ns, outlier) VALUES(?,?,?,?,?,?,?,?,?)",
    [W_KERN] = "INSERT OR REPLACE INTO kernel_stats(rank, name, category, count, total_ns, median_ns, p99_ns)"
               " VALUES(?,?,?,?,?,?,?)",
    [W_GROUP] = "INSERT INTO group_stats(grp, key, op, count, bytes, total_ns, p50_ns, p90_ns, p99_ns, max_ns)"
                " VALUES(?,?,?,?,?,?,?,?,?,?)",
    [W_BUSY] = "INSERT OR REPLACE INTO rank_busy(rank, busy_ns, wall_ns, spans) VALUES(?,?,?,?)",
};

/* Wait rows come in instance order, (comm, seq), which visits every rank's
 * span ids in turn (each rank's in a range of its own): inserted as they
 * come, each lands at a random place of the table keyed by span, a page
 * read and written a row (8 M spans on 1024 ranks: 155 s of CPU). They are held
 * and inserted in span order, CS_AWRITER_WAITS at a time; the sort keeps
 * the order of equal spans, so the last row of a span wins, as before. */
#define CS_AWRITER_WAITS 1048576
typedef struct cs_await {
    cs_wait w;
    size_t ord;
} cs_await;

struct cs_awriter {
    cs_store *st;
    sqlite3_stmt *q[W_N];
    cs_await *waits;
    size_t nwaits;
};

cs_awriter *cs_store_analysis_begin(cs_store *st, char *err, size_t errlen)
{
    cs_awriter *w = calloc(1, sizeof *w);
    if (!w) {
        cs_store_sql_fail(err, errlen, "out of memory");
        return NULL;
    }
    w->st = st;
    /* models, proposals and stragglers are rebuilt with their current columns */
    if (cs_store_sql_exec(cs_db(st), cs_store_path(st),
                          "BEGIN; DROP TABLE IF EXISTS models; DROP TABLE IF EXISTS proposals;"
                          " DROP TABLE IF EXISTS stragglers;" CS_ANALYSIS_TABLES_SQL CS_ANALYSIS_CLEAR_SQL
                          "DROP INDEX IF EXISTS instances_skew; DROP INDEX IF EXISTS waits_comm_seq;",
                          err, errlen) != 0) {
        sqlite3_exec(cs_db(st), "ROLLBACK", NULL, NULL, NULL);
        free(w);
        return NULL;
    }
    for (int i = 0; i < W_N; i++)
        if (sqlite3_prepare_v2(cs_db(st), cs_awriter_sql[i], -1, &w->q[i], NULL) != SQLITE_OK) {
            cs_store_sql_fail(err, errlen, "%s: %s", cs_store_path(st), sqlite3_errmsg(cs_db(st)));
            cs_store_analysis_end(w, 0, 0, NULL, 0);
            return NULL;
        }
    return w;
}

static int cs_astep(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

int cs_awriter_instance(cs_awriter *w, const cs_instance *x)
{
    sqlite3_stmt *s = w->q[W_INST];
    cs_store_sql_bind_row(s, cs_inst_cols, CS_SQL_NCOLS(cs_inst_cols), x);
    if (x->callsite[0])
        sqlite3_bind_text(s, 14, x->callsite, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 14);
    sqlite3_bind_int(s, 15, cs_bytes_bucket(x->bytes));
    return cs_astep(s);
}

int cs_awriter_copy_instances(cs_awriter *w, char *const *files, int n, char *err, size_t errlen)
{
    /* Each process's instances are a run of the (comm, seq) order, the runs
     * in process order: read file after file, each in its order. A
     * connection of its own: the writer's holds its transaction. */
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        sqlite3 *db = NULL;
        sqlite3_stmt *s = NULL;
        if (sqlite3_open_v2(files[i], &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
            sqlite3_busy_timeout(db, 60000) != SQLITE_OK ||
            sqlite3_prepare_v2(db, "SELECT " CS_INST_COLS " FROM instances ORDER BY comm, seq", -1, &s, NULL) !=
                SQLITE_OK) {
            cs_store_sql_fail(err, errlen, "%s: cannot read it: %s", files[i], db ? sqlite3_errmsg(db) : "no memory");
            rc = -1;
        }
        int step = SQLITE_DONE;
        while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
            cs_instance in;
            memset(&in, 0, sizeof in);
            cs_inst_row(s, &in);
            if ((rc = cs_awriter_instance(w, &in)) != 0)
                cs_store_sql_fail(err, errlen, "%s: cannot write the analysis", cs_store_path(w->st));
        }
        if (rc == 0 && step != SQLITE_DONE) {
            cs_store_sql_fail(err, errlen, "%s: cannot read it: %s", files[i], sqlite3_errmsg(db));
            rc = -1;
        }
        sqlite3_finalize(s);
        sqlite3_close_v2(db);
    }
    return rc;
}

static int cs_await_cmp(const void *x, const void *y)
{
    const cs_await *a = x, *b = y;
    if (a->w.span != b->w.span)
        return a->w.span < b->w.span ? -1 : 1;
    return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* Insert the held wait rows, in span order. */
static int cs_awriter_waits_flush(cs_awriter *w)
{
    qsort(w->waits, w->nwaits, sizeof *w->waits, cs_await_cmp);
    sqlite3_stmt *s = w->q[W_WAIT];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->nwaits; i++) {
        cs_store_sql_bind_row(s, cs_wait_cols, CS_SQL_NCOLS(cs_wait_cols), &w->waits[i].w);
        rc = cs_astep(s);
    }
    w->nwaits = 0;
    return rc;
}

int cs_awriter_wait(cs_awriter *w, const cs_wait *x)
{
    if (!w->waits && !(w->waits = malloc(CS_AWRITER_WAITS * sizeof *w->waits))) {
        /* no memory to hold them: one at a time */
        sqlite3_stmt *s = w->q[W_WAIT];
        cs_store_sql_bind_row(s, cs_wait_cols, CS_SQL_NCOLS(cs_wait_cols), x);
        return cs_astep(s);
    }
    w->waits[w->nwaits].w = *x;
    w->waits[w->nwaits].ord = w->nwaits;
    return ++w->nwaits == CS_AWRITER_WAITS ? cs_awriter_waits_flush(w) : 0;
}

int cs_awriter_step(cs_awriter *w, const cs_step_row *x)
{
    sqlite3_stmt *s = w->q[W_STEP];
    cs_store_sql_bind_row(s, cs_step_cols, CS_SQL_NCOLS(cs_step_cols), x);
    return cs_astep(s);
}

int cs_awriter_rank_stat(cs_awriter *w, const cs_rank_stat *x)
{
    sqlite3_stmt *s = w->q[W_RANK];
    cs_store_sql_bind_row(s, cs_rank_stat_cols, CS_SQL_NCOLS(cs_rank_stat_cols), x);
    return cs_astep(s);
}

int cs_awriter_layout(cs_awriter *w, const cs_layout_row *x)
{
    sqlite3_stmt *s = w->q[W_LAYOUT];
    cs_store_sql_bind_row(s, cs_layout_cols, CS_SQL_NCOLS(cs_layout_cols), x);
    return cs_astep(s);
}

int cs_awriter_slowdown(cs_awriter *w, const cs_slowdown_row *x)
{
    sqlite3_stmt *s = w->q[W_SLOW];
    cs_store_sql_bind_row(s, cs_slowdown_cols, CS_SQL_NCOLS(cs_slowdown_cols), x);
    return cs_astep(s);
}

int cs_awriter_gpu_time(cs_awriter *w, const cs_gpu_time_row *x)
{
    sqlite3_stmt *s = w->q[W_GPU];
    cs_store_sql_bind_row(s, cs_gpu_time_cols, CS_SQL_NCOLS(cs_gpu_time_cols), x);
    return cs_astep(s);
}

int cs_awriter_kernel(cs_awriter *w, const cs_kernel_row *x)
{
    sqlite3_stmt *s = w->q[W_KERN];
    cs_store_sql_bind_row(s, cs_kernel_cols, CS_SQL_NCOLS(cs_kernel_cols), x);
    return cs_astep(s);
}

int cs_awriter_group_stat(cs_awriter *w, const cs_group_stat_row *x)
{
    sqlite3_stmt *s = w->q[W_GROUP];
    const cs_group_stat *g = &x->s;
    sqlite3_bind_text(s, 1, x->grp, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, g->key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 3, g->op, -1, SQLITE_TRANSIENT);
    const int64_t v[] = { g->count, g->bytes, g->total, g->p50, g->p90, g->p99, g->max };
    for (int i = 0; i < 7; i++)
        sqlite3_bind_int64(s, 4 + i, v[i]);
    return cs_astep(s);
}

int cs_awriter_rank_busy(cs_awriter *w, const cs_rank_busy_row *x)
{
    sqlite3_stmt *s = w->q[W_BUSY];
    sqlite3_bind_int(s, 1, x->rank);
    sqlite3_bind_int64(s, 2, x->busy_ns);
    sqlite3_bind_int64(s, 3, x->wall_ns);
    sqlite3_bind_int64(s, 4, x->spans);
    return cs_astep(s);
}

int cs_awriter_straggler(cs_awriter *w, const cs_straggler *x)
{
    sqlite3_stmt *s = w->q[W_STRAG];
    /* the reader's columns without the id, which the table assigns */
    cs_store_sql_bind_row(s, cs_straggler_cols + 1, CS_SQL_NCOLS(cs_straggler_cols) - 1, x);
    return cs_astep(s);
}

static const cs_store_sql_col cs_p2p_cols[] = { CS_SQL_I64(cs_p2p_row, send_span),
                                                CS_SQL_I64(cs_p2p_row, recv_span),
                                                CS_SQL_I64(cs_p2p_row, comm),
                                                CS_SQL_INT(cs_p2p_row, src),
                                                CS_SQL_INT(cs_p2p_row, dst),
                                                CS_SQL_INT(cs_p2p_row, tag),
                                                CS_SQL_I64(cs_p2p_row, late_sender_ns),
                                                CS_SQL_I64(cs_p2p_row, late_receiver_ns),
                                                CS_SQL_I64(cs_p2p_row, transfer_ns) };

int cs_awriter_p2p(cs_awriter *w, const cs_p2p_row *x)
{
    sqlite3_stmt *s = w->q[W_P2P];
    cs_store_sql_bind_row(s, cs_p2p_cols, CS_SQL_NCOLS(cs_p2p_cols), x);
    return cs_astep(s);
}

int cs_awriter_tail(cs_awriter *w, const cs_tail_row *x)
{
    sqlite3_stmt *s = w->q[W_TAIL];
    cs_store_sql_bind_row(s, cs_tail_cols, CS_SQL_NCOLS(cs_tail_cols), x);
    return cs_astep(s);
}

int cs_awriter_model(cs_awriter *w, const cs_model_row *x)
{
    sqlite3_stmt *s = w->q[W_MODEL];
    cs_store_sql_bind_row(s, cs_model_cols, CS_SQL_NCOLS(cs_model_cols), x);
    return cs_astep(s);
}

int cs_awriter_proposal(cs_awriter *w, const cs_proposal *x)
{
    sqlite3_stmt *s = w->q[W_PROP];
    /* the reader's columns without the id, which the table assigns */
    cs_store_sql_bind_row(s, cs_proposal_cols + 1, CS_SQL_NCOLS(cs_proposal_cols) - 1, x);
    return cs_astep(s);
}

int cs_store_analysis_end(cs_awriter *w, int commit, int64_t spans, char *err, size_t errlen)
{
    if (!w)
        return -1;
    int held = commit && w->nwaits ? cs_awriter_waits_flush(w) : 0;
    for (int i = 0; i < W_N; i++)
        sqlite3_finalize(w->q[i]);
    cs_store *st = w->st;
    free(w->waits);
    free(w);
    if (held != 0) {
        if (err)
            cs_store_sql_fail(err, errlen, "%s: %s", cs_store_path(st), sqlite3_errmsg(cs_db(st)));
        sqlite3_exec(cs_db(st), "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    if (!commit) {
        sqlite3_exec(cs_db(st), "ROLLBACK", NULL, NULL, NULL);
        return 0;
    }
    if (spans < 0) /* a process's share of a parallel analysis: its rows alone */
        return cs_store_sql_exec(cs_db(st), cs_store_path(st), "COMMIT", err, errlen);
    char v[32], n[32];
    snprintf(v, sizeof v, "%d", CS_ANALYSIS_VERSION);
    snprintf(n, sizeof n, "%lld", (long long)spans);
    if (cs_store_sql_exec(cs_db(st), cs_store_path(st), CS_ANALYSIS_INDEXES_SQL, err, errlen) != 0 ||
        cs_store_meta_set(st, "analysis_version", v) != 0 || cs_store_meta_set(st, "analysis_spans", n) != 0 ||
        cs_store_sql_exec(cs_db(st), cs_store_path(st), "COMMIT", err, errlen) != 0) {
        if (err && !*err)
            cs_store_sql_fail(err, errlen, "%s: %s", cs_store_path(st), sqlite3_errmsg(cs_db(st)));
        sqlite3_exec(cs_db(st), "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

int cs_store_clear_alignment(cs_store *st)
{
    return sqlite3_exec(cs_db(st), "UPDATE clocks SET offset_ns = 0, drift_ppm = 0, residual_ns = NULL", NULL, NULL,
                        NULL) == SQLITE_OK
               ? 0
               : -1;
}

/* ---- extra reads ---- */

int cs_store_comm_ranges(cs_store *st, cs_comm_range **out, int *n)
{
    *out = NULL;
    *n = 0;
    /* the seq ranges through the index, a few rows a communicator (of
     * each part of a job read through parts), not a scan of its spans */
    cs_coll_range *cr;
    int ncr;
    if (cs_store_coll_ranges(st, &cr, &ncr) != 0)
        return -1;
    sqlite3_stmt *s, *r;
    if (sqlite3_prepare_v2(cs_db(st), "SELECT DISTINCT id FROM comms", -1, &s, NULL) != SQLITE_OK) {
        free(cr);
        return -1;
    }
    if (sqlite3_prepare_v2(cs_db(st), "SELECT MAX(size) FROM comms WHERE id = ?1", -1, &r, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        free(cr);
        return -1;
    }
    size_t cap = 0;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t comm = sqlite3_column_int64(s, 0);
        int lo = 0, hi = ncr;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (cr[mid].comm < comm)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo >= ncr || cr[lo].comm != comm)
            continue; /* no collective on it (comm 0 has none either) */
        if (CS_VEC_RESERVE(*out, cap, (size_t)*n + 1) != 0) {
            rc = -1;
            break;
        }
        cs_comm_range *c = &(*out)[*n];
        c->comm = comm;
        c->seq_lo = cr[lo].seq_lo;
        c->seq_hi = cr[lo].seq_hi;
        sqlite3_bind_int64(r, 1, comm);
        if (sqlite3_step(r) != SQLITE_ROW) {
            rc = -1;
            break;
        }
        c->size = sqlite3_column_int(r, 0);
        sqlite3_reset(r);
        (*n)++;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    sqlite3_finalize(r);
    free(cr);
    if (rc != 0) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

typedef struct cs_seq_bind {
    int64_t comm, lo, hi;
} cs_seq_bind;

static void cs_seq_bind_fn(void *stmt, void *arg)
{
    const cs_seq_bind *b = arg;
    sqlite3_bind_int64(stmt, 1, b->comm);
    sqlite3_bind_int64(stmt, 2, b->lo);
    sqlite3_bind_int64(stmt, 3, b->hi);
}

cs_span_iter *cs_store_spans_raw_seq(cs_store *st, int64_t comm, int64_t lo, int64_t hi, char *err, size_t errlen)
{
    char *sql = cs_store_span_sql(st, 1, " WHERE s.comm = ?1 AND s.seq >= ?2 AND s.seq <= ?3", CS_ORDER_SEQ);
    cs_seq_bind b = { comm, lo, hi };
    cs_span_iter *it = cs_store_span_query(st, sql, cs_seq_bind_fn, &b, err, errlen);
    sqlite3_free(sql);
    return it;
}

int cs_store_instances_grouped(cs_store *st, int (*cb)(const cs_inst_brief *, void *), void *arg)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_db(st),
                           "SELECT op, comm, bucket, COALESCE(callsite, ''), last_exit_ns - first_entry_ns AS d,"
                           " last_rank, first_entry_ns, step, skew_ns, transfer_ns FROM instances"
                           " WHERE nranks > 0 ORDER BY op, comm, bucket, 4, d",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        cs_inst_brief b = { sqlite3_column_int(s, 0),   sqlite3_column_int64(s, 1),
                            sqlite3_column_int(s, 2),   (const char *)sqlite3_column_text(s, 3),
                            sqlite3_column_int64(s, 4), sqlite3_column_int(s, 5),
                            sqlite3_column_int64(s, 6), sqlite3_column_int64(s, 7),
                            sqlite3_column_int64(s, 8), sqlite3_column_int64(s, 9) };
        if ((rc = cb(&b, arg)) != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_gpu_ops(cs_store *st, int gpu_op0, int gpu_op1, int (*cb)(const cs_gpu_op_row *, void *), void *arg)
{
    sqlite3 *db = cs_db(st);
    int names = cs_store_sql_table_exists(db, "span_kernel") == 1;
    int launch = cs_store_sql_table_exists(db, "span_launch") == 1;
    char sql[1280];
    snprintf(sql, sizeof sql,
             "SELECT s.id, s.rank, s.op, s.tid, COALESCE(s.stream, 0), %s, %s, COALESCE(%s, 0), COALESCE(%s, 0),"
             " COALESCE(s.comm, 0), COALESCE(s.seq, -1), COALESCE(s.bytes, 0), COALESCE(s.callsite, 0), %s, %s"
             " FROM span s LEFT JOIN clocks k ON k.rank = s.rank%s%s"
             " WHERE s.op IN (%d, %d) OR (s.gpu_begin_ns IS NOT NULL AND s.gpu_end_ns IS NOT NULL"
             " AND s.gpu_begin_ns != 0 AND s.gpu_end_ns >= s.gpu_begin_ns)",
             CS_ALIGNED("s.begin_ns"), CS_ALIGNED("s.end_ns"), CS_ALIGNED("s.gpu_begin_ns"), CS_ALIGNED("s.gpu_end_ns"),
             names ? "COALESCE(sk.name, 0)" : "0", launch ? "sl.lead_ns" : "NULL",
             names ? " LEFT JOIN span_kernel sk ON sk.span = s.id" : "",
             launch ? " LEFT JOIN span_launch sl ON sl.span = s.id" : "", gpu_op0, gpu_op1);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    cs_gpu_op_row r;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        r.id = sqlite3_column_int64(s, 0);
        r.rank = sqlite3_column_int(s, 1);
        r.op = sqlite3_column_int(s, 2);
        r.tid = sqlite3_column_int(s, 3);
        r.stream = sqlite3_column_int64(s, 4);
        r.b = sqlite3_column_int64(s, 5);
        r.e = sqlite3_column_int64(s, 6);
        r.gb = sqlite3_column_int64(s, 7);
        r.ge = sqlite3_column_int64(s, 8);
        r.comm = sqlite3_column_int64(s, 9);
        r.seq = sqlite3_column_int64(s, 10);
        r.bytes = sqlite3_column_int64(s, 11);
        r.callsite = sqlite3_column_int64(s, 12);
        r.name = sqlite3_column_int64(s, 13);
        r.launch = sqlite3_column_type(s, 14) == SQLITE_NULL ? INT64_MIN : r.b - sqlite3_column_int64(s, 14);
        if ((rc = cb(&r, arg)) != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc < 0 ? -1 : 0;
}

int cs_store_callsite_labels(cs_store *st, int (*cb)(int, int64_t, const char *, void *), void *arg)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_db(st), "SELECT rank, id, label FROM callsites WHERE label IS NOT NULL", -1, &s, NULL) !=
        SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW)
        if ((rc = cb(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), (const char *)sqlite3_column_text(s, 2),
                     arg)) != 0)
            break;
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

/* Completions by (rank, req), for the p2p reader: completions has no
 * index (keeping one costs the ingest more than this costs here). A map
 * from the pair (request ids are 32 bits in the log) to the completion's
 * index in aDone. */
typedef struct cs_done_ent {
    int source;
    int64_t end_ns;
} cs_done_ent;
typedef struct cs_done_map {
    cs_map idx;
    cs_done_ent *aDone;
    size_t nDone, capDone;
} cs_done_map;

/* The key of (rank, req), or UINT64_MAX when req is not a 32-bit id. */
static uint64_t cs_done_key(int rank, int64_t req)
{
    if (req < 0 || req > (int64_t)UINT32_MAX)
        return UINT64_MAX;
    return (uint64_t)(uint32_t)rank << 32 | (uint64_t)req;
}

static const cs_done_ent *cs_done_find(const cs_done_map *m, int rank, int64_t req)
{
    int64_t i;
    uint64_t k = cs_done_key(rank, req);
    return k != UINT64_MAX && cs_map_get(&m->idx, k, &i) ? &m->aDone[i] : NULL;
}

static void cs_done_map_free(cs_done_map *m)
{
    cs_map_free(&m->idx);
    free(m->aDone);
}

/* The completions of the store, or of its part (prefix "pN."; ""). */
static int cs_done_map_load(cs_store *st, const char *prefix, cs_done_map *m)
{
    memset(m, 0, sizeof *m);
    sqlite3_stmt *s;
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %scompletions", prefix);
    if (sqlite3_prepare_v2(cs_db(st), sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    if (n < 0 || cs_map_reserve(&m->idx, (size_t)n) != 0)
        return -1;
    snprintf(sql, sizeof sql, "SELECT rank, req, COALESCE(source, -1), COALESCE(end_ns, 0) FROM %scompletions", prefix);
    if (sqlite3_prepare_v2(cs_db(st), sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        uint64_t k = cs_done_key(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1));
        int64_t have;
        /* A request completed twice (a damaged trace): the first wins. */
        if (k == UINT64_MAX || cs_map_get(&m->idx, k, &have))
            continue;
        if (CS_VEC_RESERVE(m->aDone, m->capDone, m->nDone + 1) != 0 || cs_map_put(&m->idx, k, (int64_t)m->nDone) != 0) {
            step = SQLITE_NOMEM;
            break;
        }
        m->aDone[m->nDone++] = (cs_done_ent){ sqlite3_column_int(s, 2), sqlite3_column_int64(s, 3) };
    }
    sqlite3_finalize(s);
    return step == SQLITE_DONE ? 0 : -1;
}

int cs_store_p2p_markers_raw(cs_store *st, int part, int (*cb)(const cs_p2p_op *, void *), void *arg)
{
    char prefix[32] = "", sql[1024];
    if (part >= 0)
        snprintf(prefix, sizeof prefix, "p%d.", part);
    snprintf(sql, sizeof sql,
             "SELECT s.id, COALESCE(s.comm, 0), s.rank, CASE o.kind WHEN 'send' THEN 0 WHEN 'recv' THEN 1 WHEN "
             "'sendrecv' THEN 2 ELSE 3 END,"
             " COALESCE(s.peer, -1), COALESCE(s.peer2, -1), COALESCE(s.tag, -1), COALESCE(s.req, 0), s.begin_ns,"
             " s.end_ns, o.nonblocking"
             " FROM %sspan s JOIN main.ops o ON o.id = s.op"
             " WHERE s.op IN (SELECT id FROM main.ops WHERE kind IN ('send', 'recv', 'sendrecv', 'marker'))"
             " AND (s.comm IS NOT NULL OR o.kind = 'marker')",
             prefix);
    cs_done_map done;
    if (cs_done_map_load(st, prefix, &done) != 0) {
        cs_done_map_free(&done);
        return -1;
    }
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_db(st), sql, -1, &s, NULL) != SQLITE_OK) {
        cs_done_map_free(&done);
        return -1;
    }
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        cs_p2p_op m = {
            sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int(s, 2), sqlite3_column_int(s, 3),
            sqlite3_column_int(s, 4),   sqlite3_column_int(s, 5),   sqlite3_column_int(s, 6), -1,
            sqlite3_column_int64(s, 8), sqlite3_column_int64(s, 9), sqlite3_column_int(s, 10)
        };
        if (m.nonblocking) {
            /* A nonblocking start ends when its request completed (0: never). */
            m.end_ns = 0;
            int64_t req = sqlite3_column_int64(s, 7);
            if (req) {
                const cs_done_ent *d = cs_done_find(&done, m.rank, req);
                if (d) {
                    m.source = d->source;
                    m.end_ns = d->end_ns;
                }
            }
        }
        if ((rc = cb(&m, arg)) != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    cs_done_map_free(&done);
    return rc;
}

/* ---- the program ---- */

int cs_store_program(cs_store *st, char *buf, size_t len)
{
    sqlite3_stmt *s;
    buf[0] = '\0';
    if (sqlite3_prepare_v2(cs_db(st),
                           "SELECT exe FROM processes WHERE exe IS NOT NULL AND exe != ''"
                           " ORDER BY rank < 0, rank LIMIT 1",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = -1;
    if (sqlite3_step(s) == SQLITE_ROW) {
        cs_store_sql_text(s, 0, buf, len);
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}

/* ---- job size ---- */

int cs_store_world_size(cs_store *st)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_db(st), "SELECT MAX(world_size) FROM processes", -1, &s, NULL) != SQLITE_OK)
        return -1;
    int n = 0;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
        n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return n;
}
