/* store_read.c: the store's read queries (see store.h): processes, ops,
 * spans, completions, communicator members, call sites and their frames,
 * and what the analysis writes back of them (symbols, labels, alignment). */
#include "config.h"
#include "common/vec.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Times, sequence numbers and sizes as read are kept within +-2^61 (73
 * years of nanoseconds), so that any sum or difference of two of them a
 * reader forms fits in 64 bits, whatever a damaged or crafted trace holds. */
#define READ_LIMIT ((int64_t)1 << 61)

static int64_t read_i64(sqlite3_stmt *s, int col)
{
    int64_t v = sqlite3_column_int64(s, col);
    return v > READ_LIMIT ? READ_LIMIT : v < -READ_LIMIT ? -READ_LIMIT : v;
}

static double read_ppm(sqlite3_stmt *s, int col)
{
    double v = sqlite3_column_double(s, col);
    return isfinite(v) && v > -1e6 && v < 1e6 ? v : 0;
}

/* ---- symbols ---- */

int cs_store_frames_unresolved(cs_store *st, int (*cb)(const cs_frame_ref *, void *), void *arg)
{
    /* The module of each frame: the mapping of that rank holding its pc. */
    const char *sql = "SELECT f.rank, f.callsite, f.level, f.pc, m.path, f.pc - m.bias"
                      " FROM frames f LEFT JOIN modules m ON m.rank = f.rank AND f.pc >= m.lo AND f.pc < m.hi"
                      " WHERE f.func IS NULL ORDER BY m.path, f.pc";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        cs_frame_ref f;
        f.rank = sqlite3_column_int(s, 0);
        f.callsite = sqlite3_column_int64(s, 1);
        f.level = sqlite3_column_int(s, 2);
        f.pc = (uint64_t)sqlite3_column_int64(s, 3);
        f.module = (const char *)sqlite3_column_text(s, 4);
        f.offset = (uint64_t)sqlite3_column_int64(s, 5);
        if ((rc = cb(&f, arg)) != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_frame_set_symbol(cs_store *st, int rank, int64_t callsite, int level, const char *func, const char *file,
                              int line)
{
    static const char *sql =
        "UPDATE frames SET func = ?, file = ?, line = ?,"
        " module = (SELECT m.path FROM modules m WHERE m.rank = frames.rank AND frames.pc >= m.lo AND frames.pc < m.hi LIMIT 1),"
        " offset = frames.pc - COALESCE((SELECT m.bias FROM modules m WHERE m.rank = frames.rank AND frames.pc >= m.lo"
        "   AND frames.pc < m.hi LIMIT 1), 0)"
        " WHERE rank = ? AND callsite = ? AND level = ?";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, func ? func : "??", -1, SQLITE_TRANSIENT);
    if (file)
        sqlite3_bind_text(s, 2, file, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 2);
    sqlite3_bind_int(s, 3, line);
    sqlite3_bind_int(s, 4, rank);
    sqlite3_bind_int64(s, 5, callsite);
    sqlite3_bind_int(s, 6, level);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
    return rc;
}

/* Frames inside these objects are not the user's call site. */
static int cs_is_system_module(const char *path)
{
    static const char *const skip[] = { "collscope",   "libmpi",    "libopen-",    "libmpich",     "libnccl",
                                        "libcudart",   "libcuda.",  "libc.so",     "libc-",        "ld-linux",
                                        "libpthread",  "libpmix",   "libucp",      "libuct",       "libfabric",
                                        "python3",     "libpython", "MPI.cpython", "libmpi_mpifh", "libmpi_usempi",
                                        "libgfortran", NULL };
    if (!path)
        return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int i = 0; skip[i]; i++)
        if (strncmp(base, skip[i], strlen(skip[i])) == 0 || strstr(base, skip[i]) == base)
            return 1;
    return 0;
}

int cs_store_label_callsites(cs_store *st)
{
    const char *sql = "SELECT f.rank, f.callsite, f.level, f.func, f.file, f.line, f.module, f.offset FROM frames f"
                      " ORDER BY f.rank, f.callsite, f.level";
    sqlite3_stmt *s, *u;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(st->db, "UPDATE callsites SET label = ? WHERE rank = ? AND id = ?", -1, &u, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(s);
        return -1;
    }
    sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL);
    int cur_rank = INT32_MIN;
    int64_t cur_cs = -1;
    int done = 0, step, ret = 0;
    char first[512] = "";
    while (1) {
        step = sqlite3_step(s);
        int row = step == SQLITE_ROW;
        int rank = row ? sqlite3_column_int(s, 0) : 0;
        int64_t cs = row ? sqlite3_column_int64(s, 1) : 0;
        if (!row || rank != cur_rank || cs != cur_cs) {
            if (cur_cs >= 0 && first[0]) {
                sqlite3_bind_text(u, 1, first, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int(u, 2, cur_rank);
                sqlite3_bind_int64(u, 3, cur_cs);
                if (sqlite3_step(u) != SQLITE_DONE)
                    ret = -1;
                sqlite3_reset(u);
            }
            if (!row || ret != 0)
                break;
            cur_rank = rank;
            cur_cs = cs;
            done = 0;
            first[0] = '\0';
        }
        if (done)
            continue;
        const char *func = (const char *)sqlite3_column_text(s, 3);
        const char *file = (const char *)sqlite3_column_text(s, 4);
        int line = sqlite3_column_int(s, 5);
        const char *mod = (const char *)sqlite3_column_text(s, 6);
        sqlite3_int64 off = sqlite3_column_int64(s, 7);
        if (cs_is_system_module(mod))
            continue;
        const char *mbase = mod ? strrchr(mod, '/') : NULL;
        mbase = mbase ? mbase + 1 : (mod ? mod : "?");
        if (file && *file && line > 0) {
            const char *fb = strrchr(file, '/');
            snprintf(first, sizeof first, "%s:%d %s", fb ? fb + 1 : file, line, func ? func : "??");
        } else if (func && strcmp(func, "??") != 0) {
            snprintf(first, sizeof first, "%s+0x%llx %s", mbase, (unsigned long long)off, func);
        } else {
            snprintf(first, sizeof first, "%s+0x%llx", mbase, (unsigned long long)off);
        }
        done = 1;
    }
    if (step != SQLITE_DONE)
        ret = -1;
    sqlite3_exec(st->db, ret == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(s);
    sqlite3_finalize(u);
    return ret;
}

/* ---- reading ---- */

int cs_store_read_array(sqlite3 *db, const char *sql, size_t size, void (*fill)(sqlite3_stmt *s, void *elem),
                        void *pout, int *n)
{
    void *a = NULL;
    memcpy(pout, &a, sizeof a);
    *n = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return -2;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == INT_MAX || cs_vec_grow(&a, &cap, (size_t)*n + 1, size) != 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        char *elem = (char *)a + (size_t)(*n)++ * size;
        memset(elem, 0, size);
        fill(s, elem);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        free(a);
        a = NULL;
        *n = 0;
    }
    memcpy(pout, &a, sizeof a);
    return rc == SQLITE_DONE ? 0 : -1;
}

static void cs_store_proc_row(sqlite3_stmt *s, void *elem)
{
    cs_proc *p = elem;
    p->rank = sqlite3_column_int(s, 0);
    p->pid = sqlite3_column_int(s, 1);
    cs_store_sql_text(s, 2, p->host, sizeof p->host);
    cs_store_sql_text(s, 3, p->mpi, sizeof p->mpi);
    cs_store_sql_text(s, 4, p->clock, sizeof p->clock);
    cs_store_sql_text(s, 5, p->status, sizeof p->status);
    p->spans = read_i64(s, 6);
    p->dropped = read_i64(s, 7);
    p->start_ns = read_i64(s, 8);
    p->end_ns = read_i64(s, 9);
    p->overhead_ns = read_i64(s, 10);
    p->clock_offset_ns = read_i64(s, 11);
    p->clock_drift_ppm = read_ppm(s, 12);
    p->align_residual_ns = read_i64(s, 13);
}

int cs_store_procs(cs_store *st, cs_proc **out, int *n)
{
    return cs_store_read_array(st->db,
                               "SELECT p.rank, p.pid, p.host, p.mpi, p.clock, p.status, p.spans, p.dropped,"
                               " p.start_ns, p.end_ns, p.overhead_ns, COALESCE(k.offset_ns, 0),"
                               " COALESCE(k.drift_ppm, 0), COALESCE(k.residual_ns, -1)"
                               " FROM processes p LEFT JOIN clocks k ON k.rank = p.rank ORDER BY p.rank, p.pid",
                               sizeof **out, cs_store_proc_row, out, n) == 0
               ? 0
               : -1;
}

int cs_store_set_alignment(cs_store *st, int rank, int64_t offset_ns, double drift_ppm, int64_t residual_ns)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(
            st->db,
            "UPDATE clocks SET offset_ns = ?, drift_ppm = ?, residual_ns = ?,"
            " ref_ns = COALESCE((SELECT MIN(start_ns) FROM processes WHERE processes.rank = clocks.rank), 0)"
            " WHERE rank = ?",
            -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(s, 1, offset_ns);
    sqlite3_bind_double(s, 2, drift_ppm);
    sqlite3_bind_int64(s, 3, residual_ns);
    sqlite3_bind_int(s, 4, rank);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_alignment_get(cs_store *st, cs_clock_row **out, int *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(
            st->db, "SELECT rank, offset_ns, drift_ppm, residual_ns, COALESCE(ref_ns, 0) FROM clocks ORDER BY rank", -1,
            &s, NULL) != SQLITE_OK)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (CS_VEC_RESERVE(*out, cap, (size_t)*n + 1) != 0)
            break;
        cs_clock_row *r = &(*out)[(*n)++];
        r->rank = sqlite3_column_int(s, 0);
        r->offset_ns = sqlite3_column_int64(s, 1);
        r->drift_ppm = sqlite3_column_double(s, 2);
        r->residual_null = sqlite3_column_type(s, 3) == SQLITE_NULL;
        r->residual_ns = sqlite3_column_int64(s, 3);
        r->ref_ns = sqlite3_column_int64(s, 4);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        free(*out);
        *out = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

int cs_store_alignment_put(cs_store *st, const cs_clock_row *rows, int n)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db,
                           "UPDATE clocks SET offset_ns = ?, drift_ppm = ?, residual_ns = ?, ref_ns = ? WHERE rank = ?",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        sqlite3_bind_int64(s, 1, rows[i].offset_ns);
        sqlite3_bind_double(s, 2, rows[i].drift_ppm);
        if (rows[i].residual_null)
            sqlite3_bind_null(s, 3);
        else
            sqlite3_bind_int64(s, 3, rows[i].residual_ns);
        sqlite3_bind_int64(s, 4, rows[i].ref_ns);
        sqlite3_bind_int(s, 5, rows[i].rank);
        rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return rc;
}

int cs_store_ops(cs_store *st, cs_op_row **out, int *n)
{
    sqlite3_stmt *s;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT id, name, kind, nonblocking FROM ops ORDER BY id", -1, &s, NULL) !=
        SQLITE_OK)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int id = sqlite3_column_int(s, 0);
        if (id < 0 || id > 65535)
            continue;
        size_t had = cap;
        if (CS_VEC_RESERVE(*out, cap, (size_t)id + 1) != 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        memset(*out + had, 0, (cap - had) * sizeof **out);
        cs_op_row *o = &(*out)[id];
        o->id = id;
        cs_store_sql_text(s, 1, o->name, sizeof o->name);
        cs_store_sql_text(s, 2, o->kind, sizeof o->kind);
        o->nonblocking = sqlite3_column_int(s, 3);
        if (id + 1 > *n)
            *n = id + 1;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        free(*out);
        *out = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

cs_span_iter *cs_store_spans(cs_store *st, const cs_span_query *q, char *err, size_t errlen)
{
    /* Ties are broken by id, so that a job read through its parts gives
     * the spans in the order of its merged store (cs_store_span_sql). */
    char where[4096] = " WHERE 1";
    size_t w = strlen(where);
    if (q->nskip > 0 && q->nskip <= 256) { /* " AND s.op NOT IN (...)": 12 bytes an op at most */
        w += (size_t)snprintf(where + w, sizeof where - w, " AND s.op NOT IN (");
        for (int i = 0; i < q->nskip; i++)
            w += (size_t)snprintf(where + w, sizeof where - w, "%s%d", i ? "," : "", q->skip_ops[i]);
        w += (size_t)snprintf(where + w, sizeof where - w, ")");
    }
    if (q->order == CS_ORDER_COMM_SEQ)
        w += (size_t)snprintf(where + w, sizeof where - w, " AND s.seq IS NOT NULL");
    if (q->order == CS_ORDER_COMM_SEQ && q->comm)
        w += (size_t)snprintf(where + w, sizeof where - w, " AND s.comm = %lld", (long long)q->comm);
    if (q->order == CS_ORDER_COMM_SEQ && q->comm && q->seq_n > 0)
        w += (size_t)snprintf(where + w, sizeof where - w, " AND s.seq >= %lld AND s.seq < %lld", (long long)q->seq_lo,
                              (long long)(q->seq_lo + q->seq_n));
    if (q->rank >= 0 || q->rank < -1)
        w += (size_t)snprintf(where + w, sizeof where - w, " AND s.rank = %d", q->rank);
    if (q->t1 > 0)
        /* The window applies to raw times shifted by the rank's offset; the
         * (rank, begin_ns) index serves the per-rank case. */
        w += (size_t)snprintf(where + w, sizeof where - w,
                              " AND " CS_ALIGNED("s.end_ns") " >= %lld AND " CS_ALIGNED("s.begin_ns") " < %lld",
                              (long long)q->t0, (long long)q->t1);
    char *sql = cs_store_span_sql(st, 0, where, q->order);
    cs_span_iter *it = cs_store_span_query(st, sql, NULL, NULL, err, errlen);
    sqlite3_free(sql);
    return it;
}

char *cs_store_span_sql(const cs_store *st, int raw, const char *where, int order)
{
    if (st->nparts > 0)
        return cs__store_parts_span_sql(st, raw, order, where);
    const char *by = order == CS_ORDER_COMM_SEQ ? " ORDER BY s.comm, s.seq, s.rank, s.id"
                     : order == CS_ORDER_TIME   ? " ORDER BY s.begin_ns, s.id"
                     : order == CS_ORDER_SEQ    ? " ORDER BY s.seq, s.rank, s.id"
                                                : " ORDER BY s.rank, s.begin_ns, s.id";
    return raw ? sqlite3_mprintf("SELECT " CS_SPAN_COLS_RAW "%s%s", where, by)
               : sqlite3_mprintf("SELECT " CS_SPAN_COLS "%s%s", where, by);
}

cs_span_iter *cs_store_span_query(cs_store *st, const char *sql, void (*bind)(void *stmt, void *arg), void *arg,
                                  char *err, size_t errlen)
{
    cs_span_iter *it = calloc(1, sizeof *it);
    if (!it || !sql) {
        free(it);
        cs_store_sql_fail(err, errlen, "out of memory");
        return NULL;
    }
    if (sqlite3_prepare_v2(st->db, sql, -1, &it->s, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
        free(it);
        return NULL;
    }
    if (bind)
        bind(it->s, arg);
    return it;
}

void cs_store_read_span_row(sqlite3_stmt *s, cs_span *o)
{
    o->id = sqlite3_column_int64(s, 0);
    o->rank = sqlite3_column_int(s, 1);
    o->tid = sqlite3_column_int(s, 2);
    o->op = sqlite3_column_int(s, 3);
    o->comm = sqlite3_column_int64(s, 4);
    o->seq = read_i64(s, 5);
    o->bytes = read_i64(s, 6);
    o->count = read_i64(s, 7);
    o->dtype = sqlite3_column_int(s, 8);
    o->peer = sqlite3_column_int(s, 9);
    o->peer2 = sqlite3_column_int(s, 10);
    o->tag = sqlite3_column_int(s, 11);
    o->req = sqlite3_column_int64(s, 12);
    o->begin_ns = read_i64(s, 13);
    o->end_ns = read_i64(s, 14);
    o->rc = sqlite3_column_int(s, 15);
    o->callsite = sqlite3_column_int64(s, 16);
    o->flags = (uint32_t)sqlite3_column_int64(s, 17);
    o->gpu_begin_ns = read_i64(s, 18);
    o->gpu_end_ns = read_i64(s, 19);
    o->stream = sqlite3_column_int64(s, 20);
    o->grp = sqlite3_column_int64(s, 21);
}

int cs_span_next(cs_span_iter *it, cs_span *o)
{
    int rc = sqlite3_step(it->s);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return -1;
    cs_store_read_span_row(it->s, o);
    return 1;
}

void cs_span_iter_free(cs_span_iter *it)
{
    if (!it)
        return;
    sqlite3_finalize(it->s);
    free(it);
}

int cs_store_completions(cs_store *st, int (*cb)(const cs_completion *, void *), void *arg)
{
    const char *sql =
        "SELECT c.rank, c.req, COALESCE(c.span, 0), COALESCE(c.source, -1), COALESCE(c.tag, -1), " CS_ALIGNED(
            "c.end_ns") " FROM completions c LEFT JOIN clocks k ON k.rank = c.rank";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        cs_completion c = { sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
                            sqlite3_column_int(s, 3), sqlite3_column_int(s, 4),   read_i64(s, 5) };
        if ((rc = cb(&c, arg)) != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_comm_members(cs_store *st, int (*cb)(const cs_comm_member *, void *), void *arg)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT id, rank, comm_rank, size, COALESCE(parent, 0), how, COALESCE(created_ns, 0)"
                           " FROM comms ORDER BY id, comm_rank",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        cs_comm_member m;
        m.comm = sqlite3_column_int64(s, 0);
        m.rank = sqlite3_column_int(s, 1);
        m.comm_rank = sqlite3_column_int(s, 2);
        m.size = sqlite3_column_int(s, 3);
        m.parent = sqlite3_column_int64(s, 4);
        cs_store_sql_text(s, 5, m.how, sizeof m.how);
        m.created_ns = sqlite3_column_int64(s, 6);
        if ((rc = cb(&m, arg)) != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_callsite_label(cs_store *st, int rank, int64_t callsite, char *buf, size_t len)
{
    sqlite3_stmt *s;
    int rc = -1;
    buf[0] = '\0';
    if (sqlite3_prepare_v2(st->db, "SELECT label FROM callsites WHERE rank = ? AND id = ?", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(s, 1, rank);
    sqlite3_bind_int64(s, 2, callsite);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
        cs_store_sql_text(s, 0, buf, len);
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}
