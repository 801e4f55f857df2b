/* store_merge.c: a job store from per-rank stores (see store.h): started
 * as a page copy of the first one (cs_store_create_from) or empty, each
 * rank's appended (cs_store_merge), then indexed (cs_store_finish). */
#include "config.h"
#include "libtrace/ops.gen.h"
#include "common/msg.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"
#include "libtrace/store_tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cs_store_merge(cs_store *job, const char *rank_db, char *err, size_t errlen)
{
    cs_store *r;
    if (cs_store_open(rank_db, CS_STORE_READ, &r, err, errlen) != 0)
        return -1;
    cs_store_close(r);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(job->db, "ATTACH DATABASE ? AS r", -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: %s", job->path, sqlite3_errmsg(job->db));
    sqlite3_bind_text(s, 1, rank_db, -1, SQLITE_TRANSIENT);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    if (!ok)
        return cs_store_sql_fail(err, errlen, "%s: cannot attach: %s", rank_db, sqlite3_errmsg(job->db));
    /* A rank file written before nccl_coll existed gains it (empty). */
    sqlite3_exec(job->db, "CREATE TABLE IF NOT EXISTS r.nccl_coll" CS_NCCL_COLL_COLUMNS, NULL, NULL, NULL);
    /* And the guard's records (apply mode), either side. */
    sqlite3_exec(job->db,
                 "CREATE TABLE IF NOT EXISTS r.fuse_guard" CS_FUSE_GUARD_COLUMNS ";"
                 "CREATE TABLE IF NOT EXISTS main.fuse_guard" CS_FUSE_GUARD_COLUMNS ";",
                 NULL, NULL, NULL);
    /* So do files from before the kernel names (version 5), either side. */
    sqlite3_exec(job->db,
                 "CREATE TABLE IF NOT EXISTS r.kernel_names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
                 "CREATE TABLE IF NOT EXISTS r.span_kernel(span INTEGER PRIMARY KEY, name INTEGER NOT NULL);"
                 "CREATE TABLE IF NOT EXISTS main.kernel_names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
                 "CREATE TABLE IF NOT EXISTS main.span_kernel(span INTEGER PRIMARY KEY, name INTEGER NOT NULL);"
                 "CREATE TABLE IF NOT EXISTS r.span_launch" CS_SPAN_LAUNCH_COLUMNS ";"
                 "CREATE TABLE IF NOT EXISTS main.span_launch" CS_SPAN_LAUNCH_COLUMNS ";",
                 NULL, NULL, NULL);
    /* It is read once, front to back: mapped, not copied through read(). */
    sqlite3_exec(job->db, "PRAGMA r.mmap_size=4294967296", NULL, NULL, NULL);
    int rc = -1;
    /* Op ids are the enum of the tool that wrote the file. */
    sqlite3_stmt *chk;
    if (sqlite3_prepare_v2(job->db,
                           "SELECT count(*) FROM r.ops o LEFT JOIN main.ops m ON m.id = o.id AND m.name = o.name"
                           " WHERE m.id IS NULL",
                           -1, &chk, NULL) == SQLITE_OK) {
        int step = sqlite3_step(chk);
        int mismatched = step == SQLITE_ROW ? sqlite3_column_int(chk, 0) : -1;
        sqlite3_finalize(chk);
        if (mismatched < 0) {
            cs_store_sql_fail(err, errlen, "%s: cannot read it (%s)", rank_db, sqlite3_errmsg(job->db));
            goto detach;
        }
        if (mismatched) {
            cs_store_sql_fail(err, errlen,
                              "%s: written by another collscope version (its op table differs); "
                              "rebuild it with collscope ingest",
                              rank_db);
            goto detach;
        }
    }
    /* Span ids are disjoint across ranks: a plain copy (which SQLite does
     * page by page). Only two files of one rank need the ids shifted. */
    static const char fast[] = "BEGIN;"
                               "INSERT INTO main.span SELECT * FROM r.span;"
                               "INSERT INTO main.completions SELECT * FROM r.completions;"
                               "INSERT INTO main.counters SELECT * FROM r.counters;"
                               "INSERT INTO main.gpu_activity SELECT * FROM r.gpu_activity;"
                               "INSERT INTO main.nccl_coll SELECT * FROM r.nccl_coll;"
                               "INSERT OR IGNORE INTO main.kernel_names(name) SELECT name FROM r.kernel_names;"
                               "INSERT INTO main.span_kernel SELECT k.span, m.id FROM r.span_kernel k"
                               "  JOIN r.kernel_names n ON n.id = k.name JOIN main.kernel_names m ON m.name = n.name;"
                               "INSERT INTO main.span_launch SELECT * FROM r.span_launch;"
                               "INSERT OR REPLACE INTO main.processes SELECT * FROM r.processes;"
                               "INSERT OR REPLACE INTO main.clocks SELECT * FROM r.clocks;"
                               "INSERT OR REPLACE INTO main.comms SELECT * FROM r.comms;"
                               "INSERT OR REPLACE INTO main.callsites SELECT * FROM r.callsites;"
                               "INSERT OR REPLACE INTO main.frames SELECT * FROM r.frames;"
                               "INSERT INTO main.modules SELECT * FROM r.modules;"
                               "INSERT INTO main.fuse_guard SELECT * FROM r.fuse_guard;"
                               "COMMIT;";
    char *why = NULL;
    if (sqlite3_exec(job->db, fast, NULL, NULL, &why) == SQLITE_OK) {
        rc = 0;
        goto detach;
    }
    if (getenv("COLLSCOPE_VERBOSE"))
        cs_note("%s: merging with shifted span ids (%s)", rank_db, why ? why : "");
    sqlite3_free(why);
    sqlite3_exec(job->db, "ROLLBACK", NULL, NULL, NULL);
    char sql[4096];
    snprintf(sql, sizeof sql,
             "BEGIN;"
             "CREATE TEMP TABLE IF NOT EXISTS cs_off(v INTEGER); DELETE FROM cs_off;"
             "INSERT INTO cs_off SELECT COALESCE(MAX(id), 0) FROM main.span;"
             "INSERT INTO main.span SELECT id + (SELECT v FROM cs_off), rank, tid, op, comm, seq, bytes, dtype,"
             "  count, peer, peer2, tag, req, begin_ns, end_ns, rc, callsite, flags, stream, grp, redop, corr,"
             "  gpu_begin_ns, gpu_end_ns FROM r.span;"
             "INSERT INTO main.gpu_activity SELECT * FROM r.gpu_activity;"
             "INSERT INTO main.completions SELECT rank, req, span + (SELECT v FROM cs_off), source, tag,"
             "  end_ns FROM r.completions;"
             "INSERT INTO main.counters SELECT span + (SELECT v FROM cs_off), event, value FROM r.counters;"
             "INSERT INTO main.nccl_coll SELECT span + (SELECT v FROM cs_off), algo, proto, nchannels, gpu_begin_ns,"
             "  gpu_end_ns FROM r.nccl_coll;"
             "INSERT OR IGNORE INTO main.kernel_names(name) SELECT name FROM r.kernel_names;"
             "INSERT INTO main.span_kernel SELECT k.span + (SELECT v FROM cs_off), m.id FROM r.span_kernel k"
             "  JOIN r.kernel_names n ON n.id = k.name JOIN main.kernel_names m ON m.name = n.name;"
             "INSERT INTO main.span_launch SELECT span + (SELECT v FROM cs_off), lead_ns FROM r.span_launch;"
             "INSERT OR REPLACE INTO main.processes SELECT * FROM r.processes;"
             "INSERT OR REPLACE INTO main.clocks SELECT * FROM r.clocks;"
             "INSERT OR REPLACE INTO main.comms SELECT * FROM r.comms;"
             "INSERT OR REPLACE INTO main.callsites SELECT * FROM r.callsites;"
             "INSERT OR REPLACE INTO main.frames SELECT * FROM r.frames;"
             "INSERT INTO main.modules SELECT * FROM r.modules;"
             "INSERT INTO main.fuse_guard SELECT * FROM r.fuse_guard;"
             "COMMIT;");
    if (cs_store_sql_exec(job->db, job->path, sql, err, errlen) != 0) {
        sqlite3_exec(job->db, "ROLLBACK", NULL, NULL, NULL);
        goto detach;
    }
    rc = 0;
detach:
    if (rc == 0) {
        /* The watchdog's hangs, where the rank's file has the table. */
        sqlite3_stmt *h;
        int has = 0;
        if (sqlite3_prepare_v2(job->db, "SELECT 1 FROM r.sqlite_master WHERE type='table' AND name='hangs'", -1, &h,
                               NULL) == SQLITE_OK) {
            has = sqlite3_step(h) == SQLITE_ROW;
            sqlite3_finalize(h);
        }
        if (has &&
            cs_store_sql_exec(job->db, job->path, "INSERT INTO main.hangs SELECT * FROM r.hangs", err, errlen) != 0)
            rc = -1;
    }
    sqlite3_exec(job->db, "DETACH DATABASE r", NULL, NULL, NULL);
    return rc;
}

/* Is the store's op table this build's, id for id? 1 or 0; -1 when it
 * cannot be read. */
static int ops_are_ours(cs_store *st)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "SELECT id, name FROM ops", -1, &s, NULL) != SQLITE_OK)
        return -1;
    int n = 0, ok = 1, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int id = sqlite3_column_int(s, 0);
        const unsigned char *name = sqlite3_column_text(s, 1);
        ok = id >= 0 && id < CS_OP_COUNT && name && strcmp((const char *)name, cs_ops[id].name) == 0;
        n++;
        if (!ok)
            break;
    }
    sqlite3_finalize(s);
    if (ok && rc != SQLITE_DONE)
        return -1;
    return ok && n == CS_OP_COUNT;
}

int cs_store_create_from(const char *path, const char *rank_db, cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    cs_store *r;
    if (cs_store_open(rank_db, CS_STORE_READ, &r, err, errlen) != 0)
        return -1;
    char tool[64] = "", kind[16] = "";
    cs_store_meta_get(r, "tool_version", tool, sizeof tool);
    cs_store_meta_get(r, "kind", kind, sizeof kind);
    int ours = ops_are_ours(r);
    if (ours < 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read it (%s)", rank_db, sqlite3_errmsg(r->db));
        cs_store_close(r);
        return -1;
    }
    int usable =
        r->version == CS_SCHEMA_VERSION && strcmp(tool, PACKAGE_VERSION) == 0 && strcmp(kind, "rank") == 0 && ours;
    cs__store_file_unlink(path);
    if (usable && cs__store_copy_file(r, path, err, errlen) != 0) {
        cs__store_file_unlink(path);
        usable = 0; /* cs_store_create will say what is wrong with the folder */
    }
    cs_store_close(r);
    if (!usable)
        return 1;
    cs_store *st = calloc(1, sizeof *st);
    if (!st) {
        unlink(path);
        return cs_store_sql_fail(err, errlen, "%s: out of memory", path);
    }
    snprintf(st->path, sizeof st->path, "%s", path);
    st->version = CS_SCHEMA_VERSION;
    if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        cs_store_close(st);
        unlink(path);
        return 1;
    }
    cs__store_file_build_pragmas(st);
    if (cs_store_sql_exec(st->db, st->path, "DELETE FROM meta WHERE key IN ('source_log', 'unknown_ops')", err,
                          errlen) != 0) {
        cs_store_close(st);
        unlink(path);
        return 1;
    }
    *out = st;
    return 0;
}

int cs_store_finish(cs_store *job, const char *command, char *err, size_t errlen)
{
    /* Indexes after the bulk load (sorted with SQLite's worker threads),
     * statistics from a sample, then the WAL mode readers expect. */
    if (cs_store_sql_exec(job->db, job->path,
                          "PRAGMA mmap_size=" CS_STORE_MMAP "; PRAGMA threads=2; BEGIN;" CS_SCHEMA_INDEXES_SQL "COMMIT;"
                          "PRAGMA analysis_limit=1000; ANALYZE; PRAGMA locking_mode=NORMAL;",
                          err, errlen) != 0)
        return -1;
    sqlite3_exec(job->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cs_store_meta_set(job, "kind", "job");
    cs_store_meta_set(job, "created", now);
    if (command)
        cs_store_meta_set(job, "command", command);
    return 0;
}
