/* export_io.c: the export writers' output buffer, number writers and span
 * scan (export_io.h). */
#include "config.h"
#include "analyzer/export_io.h"
#include "common/vec.h"
#include "libtrace/store_schema.h"
#include "libtrace/store_sql.h"

#include <stdlib.h>

#define CS_EXPORT_OUT_CAP (4u << 20)

int cs_export_out_init(cs_export_out *o, FILE *f)
{
    memset(o, 0, sizeof *o);
    o->f = f;
    if (!(o->buf = malloc(CS_EXPORT_OUT_CAP)))
        return -1;
    o->cap = CS_EXPORT_OUT_CAP;
    return 0;
}

void cs_export_out_flush(cs_export_out *o)
{
    if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
        o->failed = 1;
    o->len = 0;
}

int cs_export_out_done(cs_export_out *o)
{
    if (o->buf)
        cs_export_out_flush(o);
    free(o->buf);
    o->buf = NULL;
    o->cap = 0;
    return o->failed ? -1 : 0;
}

char *cs__export_out_room(cs_export_out *o, size_t n)
{
    if (!o->buf)
        return NULL;
    cs_export_out_flush(o);
    if (n > o->cap) {
        char *b = realloc(o->buf, n);
        if (!b) {
            o->failed = 1;
            return NULL;
        }
        o->buf = b;
        o->cap = n;
    }
    return o->buf;
}

void cs_export_out_i64(cs_export_out *o, int64_t v)
{
    char b[24], *e = b + sizeof b, *p = e;
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + a % 10);
        a /= 10;
    } while (a);
    if (v < 0)
        *--p = '-';
    cs_export_out_put(o, p, (size_t)(e - p));
}

void cs_export_out_us(cs_export_out *o, int64_t ns)
{
    char b[32], *e = b + sizeof b, *p = e;
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    for (int i = 0; i < 3; i++) {
        *--p = (char)('0' + a % 10);
        a /= 10;
    }
    *--p = '.';
    do {
        *--p = (char)('0' + a % 10);
        a /= 10;
    } while (a);
    if (ns < 0)
        *--p = '-';
    cs_export_out_put(o, p, (size_t)(e - p));
}

void cs_export_out_json_str(cs_export_out *o, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    cs_export_out_c(o, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            cs_export_out_put(o, e, 2);
        } else if (c < 0x20 || c == 0x7f) {
            char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            cs_export_out_put(o, e, 6);
        } else
            cs_export_out_c(o, (char)c);
    }
    cs_export_out_c(o, '"');
}

/* ---- the spans ---- */

typedef struct cs_export_clock {
    int set;
    int64_t offset, ref;
    double drift;
} cs_export_clock;

struct cs_export_spans {
    sqlite3_stmt *s;
    cs_export_clock *clocks; /* by rank */
    int nclocks;
};

/* The columns read, in this order. No COALESCE: NULL is told apart in C
 * only where it means something other than 0. */
static const char export_spans_sql[] =
    "SELECT id, rank, tid, op, comm, seq, bytes, peer, peer2, tag, begin_ns, end_ns, rc, callsite, flags,"
    " gpu_begin_ns, gpu_end_ns, stream FROM span ORDER BY rank, begin_ns";

cs_export_spans *cs_export_spans_open(cs_store *st, char *err, size_t errlen)
{
    sqlite3 *db = cs_store_sql_db(st);
    cs_export_spans *it = calloc(1, sizeof *it);
    sqlite3_stmt *c = NULL;
    if (!it) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        return NULL;
    }
    if (sqlite3_prepare_v2(db, "SELECT rank, offset_ns, drift_ppm, ref_ns FROM clocks WHERE rank >= 0 ORDER BY rank",
                           -1, &c, NULL) != SQLITE_OK)
        goto fail;
    int rc;
    while ((rc = sqlite3_step(c)) == SQLITE_ROW) {
        int rank = sqlite3_column_int(c, 0);
        if (rank >= it->nclocks) {
            int n = rank + 1;
            cs_export_clock *k = realloc(it->clocks, (size_t)n * sizeof *k);
            if (!k) {
                sqlite3_finalize(c);
                cs_export_spans_free(it);
                cs_store_sql_fail(err, errlen, "export: out of memory");
                return NULL;
            }
            memset(k + it->nclocks, 0, (size_t)(n - it->nclocks) * sizeof *k);
            it->clocks = k;
            it->nclocks = n;
        }
        it->clocks[rank] = (cs_export_clock){ .set = 1,
                                              .offset = sqlite3_column_int64(c, 1),
                                              .drift = sqlite3_column_double(c, 2),
                                              .ref = sqlite3_column_int64(c, 3) };
    }
    sqlite3_finalize(c);
    if (rc != SQLITE_DONE || sqlite3_prepare_v2(db, export_spans_sql, -1, &it->s, NULL) != SQLITE_OK)
        goto fail;
    return it;
fail:
    cs_store_sql_fail(err, errlen, "%s: cannot read the spans: %s", cs_store_path(st), sqlite3_errmsg(db));
    cs_export_spans_free(it);
    return NULL;
}

/* CS_ALIGNED in C: the same operations in the same order, so the same
 * integer. */
static int64_t export_align(const cs_export_spans *it, int rank, int64_t t)
{
    if (rank < 0 || rank >= it->nclocks || !it->clocks[rank].set)
        return t;
    const cs_export_clock *k = &it->clocks[rank];
    return t + k->offset + (int64_t)(k->drift * 1e-6 * (double)(t - k->ref));
}

static int64_t export_col(sqlite3_stmt *s, int i, int64_t null)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? null : sqlite3_column_int64(s, i);
}

int cs_export_spans_next(cs_export_spans *it, cs_span *o)
{
    sqlite3_stmt *s = it->s;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return -1;
    memset(o, 0, sizeof *o);
    o->id = sqlite3_column_int64(s, 0);
    o->rank = sqlite3_column_int(s, 1);
    o->tid = sqlite3_column_int(s, 2);
    o->op = sqlite3_column_int(s, 3);
    o->comm = sqlite3_column_int64(s, 4);
    o->seq = export_col(s, 5, -1);
    o->bytes = sqlite3_column_int64(s, 6);
    o->peer = (int)export_col(s, 7, -1);
    o->peer2 = (int)export_col(s, 8, -1);
    o->tag = (int)export_col(s, 9, -1);
    o->begin_ns = export_align(it, o->rank, sqlite3_column_int64(s, 10));
    o->end_ns = export_align(it, o->rank, sqlite3_column_int64(s, 11));
    o->rc = sqlite3_column_int(s, 12);
    o->callsite = sqlite3_column_int64(s, 13);
    o->flags = (uint32_t)sqlite3_column_int64(s, 14);
    if (sqlite3_column_type(s, 15) != SQLITE_NULL)
        o->gpu_begin_ns = export_align(it, o->rank, sqlite3_column_int64(s, 15));
    if (sqlite3_column_type(s, 16) != SQLITE_NULL)
        o->gpu_end_ns = export_align(it, o->rank, sqlite3_column_int64(s, 16));
    o->stream = export_col(s, 17, -1);
    return 1;
}

void cs_export_spans_free(cs_export_spans *it)
{
    if (!it)
        return;
    sqlite3_finalize(it->s);
    free(it->clocks);
    free(it);
}

/* ---- flows and waits ---- */

int cs_export_p2p(cs_store *st, int (*cb)(const cs_export_end *send, const cs_export_end *recv, void *arg), void *arg,
                  char *err, size_t errlen)
{
    sqlite3 *db = cs_store_sql_db(st);
    if (cs_store_sql_table_exists(db, "p2p") != 1)
        return 0;
    /* The spans view gives the aligned times of both ends. */
    static const char sql[] = "SELECT s.rank, s.thread, s.begin_ns, s.end_ns, r.rank, r.thread, r.begin_ns, r.end_ns"
                              " FROM p2p p JOIN spans s ON s.id = p.send_span JOIN spans r ON r.id = p.recv_span"
                              " ORDER BY p.send_span";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the matched messages: %s", cs_store_path(st),
                                 sqlite3_errmsg(db));
    int rc, stop = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        cs_export_end a = { sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
                            sqlite3_column_int64(s, 3) };
        cs_export_end b = { sqlite3_column_int(s, 4), sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 6),
                            sqlite3_column_int64(s, 7) };
        if ((stop = cb(&a, &b, arg)) != 0)
            break;
    }
    sqlite3_finalize(s);
    if (stop)
        return cs_store_sql_fail(err, errlen, "export: out of memory");
    if (rc != SQLITE_DONE)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the matched messages (damaged?)", cs_store_path(st));
    return 0;
}

int cs_export_instances(cs_store *st, int (*cb)(const cs_export_end *m, size_t n, int last, void *arg), void *arg,
                        char *err, size_t errlen)
{
    sqlite3 *db = cs_store_sql_db(st);
    if (cs_store_sql_table_exists(db, "instances") != 1)
        return 0;
    static const char sql[] = "SELECT s.rank, s.tid, " CS_ALIGNED("s.begin_ns") ", " CS_ALIGNED(
        "s.end_ns") ", s.comm, s.seq, i.last_rank"
                    " FROM span s JOIN instances i ON i.comm = s.comm AND i.seq = s.seq"
                    " LEFT JOIN clocks k ON k.rank = s.rank"
                    " WHERE (s.flags & 8) != 0 AND i.last_rank >= 0 ORDER BY s.comm, s.seq, s.rank, s.begin_ns";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the collective instances: %s", cs_store_path(st),
                                 sqlite3_errmsg(db));
    cs_export_end *m = NULL;
    size_t n = 0, cap = 0;
    int64_t comm = 0, seq = -1;
    int last = -1, rc, stop = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t cm = sqlite3_column_int64(s, 4), sq = sqlite3_column_int64(s, 5);
        if (n > 0 && (cm != comm || sq != seq)) {
            if ((stop = cb(m, n, last, arg)) != 0)
                break;
            n = 0;
        }
        comm = cm;
        seq = sq;
        last = sqlite3_column_int(s, 6);
        int rank = sqlite3_column_int(s, 0);
        if (n > 0 && m[n - 1].rank == rank)
            continue; /* one span per rank: the first */
        if (CS_VEC_RESERVE(m, cap, n + 1) != 0) {
            stop = 1;
            break;
        }
        m[n++] = (cs_export_end){ .rank = rank,
                                  .tid = sqlite3_column_int64(s, 1),
                                  .begin = sqlite3_column_int64(s, 2),
                                  .end = sqlite3_column_int64(s, 3) };
    }
    if (!stop && rc == SQLITE_DONE && n > 0)
        stop = cb(m, n, last, arg);
    sqlite3_finalize(s);
    free(m);
    if (stop)
        return cs_store_sql_fail(err, errlen, "export: out of memory");
    if (rc != SQLITE_DONE)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the collective instances (damaged?)", cs_store_path(st));
    return 0;
}

int cs_export_waits(cs_store *st, int (*own)(int rank, int64_t t, int64_t wait_ns, void *arg),
                    int (*imposed)(int rank, int64_t t, int64_t sum_ns, void *arg), void *arg, char *err, size_t errlen)
{
    sqlite3 *db = cs_store_sql_db(st);
    if (cs_store_sql_table_exists(db, "waits") != 1 || cs_store_sql_table_exists(db, "instances") != 1)
        return 0;
    static const char own_sql[] =
        "SELECT w.rank, " CS_ALIGNED("s.begin_ns") ", w.wait_ns FROM waits w"
                                                   " JOIN span s ON s.id = w.span LEFT JOIN clocks k ON k.rank = s.rank"
                                                   " WHERE w.wait_ns > 0 ORDER BY w.rank, s.begin_ns";
    static const char imposed_sql[] = "SELECT i.last_rank, i.last_entry_ns, SUM(w.wait_ns) FROM instances i"
                                      " JOIN waits w ON w.comm = i.comm AND w.seq = i.seq"
                                      " WHERE i.last_rank >= 0 GROUP BY i.comm, i.seq"
                                      " ORDER BY i.last_rank, i.last_entry_ns";
    for (int pass = 0; pass < 2; pass++) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(db, pass == 0 ? own_sql : imposed_sql, -1, &s, NULL) != SQLITE_OK)
            return cs_store_sql_fail(err, errlen, "%s: cannot read the waits: %s", cs_store_path(st),
                                     sqlite3_errmsg(db));
        int rc, stop = 0;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            int r = sqlite3_column_int(s, 0);
            int64_t t = sqlite3_column_int64(s, 1), w = sqlite3_column_int64(s, 2);
            if ((stop = (pass == 0 ? own : imposed)(r, t, w, arg)) != 0)
                break;
        }
        sqlite3_finalize(s);
        if (stop)
            return cs_store_sql_fail(err, errlen, "export: out of memory");
        if (rc != SQLITE_DONE)
            return cs_store_sql_fail(err, errlen, "%s: cannot read the waits (damaged?)", cs_store_path(st));
    }
    return 0;
}
