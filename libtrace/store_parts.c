/* store_parts.c: a job read by K processes at once. Each process merges
 * its share of the rank stores into a part (cs_store_job_part); each then
 * reads the whole job through a small store of its own that attaches the
 * parts and reads their rows in place (cs_store_open_parts). */
#include "config.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"
#include "common/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_store_parts_max(void)
{
    sqlite3 *db;
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close_v2(db);
        return 1;
    }
    int n = sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1);
    sqlite3_close_v2(db);
    return n > 1 ? n - 1 : 1; /* one attachment is kept for the results */
}

/* The tables whose rows stay in the parts, read through a view each. */
static const char *const parts_views[] = { "span", "completions", "counters", "gpu_activity", "nccl_coll" };
/* The small ones, copied (as cs_store_merge copies them). */
static const char *const parts_copied[] = { "processes", "clocks",  "comms", "callsites",
                                            "frames",    "modules", "hangs", "fuse_guard" };

int cs_store_open_parts(const char *dir, char *const *parts, int nparts, const char *path, const cs_store_part *total,
                        cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    if (nparts < 1 || nparts > cs_store_parts_max())
        return cs_store_sql_fail(err, errlen, "%s: %d parts: at most %d can be read at once", dir, nparts,
                                 cs_store_parts_max());
    cs_store *st;
    cs__store_file_unlink(path);
    if (cs__store_file_create(path, &st, err, errlen) != 0)
        return -1;
    snprintf(st->scratch, sizeof st->scratch, "%s", path);
    /* The parts are read by every process at once: no lock kept */
    sqlite3_exec(st->db, "PRAGMA locking_mode=NORMAL", NULL, NULL, NULL);
    sqlite3_busy_timeout(st->db, 60000);
    for (int i = 0; i < nparts; i++) {
        sqlite3_stmt *s;
        char as[32];
        snprintf(as, sizeof as, "p%d", i);
        if (sqlite3_prepare_v2(st->db, "ATTACH DATABASE ?1 AS ?2", -1, &s, NULL) != SQLITE_OK) {
            cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(st->db));
            cs_store_close(st);
            return -1;
        }
        sqlite3_bind_text(s, 1, parts[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, as, -1, SQLITE_STATIC);
        int ok = sqlite3_step(s) == SQLITE_DONE;
        sqlite3_finalize(s);
        /* The read cache holds a page per rank under the cursors: the
         * parts share one cache's worth (each holds its share of the ranks) */
        char sql[192];
        long long kb = CS_STORE_READ_CACHE_KB / nparts;
        if (kb < CS_STORE_PART_CACHE_MIN_KB)
            kb = CS_STORE_PART_CACHE_MIN_KB;
        snprintf(sql, sizeof sql, "PRAGMA p%d.mmap_size=" CS_STORE_MMAP "; PRAGMA p%d.cache_size=-%lld", i, i, kb);
        if (!ok || sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
            cs_store_sql_fail(err, errlen, "%s: cannot read it: %s", parts[i], sqlite3_errmsg(st->db));
            cs_store_close(st);
            return -1;
        }
    }
    /* Copied in part order, which is the rank order cs_store_open_job
     * merges in: the same rows in the same order. */
    if (cs_store_sql_exec(st->db, path, "BEGIN", err, errlen) != 0) {
        cs_store_close(st);
        return -1;
    }
    for (int i = 0; i < nparts; i++)
        for (size_t t = 0; t < sizeof parts_copied / sizeof parts_copied[0]; t++) {
            char sql[256];
            snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO main.%s SELECT * FROM p%d.%s", parts_copied[t], i,
                     parts_copied[t]);
            if (cs_store_sql_exec(st->db, path, sql, err, errlen) != 0) {
                sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
                cs_store_close(st);
                return -1;
            }
        }
    if (cs_store_sql_exec(st->db, path, "COMMIT", err, errlen) != 0) {
        cs_store_close(st);
        return -1;
    }
    for (size_t t = 0; t < sizeof parts_views / sizeof parts_views[0]; t++) {
        sqlite3_str *q = sqlite3_str_new(st->db);
        sqlite3_str_appendf(q, "CREATE TEMP VIEW %s AS ", parts_views[t]);
        for (int i = 0; i < nparts; i++)
            sqlite3_str_appendf(q, "%sSELECT * FROM p%d.%s", i ? " UNION ALL " : "", i, parts_views[t]);
        char *sql = sqlite3_str_finish(q);
        int rc =
            sql ? cs_store_sql_exec(st->db, path, sql, err, errlen) : cs_store_sql_fail(err, errlen, "out of memory");
        sqlite3_free(sql);
        if (rc != 0) {
            cs_store_close(st);
            return -1;
        }
    }
    st->nparts = nparts;
    st->spans = total->spans;
    cs__store_job_meta(st, dir, total);
    *out = st;
    return 0;
}

char *cs__store_parts_span_sql(const cs_store *st, int raw, int order, const char *where)
{
    /* The raw order keys follow the CS_SPAN_NCOLS columns: comm, seq,
     * begin_ns; the id and rank are columns 1 and 2. */
    const char *by = order == CS_ORDER_COMM_SEQ ? " ORDER BY 23, 24, 2, 1"
                     : order == CS_ORDER_TIME   ? " ORDER BY 25, 1"
                     : order == CS_ORDER_SEQ    ? " ORDER BY 24, 2, 1"
                                                : " ORDER BY 2, 25, 1";
    sqlite3_str *q = sqlite3_str_new(st->db);
    for (int i = 0; i < st->nparts; i++)
        sqlite3_str_appendf(
            q, "%sSELECT %s, s.comm, s.seq, s.begin_ns FROM p%d.span s LEFT JOIN main.clocks k ON k.rank = s.rank%s",
            i ? " UNION ALL " : "",
            raw ? CS_SPAN_LIST_("s.begin_ns", "s.end_ns", "s.gpu_begin_ns", "s.gpu_end_ns") : CS_SPAN_LIST, i, where);
    sqlite3_str_appendall(q, by);
    return sqlite3_str_finish(q);
}

/* One part's (or a store's: prefix "") collective communicators, added to
 * the sorted *out (their seq ranges widened where already there). */
static int coll_ranges_of(sqlite3 *db, const char *prefix, cs_coll_range **out, int *n, size_t *cap)
{
    char sql[4][192];
    snprintf(sql[0], sizeof sql[0],
             "SELECT comm FROM %sspan WHERE seq IS NOT NULL AND comm IS NOT NULL ORDER BY comm, seq LIMIT 1", prefix);
    snprintf(sql[1], sizeof sql[1],
             "SELECT comm FROM %sspan WHERE seq IS NOT NULL AND comm > ?1 ORDER BY comm, seq LIMIT 1", prefix);
    snprintf(sql[2], sizeof sql[2], "SELECT seq FROM %sspan WHERE comm = ?1 AND seq IS NOT NULL ORDER BY seq LIMIT 1",
             prefix);
    snprintf(sql[3], sizeof sql[3],
             "SELECT seq FROM %sspan WHERE comm = ?1 AND seq IS NOT NULL ORDER BY seq DESC LIMIT 1", prefix);
    sqlite3_stmt *q[4] = { NULL, NULL, NULL, NULL };
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++)
        if (sqlite3_prepare_v2(db, sql[i], -1, &q[i], NULL) != SQLITE_OK)
            rc = -1;
    int step = rc == 0 ? sqlite3_step(q[0]) : SQLITE_ERROR;
    int64_t comm = step == SQLITE_ROW ? sqlite3_column_int64(q[0], 0) : 0;
    int at = 0;
    while (rc == 0 && step == SQLITE_ROW) {
        int64_t v[2] = { 0, 0 };
        for (int k = 0; k < 2 && rc == 0; k++) {
            sqlite3_bind_int64(q[2 + k], 1, comm);
            if (sqlite3_step(q[2 + k]) == SQLITE_ROW)
                v[k] = sqlite3_column_int64(q[2 + k], 0);
            else
                rc = -1;
            sqlite3_reset(q[2 + k]);
        }
        if (rc == 0 && comm != 0) {
            while (at < *n && (*out)[at].comm < comm)
                at++;
            if (at < *n && (*out)[at].comm == comm) {
                if (v[0] < (*out)[at].seq_lo)
                    (*out)[at].seq_lo = v[0];
                if (v[1] > (*out)[at].seq_hi)
                    (*out)[at].seq_hi = v[1];
            } else if (CS_VEC_RESERVE(*out, *cap, (size_t)*n + 1) != 0) {
                rc = -1;
                break;
            } else {
                memmove(*out + at + 1, *out + at, (size_t)(*n - at) * sizeof **out);
                (*out)[at] = (cs_coll_range){ comm, v[0], v[1] };
                (*n)++;
            }
        }
        sqlite3_reset(q[1]);
        sqlite3_bind_int64(q[1], 1, comm);
        step = sqlite3_step(q[1]);
        if (step == SQLITE_ROW)
            comm = sqlite3_column_int64(q[1], 0);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    for (int i = 0; i < 4; i++)
        sqlite3_finalize(q[i]);
    return rc;
}

int cs_store_coll_ranges(cs_store *st, cs_coll_range **out, int *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    int rc = 0;
    for (int i = 0; rc == 0 && i < (st->nparts > 0 ? st->nparts : 1); i++) {
        char prefix[16] = "";
        if (st->nparts > 0)
            snprintf(prefix, sizeof prefix, "p%d.", i);
        rc = coll_ranges_of(st->db, prefix, out, n, &cap);
    }
    if (rc != 0) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
