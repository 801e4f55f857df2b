/* export_io.c: the export writers' output buffer, number writers and span
 * scan (export_io.h). */
#include "config.h"
#include "analyzer/formats/export_io.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/store_tables.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#define CS_EXPORT_OUT_CAP (4u << 20)

/* The writes happen on a thread of their own: a full buffer is handed to
 * it and the caller goes on filling the other one. */
struct cs__export_writer {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    FILE *f;
    char *buf; /* the buffer being written, or the spare one */
    size_t len, cap;
    int busy, quit, failed;
    int err; /* errno of the failed write */
};

static void *export_writer(void *arg)
{
    struct cs__export_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->busy && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->busy)
            break;
        pthread_mutex_unlock(&w->mu);
        size_t n = fwrite(w->buf, 1, w->len, w->f);
        pthread_mutex_lock(&w->mu);
        if (n != w->len && !w->failed) {
            w->failed = 1;
            w->err = errno;
        }
        w->busy = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int cs_export_out_init(cs_export_out *o, FILE *f)
{
    memset(o, 0, sizeof *o);
    o->f = f;
    if (!(o->buf = malloc(CS_EXPORT_OUT_CAP)))
        return -1;
    o->cap = CS_EXPORT_OUT_CAP;
    /* Without a writer thread (no memory, no thread), the caller writes. */
    struct cs__export_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->buf = malloc(CS_EXPORT_OUT_CAP))) {
        free(w);
        return 0;
    }
    w->f = f;
    w->cap = CS_EXPORT_OUT_CAP;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->th, NULL, export_writer, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w->buf);
        free(w);
        return 0;
    }
    o->w = w;
    return 0;
}

void cs_export_out_flush(cs_export_out *o)
{
    struct cs__export_writer *w = o->w;
    if (!o->len)
        return;
    if (!w) {
        if (fwrite(o->buf, 1, o->len, o->f) != o->len)
            o->failed = 1;
        o->len = 0;
        return;
    }
    pthread_mutex_lock(&w->mu);
    while (w->busy)
        pthread_cond_wait(&w->cv, &w->mu);
    if (w->failed)
        o->failed = 1;
    char *b = w->buf;
    size_t cap = w->cap;
    w->buf = o->buf;
    w->cap = o->cap;
    w->len = o->len;
    w->busy = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    o->buf = b;
    o->cap = cap;
    o->len = 0;
}

int cs_export_out_done(cs_export_out *o)
{
    struct cs__export_writer *w = o->w;
    if (o->buf)
        cs_export_out_flush(o);
    if (w) {
        pthread_mutex_lock(&w->mu);
        w->quit = 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
        if (w->failed) {
            o->failed = 1;
            errno = w->err; /* for the caller's message */
        }
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w->buf);
        free(w);
        o->w = NULL;
    }
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

/* ---- the pass ---- */

typedef struct cs_export_clock {
    int set;
    int64_t offset, ref;
    double drift;
} cs_export_clock;

typedef struct cs_export_inst {
    int64_t last_entry, sum;
    int32_t last_rank;
    int32_t comm; /* index in the communicators */
    uint8_t complete, waited;
} cs_export_inst;

typedef struct cs_export_comm {
    int64_t id;
    int *ranks; /* world ranks of its members */
    size_t n, cap;
} cs_export_comm;

typedef struct cs_export_pass_st {
    cs_store *st;
    sqlite3 *db;
    cs_export_clock *clocks; /* by rank */
    int nclocks;
    cs_export_comm *comms;
    size_t ncomms, capComms;
    cs_map comm_idx; /* comm id -> index in comms */
    cs_export_inst *inst;
    size_t ninst, capInst;
    cs_map inst_idx; /* comm index << 40 | seq -> index in inst */
    int *peers;      /* scratch: the other members of an instance */
    size_t capPeers;
    sqlite3_stmt *spans, *waits, *sends, *recvs;
} cs_export_pass_st;

/* CS_ALIGNED in C: the same operations in the same order, so the same
 * integer. */
static int64_t export_align(const cs_export_pass_st *p, int rank, int64_t t)
{
    if (rank < 0 || rank >= p->nclocks || !p->clocks[rank].set)
        return t;
    const cs_export_clock *k = &p->clocks[rank];
    return t + k->offset + (int64_t)(k->drift * 1e-6 * (double)(t - k->ref));
}

/* Column i as an integer, or null when NULL: one lookup of the value. */
static int64_t export_col(sqlite3_stmt *s, int i, int64_t null)
{
    sqlite3_value *v = sqlite3_column_value(s, i);
    return sqlite3_value_type(v) == SQLITE_NULL ? null : sqlite3_value_int64(v);
}

static int export_clocks(cs_export_pass_st *p)
{
    sqlite3_stmt *c;
    if (sqlite3_prepare_v2(p->db, "SELECT rank, offset_ns, drift_ppm, ref_ns FROM clocks WHERE rank >= 0", -1, &c,
                           NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(c)) == SQLITE_ROW) {
        int rank = sqlite3_column_int(c, 0);
        if (rank >= p->nclocks) {
            int n = rank + 1;
            cs_export_clock *k = realloc(p->clocks, (size_t)n * sizeof *k);
            if (!k) {
                rc = SQLITE_NOMEM;
                break;
            }
            memset(k + p->nclocks, 0, (size_t)(n - p->nclocks) * sizeof *k);
            p->clocks = k;
            p->nclocks = n;
        }
        p->clocks[rank] = (cs_export_clock){ .set = 1,
                                             .offset = sqlite3_column_int64(c, 1),
                                             .drift = sqlite3_column_double(c, 2),
                                             .ref = sqlite3_column_int64(c, 3) };
    }
    sqlite3_finalize(c);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The index of communicator id (added when new); -1 when out of memory. */
static int64_t export_comm(cs_export_pass_st *p, int64_t id)
{
    int64_t i;
    if (cs_map_get(&p->comm_idx, (uint64_t)id, &i))
        return i;
    if (CS_VEC_RESERVE(p->comms, p->capComms, p->ncomms + 1) != 0 ||
        cs_map_put(&p->comm_idx, (uint64_t)id, (int64_t)p->ncomms) != 0)
        return -1;
    p->comms[p->ncomms] = (cs_export_comm){ .id = id };
    return (int64_t)p->ncomms++;
}

static int export_member_cb(const cs_comm_member *m, void *arg)
{
    cs_export_pass_st *p = arg;
    int64_t i = export_comm(p, m->comm);
    if (i < 0)
        return -1;
    cs_export_comm *c = &p->comms[i];
    if (CS_VEC_RESERVE(c->ranks, c->cap, c->n + 1) != 0)
        return -1;
    c->ranks[c->n++] = m->rank;
    return 0;
}

static uint64_t export_inst_key(int64_t comm_idx, int64_t seq)
{
    return ((uint64_t)comm_idx << 40) ^ ((uint64_t)seq & 0xffffffffffull);
}

/* The instances whose last rank is known, complete when every member of
 * the communicator reached it. */
static int export_instances(cs_export_pass_st *p)
{
    if (cs_store_comm_members(p->st, export_member_cb, p) != 0)
        return -1;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(p->db,
                           "SELECT comm, seq, last_rank, last_entry_ns, nranks, expected FROM instances"
                           " WHERE last_rank >= 0",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t ci = export_comm(p, sqlite3_column_int64(s, 0));
        if (ci < 0 || CS_VEC_RESERVE(p->inst, p->capInst, p->ninst + 1) != 0 ||
            cs_map_put(&p->inst_idx, export_inst_key(ci, sqlite3_column_int64(s, 1)), (int64_t)p->ninst) != 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        int nranks = sqlite3_column_int(s, 4), expected = sqlite3_column_int(s, 5);
        p->inst[p->ninst++] =
            (cs_export_inst){ .last_rank = sqlite3_column_int(s, 2),
                              .last_entry = sqlite3_column_int64(s, 3),
                              .comm = (int32_t)ci,
                              .complete = nranks == expected && (size_t)nranks == p->comms[ci].n && nranks > 1 };
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The next row of a statement ordered by its first column, a span id:
 * *at is that id (INT64_MAX at the end); -1 on a read error. */
static int export_advance(sqlite3_stmt *s, int64_t *at)
{
    if (!s) {
        *at = INT64_MAX;
        return 0;
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *at = sqlite3_column_int64(s, 0);
        return 0;
    }
    *at = INT64_MAX;
    return rc == SQLITE_DONE ? 0 : -1;
}

static int export_prepare(cs_export_pass_st *p, const char *table, const char *sql, sqlite3_stmt **s)
{
    *s = NULL;
    if (table && cs_store_sql_table_exists(p->db, table) != 1)
        return 0;
    return sqlite3_prepare_v2(p->db, sql, -1, s, NULL) == SQLITE_OK ? 0 : -1;
}

static int export_imposed_cmp(const void *a, const void *b, void *arg)
{
    const cs_export_inst *x = &((const cs_export_inst *)arg)[*(const size_t *)a];
    const cs_export_inst *y = &((const cs_export_inst *)arg)[*(const size_t *)b];
    if (x->last_rank != y->last_rank)
        return x->last_rank < y->last_rank ? -1 : 1;
    return x->last_entry < y->last_entry ? -1 : x->last_entry > y->last_entry;
}

/* The span at the current row of p->spans. */
static void export_span_row(const cs_export_pass_st *p, cs_span *o)
{
    sqlite3_stmt *s = p->spans;
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
    o->begin_ns = export_align(p, o->rank, sqlite3_column_int64(s, 10));
    o->end_ns = export_align(p, o->rank, sqlite3_column_int64(s, 11));
    o->rc = sqlite3_column_int(s, 12);
    o->callsite = sqlite3_column_int64(s, 13);
    o->flags = (uint32_t)sqlite3_column_int64(s, 14);
    sqlite3_value *gb = sqlite3_column_value(s, 15), *ge = sqlite3_column_value(s, 16);
    if (sqlite3_value_type(gb) != SQLITE_NULL)
        o->gpu_begin_ns = export_align(p, o->rank, sqlite3_value_int64(gb));
    if (sqlite3_value_type(ge) != SQLITE_NULL)
        o->gpu_end_ns = export_align(p, o->rank, sqlite3_value_int64(ge));
    o->stream = export_col(s, 17, -1);
}

/* The links of span sp from the merged cursors (at: each one's span id). */
static int export_links(cs_export_pass_st *p, const cs_span *sp, int64_t at[3], cs_export_links *ln)
{
    memset(ln, 0, sizeof *ln);
    int rc = 0;
    while (rc == 0 && at[0] < sp->id)
        rc = export_advance(p->waits, &at[0]);
    while (rc == 0 && at[1] < sp->id)
        rc = export_advance(p->sends, &at[1]);
    while (rc == 0 && at[2] < sp->id)
        rc = export_advance(p->recvs, &at[2]);
    if (rc != 0)
        return -1;
    if (at[1] == sp->id)
        ln->p2p_out = (uint64_t)sp->id;
    if (at[2] == sp->id)
        ln->p2p_in = (uint64_t)sqlite3_column_int64(p->recvs, 1);
    if (at[0] != sp->id)
        return 0;
    /* waits: span, wait_ns, comm, seq */
    int64_t wait = sqlite3_column_int64(p->waits, 1), ci, ii;
    ln->wait_ns = wait > 0 ? wait : 0;
    if (!cs_map_get(&p->comm_idx, (uint64_t)sqlite3_column_int64(p->waits, 2), &ci) ||
        !cs_map_get(&p->inst_idx, export_inst_key(ci, sqlite3_column_int64(p->waits, 3)), &ii))
        return 0; /* an instance whose last rank is not known */
    cs_export_inst *x = &p->inst[ii];
    x->sum += wait;
    x->waited = 1;
    if (!x->complete)
        return 0;
    ln->coll = 1;
    ln->coll_inst = (uint64_t)ii;
    ln->coll_last = x->last_rank == sp->rank;
    if (ln->coll_last) {
        const cs_export_comm *c = &p->comms[x->comm];
        if (CS_VEC_RESERVE(p->peers, p->capPeers, c->n) != 0)
            return -2;
        for (size_t i = 0; i < c->n; i++)
            if (c->ranks[i] != sp->rank)
                p->peers[ln->npeers++] = c->ranks[i];
        ln->peers = p->peers;
    }
    return 0;
}

/* The pass runs in two threads: a reader steps the statements and merges
 * the links into batches of spans, the caller's thread writes them, so
 * that SQLite and the formatting run on two cores. */
#define CS_EXPORT_BATCH 4096
#define CS_EXPORT_NBATCH 4

typedef struct cs_export_item {
    cs_span sp;
    cs_export_links ln;
    size_t peers_at; /* ln.peers: the batch's pool from here */
} cs_export_item;

typedef struct cs_export_batch {
    cs_export_item it[CS_EXPORT_BATCH];
    size_t n;
    int *pool;
    size_t npool, capPool;
} cs_export_batch;

typedef struct cs_export_pipe {
    cs_export_pass_st *p;
    cs_export_batch *b; /* CS_EXPORT_NBATCH of them, a ring */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t produced, consumed;
    int done;   /* the reader has finished */
    int status; /* the reader's: 0, -1 a read error, -2 out of memory */
    int stop;   /* the writer gave up */
} cs_export_pipe;

static void *export_reader(void *arg)
{
    cs_export_pipe *q = arg;
    cs_export_pass_st *p = q->p;
    int64_t at[3] = { -1, -1, -1 };
    int step = SQLITE_ROW, status = 0;
    while (step == SQLITE_ROW && status == 0) {
        pthread_mutex_lock(&q->mu);
        while (q->produced - q->consumed == CS_EXPORT_NBATCH && !q->stop)
            pthread_cond_wait(&q->cv, &q->mu);
        int stop = q->stop;
        pthread_mutex_unlock(&q->mu);
        if (stop)
            break;
        cs_export_batch *b = &q->b[q->produced % CS_EXPORT_NBATCH];
        b->n = b->npool = 0;
        while (b->n < CS_EXPORT_BATCH && (step = sqlite3_step(p->spans)) == SQLITE_ROW) {
            cs_export_item *x = &b->it[b->n];
            export_span_row(p, &x->sp);
            int l = export_links(p, &x->sp, at, &x->ln);
            if (l == 0 && x->ln.npeers > 0 && CS_VEC_RESERVE(b->pool, b->capPool, b->npool + x->ln.npeers) != 0)
                l = -2;
            if (l != 0) {
                status = l;
                break;
            }
            if (x->ln.npeers > 0) {
                memcpy(b->pool + b->npool, x->ln.peers, x->ln.npeers * sizeof *b->pool);
                x->peers_at = b->npool;
                b->npool += x->ln.npeers;
            }
            b->n++;
        }
        if (status == 0 && step != SQLITE_ROW && step != SQLITE_DONE)
            status = -1;
        pthread_mutex_lock(&q->mu);
        q->produced++;
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
    }
    pthread_mutex_lock(&q->mu);
    q->status = status;
    q->done = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Run the reader and hand its spans to span(): 0, 1 when span() stopped
 * the pass, -1 on a read error, -2 when out of memory. */
static int export_pipe(cs_export_pass_st *p, int (*span)(const cs_span *sp, const cs_export_links *ln, void *arg),
                       void *arg)
{
    cs_export_pipe q = { .p = p };
    pthread_t th;
    if (!(q.b = calloc(CS_EXPORT_NBATCH, sizeof *q.b)))
        return -2;
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.cv, NULL);
    int rc = 0;
    if (pthread_create(&th, NULL, export_reader, &q) != 0) {
        rc = -2;
        goto out;
    }
    for (;;) {
        pthread_mutex_lock(&q.mu);
        while (q.produced == q.consumed && !q.done)
            pthread_cond_wait(&q.cv, &q.mu);
        int empty = q.produced == q.consumed;
        pthread_mutex_unlock(&q.mu);
        if (empty)
            break;
        cs_export_batch *b = &q.b[q.consumed % CS_EXPORT_NBATCH];
        for (size_t i = 0; i < b->n && rc == 0; i++) {
            cs_export_item *x = &b->it[i];
            x->ln.peers = x->ln.npeers > 0 ? b->pool + x->peers_at : NULL;
            if (span(&x->sp, &x->ln, arg) != 0)
                rc = 1;
        }
        pthread_mutex_lock(&q.mu);
        q.consumed++;
        if (rc != 0)
            q.stop = 1;
        pthread_cond_broadcast(&q.cv);
        pthread_mutex_unlock(&q.mu);
        if (rc != 0)
            break;
    }
    pthread_join(th, NULL);
    if (rc == 0)
        rc = q.status;
out:
    pthread_mutex_destroy(&q.mu);
    pthread_cond_destroy(&q.cv);
    for (int i = 0; i < CS_EXPORT_NBATCH; i++)
        free(q.b[i].pool);
    free(q.b);
    return rc;
}

int cs_export_pass(cs_store *st, int (*span)(const cs_span *sp, const cs_export_links *ln, void *arg),
                   int (*imposed)(int rank, int64_t t, int64_t sum_ns, void *arg), void *arg, char *err, size_t errlen)
{
    cs_export_pass_st p = { .st = st, .db = cs_store_sql_db(st) };
    size_t *order = NULL;
    int rc = -1;
    int analysed = cs_store_sql_table_exists(p.db, "instances") == 1;
    /* No COALESCE: NULL is told apart in C only where it means more than 0.
     * The span table in its own order: no index, no sort. */
    if (export_clocks(&p) != 0 || (analysed && export_instances(&p) != 0) ||
        export_prepare(&p, NULL,
                       "SELECT id, rank, tid, op, comm, seq, bytes, peer, peer2, tag, begin_ns, end_ns, rc, callsite,"
                       " flags, gpu_begin_ns, gpu_end_ns, stream FROM span ORDER BY id",
                       &p.spans) != 0 ||
        (analysed &&
         export_prepare(&p, "waits", "SELECT span, wait_ns, comm, seq FROM waits ORDER BY span", &p.waits) != 0) ||
        export_prepare(&p, "p2p", "SELECT send_span, recv_span FROM p2p ORDER BY send_span", &p.sends) != 0 ||
        export_prepare(&p, "p2p", "SELECT recv_span, send_span FROM p2p ORDER BY recv_span", &p.recvs) != 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read the spans and their analysis: %s", cs_store_path(st),
                          sqlite3_errmsg(p.db));
        goto out;
    }
    int piped = export_pipe(&p, span, arg);
    if (piped == 1 || piped == -2) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        goto out;
    }
    if (piped != 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read the spans (damaged?)", cs_store_path(st));
        goto out;
    }
    if (p.ninst > 0 && !(order = malloc(p.ninst * sizeof *order))) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < p.ninst; i++)
        if (p.inst[i].waited)
            order[n++] = i;
    if (n > 0)
        qsort_r(order, n, sizeof *order, export_imposed_cmp, p.inst);
    for (size_t i = 0; i < n; i++) {
        const cs_export_inst *x = &p.inst[order[i]];
        if (imposed(x->last_rank, x->last_entry, x->sum, arg) != 0) {
            cs_store_sql_fail(err, errlen, "export: out of memory");
            goto out;
        }
    }
    rc = 0;
out:
    sqlite3_finalize(p.spans);
    sqlite3_finalize(p.waits);
    sqlite3_finalize(p.sends);
    sqlite3_finalize(p.recvs);
    free(order);
    free(p.clocks);
    for (size_t i = 0; i < p.ncomms; i++)
        free(p.comms[i].ranks);
    free(p.comms);
    free(p.inst);
    free(p.peers);
    cs_map_free(&p.comm_idx);
    cs_map_free(&p.inst_idx);
    return rc;
}
