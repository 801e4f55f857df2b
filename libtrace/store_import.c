/* store_import.c: converting one process log (log.h) into a store: the
 * per-rank file the preload writes at exit and `collscope ingest` makes
 * of logs left behind (see store.h). */
#include "config.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/dtypes.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const cs_comm_how_names[] = { "",       "world", "self", "dup",       "split",
                                                 "create", "other", "nccl", "nccl_split" };

typedef struct cs_calpt {
    uint64_t ticks;
    int64_t mono;
    int64_t real;
} cs_calpt;

typedef struct cs_conv {
    int tsc;
    double tpn;   /* ticks per ns when points are too few */
    int64_t base; /* real - mono at the first point */
    cs_calpt *pt;
    size_t n;
} cs_conv;

/* Times of a damaged log may be anything: sums and differences saturate
 * instead of overflowing. */
static int64_t cs_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}
static int64_t cs_sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}
static int64_t cs_sat_of_double(double d)
{
    if (!(d == d))
        return 0;
    if (d >= 9.2e18)
        return INT64_MAX;
    if (d <= -9.2e18)
        return INT64_MIN;
    return (int64_t)d;
}

static int cs_calpt_cmp(const void *a, const void *b)
{
    const cs_calpt *x = a, *y = b;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* Keep points at least 20 ms apart (and the last), so slopes are good. */
static void cs_conv_prepare(cs_conv *cv)
{
    if (cv->n == 0)
        return;
    qsort(cv->pt, cv->n, sizeof *cv->pt, cs_calpt_cmp);
    cv->base = cs_sat_sub(cv->pt[0].real, cv->pt[0].mono);
    if (!cv->tsc)
        return;
    size_t k = 1;
    for (size_t i = 1; i < cv->n; i++) {
        int last = i == cv->n - 1;
        int64_t gap = cs_sat_sub(cv->pt[i].mono, cv->pt[k - 1].mono);
        if (gap >= 20000000 || (last && gap >= 2000000))
            cv->pt[k++] = cv->pt[i];
    }
    cv->n = k;
}

static int64_t cs_conv_ns(const cs_conv *cv, uint64_t t)
{
    if (!cv->tsc || cv->n == 0)
        return (int64_t)((uint64_t)t + (uint64_t)cv->base); /* a clock in ns: wraps like the writer's */
    if (cv->n == 1) {
        double d = ((double)t - (double)cv->pt[0].ticks) / cv->tpn;
        return cs_sat_add(cs_sat_add(cv->pt[0].mono, cs_sat_of_double(d)), cv->base);
    }
    /* The segment containing t (or the nearest one, to extrapolate). */
    size_t lo = 0, hi = cv->n - 1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (cv->pt[mid].ticks <= t)
            lo = mid;
        else
            hi = mid;
    }
    const cs_calpt *a = &cv->pt[lo], *b = &cv->pt[hi];
    double slope = ((double)b->mono - (double)a->mono) / ((double)b->ticks - (double)a->ticks);
    double d = ((double)t - (double)a->ticks) * slope;
    return cs_sat_add(cs_sat_add(a->mono, cs_sat_of_double(d)), cv->base);
}

typedef struct cs_pending {
    uint16_t tid;
    cs_rec_done done;
    int is_done; /* 0: a counters record */
    cs_rec_counters ctr;
} cs_pending;

/* The last spans of each thread. An MPI call's span slot is claimed when the
 * call begins (cs_log_hold), so what the call writes while it runs (its
 * counters, the completions it saw, a fused call it started) comes AFTER
 * its span in the log; NCCL/CUDA spans are written when the call ends,
 * after their counters. Completions name their call (op and begin ticks)
 * and counters written after their span say so (CS_CTR_AFTER): both are
 * attached to the right span, whichever side of it they are. */
#define CS_RECENT 8
#define CS_RECENT_THREADS 64
typedef struct cs_recent {
    uint16_t tid, n;
    unsigned pos;
    struct {
        sqlite3_int64 id;
        uint16_t op;
        uint64_t t0;
    } s[CS_RECENT];
} cs_recent;

static cs_recent *cs_recent_of(cs_recent *rt, int *nrt, uint16_t tid)
{
    for (int i = 0; i < *nrt; i++)
        if (rt[i].tid == tid)
            return &rt[i];
    if (*nrt == CS_RECENT_THREADS)
        return NULL;
    cs_recent *r = &rt[(*nrt)++];
    memset(r, 0, sizeof *r);
    r->tid = tid;
    return r;
}

static void cs_recent_add(cs_recent *r, sqlite3_int64 id, uint16_t op, uint64_t t0)
{
    if (!r)
        return;
    r->pos = (r->pos + 1) % CS_RECENT;
    r->s[r->pos].id = id;
    r->s[r->pos].op = op;
    r->s[r->pos].t0 = t0;
    if (r->n < CS_RECENT)
        r->n++;
}

/* The span of the completion call that wrote d, among the thread's recent
 * ones; 0 when not there (an older log: its span comes next). */
static sqlite3_int64 cs_recent_done(const cs_recent *r, const cs_rec_done *d)
{
    if (!r)
        return 0;
    for (unsigned k = 0; k < r->n; k++) {
        unsigned i = (r->pos + CS_RECENT - k) % CS_RECENT;
        if (r->s[i].op == d->op && r->s[i].t0 == d->t0)
            return r->s[i].id;
    }
    return 0;
}

/* Rows of one table inserted CS_BATCH_ROWS at a time by one multi-row
 * INSERT: a statement's fixed cost (cursor, transaction checks) is paid
 * once per batch, not once per row. Integer columns only; a row's NULLs
 * are bits of `nul`. The last, short batch goes row by row. */
#define CS_BATCH_ROWS 64
#define CS_BATCH_COLS 24
typedef struct cs_batch {
    sqlite3_stmt *many, *one;
    int ncol, n, bad; /* bad: a batch failed (cs_put_done checks it late) */
    /* On the heap: the preload converts its log at exit on whatever
     * thread ends the program, whose stack may be small. */
    int64_t (*v)[CS_BATCH_COLS]; /* [CS_BATCH_ROWS] */
    uint32_t nul[CS_BATCH_ROWS];
} cs_batch;

/* `head` is "INSERT INTO t(c1, ..., cN) VALUES". */
static int cs_batch_prepare(sqlite3 *db, cs_batch *b, const char *head, int ncol)
{
    memset(b, 0, sizeof *b);
    b->ncol = ncol;
    b->v = malloc(CS_BATCH_ROWS * sizeof *b->v);
    if (!b->v)
        return -1;
    size_t hl = strlen(head), rowl = 2 + 2 * (size_t)ncol, cap = hl + rowl * CS_BATCH_ROWS + 1;
    char *sql = malloc(cap);
    if (!sql)
        return -1;
    memcpy(sql, head, hl);
    char *w = sql + hl;
    for (int r = 0; r < CS_BATCH_ROWS; r++) {
        *w++ = r ? ',' : ' ';
        *w++ = '(';
        for (int c = 0; c < ncol; c++) {
            *w++ = '?';
            *w++ = c + 1 < ncol ? ',' : ')';
        }
    }
    *w = 0;
    int rc = sqlite3_prepare_v2(db, sql, -1, &b->many, NULL) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, sql, (int)(hl + rowl), &b->one, NULL) == SQLITE_OK
                 ? 0
                 : -1;
    free(sql);
    return rc;
}

/* Parameters are NULL after prepare and after each step (cleared then):
 * only a row's values are bound. */
static void cs_batch_bind(sqlite3_stmt *s, const cs_batch *b, int row, int base)
{
    for (int c = 0; c < b->ncol; c++)
        if (!(b->nul[row] >> c & 1))
            sqlite3_bind_int64(s, base + c + 1, b->v[row][c]);
}

static int cs_batch_flush(cs_batch *b)
{
    int ok = 1;
    if (b->n == CS_BATCH_ROWS) {
        for (int r = 0; r < b->n; r++)
            cs_batch_bind(b->many, b, r, r * b->ncol);
        ok = sqlite3_step(b->many) == SQLITE_DONE;
        sqlite3_reset(b->many);
        sqlite3_clear_bindings(b->many);
    } else {
        for (int r = 0; r < b->n && ok; r++) {
            cs_batch_bind(b->one, b, r, 0);
            ok = sqlite3_step(b->one) == SQLITE_DONE;
            sqlite3_reset(b->one);
            sqlite3_clear_bindings(b->one);
        }
    }
    b->n = 0;
    if (!ok)
        b->bad = 1;
    return ok ? 0 : -1;
}

/* The next row to fill: all columns NULL until set. */
static int64_t *cs_batch_row(cs_batch *b)
{
    b->nul[b->n] = (1u << b->ncol) - 1;
    return b->v[b->n];
}

static inline void cs_batch_set(cs_batch *b, int col, int64_t v)
{
    b->v[b->n][col] = v;
    b->nul[b->n] &= ~(1u << col);
}

static int cs_batch_put(cs_batch *b)
{
    return ++b->n == CS_BATCH_ROWS ? cs_batch_flush(b) : 0;
}

static void cs_batch_free(cs_batch *b)
{
    sqlite3_finalize(b->many);
    sqlite3_finalize(b->one);
    free(b->v);
    b->many = b->one = NULL;
    b->v = NULL;
}

static void cs_put_done(cs_batch *d, int rank, const cs_rec_done *x, sqlite3_int64 span, int64_t end_ns)
{
    cs_batch_row(d);
    cs_batch_set(d, 0, rank);
    cs_batch_set(d, 1, x->req);
    cs_batch_set(d, 2, span);
    cs_batch_set(d, 3, x->source);
    cs_batch_set(d, 4, x->tag);
    cs_batch_set(d, 5, end_ns);
    cs_batch_put(d);
}

static void cs_put_counters(sqlite3_stmt *c, const char *events, const cs_rec_counters *x, sqlite3_int64 span)
{
    char names[256];
    snprintf(names, sizeof names, "%s", events);
    char *save = NULL;
    int k = 0;
    for (char *ev = strtok_r(names, ",", &save); ev && k < x->n && k < CS_COUNTERS_MAX;
         ev = strtok_r(NULL, ",", &save), k++) {
        sqlite3_bind_int64(c, 1, span);
        sqlite3_bind_text(c, 2, ev, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(c, 3, (sqlite3_int64)x->v[k]);
        sqlite3_step(c);
        sqlite3_reset(c);
    }
}

/* GPU times of a process by correlation id (GPUTIME records; algo: what
 * the NCCL profiler plugin reported, source 2). */
typedef struct cs_gt {
    uint64_t corr, g0, g1;
    uint32_t algo;
} cs_gt;

static int cs_gt_cmp(const void *a, const void *b)
{
    const cs_gt *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static const cs_gt *cs_gt_find(const cs_gt *a, size_t n, uint64_t corr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && a[lo].corr == corr ? &a[lo] : NULL;
}

/* One nccl_coll row: what NCCL's profiler plugin said of span `id`. */
static int cs_import_nccl_coll(sqlite3_stmt *s, sqlite3_int64 id, const cs_gt *np, const cs_conv *cv)
{
    static const char *const algos[] = { CS_NP_ALGOS }, *const protos[] = { CS_NP_PROTOS };
    unsigned a = CS_NP_ALGO(np->algo), p = CS_NP_PROTO(np->algo);
    sqlite3_bind_int64(s, 1, id);
    if (a == 0)
        sqlite3_bind_null(s, 2);
    else
        sqlite3_bind_text(s, 2, a <= sizeof algos / sizeof *algos ? algos[a - 1] : "other", -1, SQLITE_STATIC);
    if (p == 0)
        sqlite3_bind_null(s, 3);
    else
        sqlite3_bind_text(s, 3, p <= sizeof protos / sizeof *protos ? protos[p - 1] : "other", -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 4, (int)CS_NP_NCH(np->algo));
    if (np->g0) {
        int64_t gb = cs_conv_ns(cv, np->g0), ge = cs_conv_ns(cv, np->g1);
        sqlite3_bind_int64(s, 5, gb);
        sqlite3_bind_int64(s, 6, ge < gb ? gb : ge);
    } else {
        sqlite3_bind_null(s, 5);
        sqlite3_bind_null(s, 6);
    }
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_reset(s);
    return rc;
}

/* The SPANX record a thread wrote before its next span. */
typedef struct cs_xpend {
    uint16_t tid;
    int have;
    cs_rec_spanx x;
} cs_xpend;

static int cs_read_modules(cs_store *st, const char *log_path, int rank)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s", log_path);
    char *dot = strrchr(path, '.');
    if (dot && strcmp(dot, ".cslog") == 0)
        *dot = '\0';
    strncat(path, ".modules", sizeof path - strlen(path) - 1);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "INSERT INTO modules(rank, lo, hi, bias, path) VALUES(?,?,?,?,?)", -1, &s, NULL) !=
        SQLITE_OK) {
        fclose(f);
        return -1;
    }
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, bias;
        char mpath[PATH_MAX];
        if (sscanf(line, "%llx %llx %llx %4095[^\n]", &lo, &hi, &bias, mpath) != 4)
            continue;
        sqlite3_bind_int(s, 1, rank);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)lo);
        sqlite3_bind_int64(s, 3, (sqlite3_int64)hi);
        sqlite3_bind_int64(s, 4, (sqlite3_int64)bias);
        sqlite3_bind_text(s, 5, mpath, -1, SQLITE_TRANSIENT);
        sqlite3_step(s);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    fclose(f);
    return 0;
}

enum { Q_COMM, Q_NAME, Q_CS, Q_FRAME, Q_CTR, Q_ACT, Q_NCOLL, Q_HANG, Q_GUARD, Q_N };
#define CS_SPAN_INSERT_HEAD                                                                      \
    "INSERT INTO span(id, rank, tid, op, comm, seq, bytes, dtype, count, peer, peer2, tag, req," \
    " begin_ns, end_ns, rc, callsite, flags, stream, grp, redop, corr, gpu_begin_ns, gpu_end_ns) VALUES"
#define CS_DONE_INSERT_HEAD "INSERT INTO completions(rank, req, span, source, tag, end_ns) VALUES"
static const char *const cs_import_sql[Q_N] = {
    [Q_COMM] = "INSERT OR REPLACE INTO comms(id, rank, local, comm_rank, size, parent, how, created_ns, color, key)"
               " VALUES(?,?,?,?,?,?,?,?,?,?)",
    [Q_NAME] = "UPDATE comms SET name = ? WHERE id = ? AND rank = ?",
    [Q_CS] = "INSERT OR REPLACE INTO callsites(rank, id, depth, label) VALUES(?,?,?,NULL)",
    [Q_FRAME] = "INSERT OR REPLACE INTO frames(rank, callsite, level, pc) VALUES(?,?,?,?)",
    [Q_CTR] = "INSERT INTO counters(span, event, value) VALUES(?,?,?)",
    [Q_ACT] = "INSERT INTO gpu_activity(rank, kind, name, stream, corr, begin_ns, end_ns, bytes, device)"
              " VALUES(?,?,?,?,?,?,?,?,?)",
    [Q_NCOLL] = "INSERT INTO nccl_coll(span, algo, proto, nchannels, gpu_begin_ns, gpu_end_ns) VALUES(?,?,?,?,?,?)",
    [Q_HANG] = "INSERT INTO hangs(rank, pid, tid, ktid, reason, action, op, comm, seq, peer, tag, bytes, since_ns,"
               " detected_ns, stack, callsite) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [Q_GUARD] = "INSERT INTO fuse_guard(rank, comm, what, window, setting, buffer, time_ns, calls, why, unfused_ns,"
                " chosen_ns, ratio, at_ns, wall_ns, family) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
};

/* Each rank's spans take ids in their own range of 2^36; a log whose
 * rank (or pid, when the rank is unknown) is 2^26 or more, or negative,
 * is refused. */
#define CS_SPAN_ID_RANGE ((sqlite3_int64)1 << 36)
#define CS_IMPORT_RANK_MAX (1 << 26)
static sqlite3_int64 cs_span_id_base(int rank)
{
    return rank >= 0 ? (sqlite3_int64)rank * CS_SPAN_ID_RANGE
                     : -((sqlite3_int64)(-(int64_t)rank) + 1) * CS_SPAN_ID_RANGE;
}

/* A name set on a communicator, assembled from its COMMNAME records. */
typedef struct cs_import_name {
    uint64_t id, t0;
    char text[CS_COMMNAME_MAX + 1];
} cs_import_name;

/* Local communicator indexes above this are damage, not communicators. */
#define CS_IMPORT_MAX_COMMS (1u << 20)

/* One conversion: what its two passes over the log share. */
typedef struct cs_import {
    cs_store *st;
    const char *log_path;
    cs_import_stats *stats;
    char *err;
    size_t errlen;
    cs_log_header h;
    int rank;
    /* pass 1 */
    cs_conv cv;
    size_t cappt;
    uint64_t *comm_id; /* local communicator index -> job-wide id */
    size_t ncomm, capcomm;
    /* pass 2: the latest name set on each communicator (COMMNAME) */
    cs_import_name *names;
    size_t nname, capname;
    cs_map name_idx;         /* job-wide id -> index in names */
    cs_gt *gts, *acts, *nps; /* GPU times: CUDA events, CUPTI, NCCL profiler */
    size_t ngt, capgt, nact, capact, nnp, capnp;
    cs_gt *gfl; /* GPU work in flight (GPUPEND; g0 its begin when it started) */
    size_t ngfl, capgfl;
    /* pass 2 */
    sqlite3_stmt *q[Q_N];
    cs_batch bs, bd; /* spans, completions */
    cs_xpend xp[64];
    int nxp;
    /* Completions and counters that precede the span of their thread that
     * owns them are held per thread until it comes (see cs_recent). */
    cs_pending *pend;
    size_t npend, cappend;
    cs_recent recent[CS_RECENT_THREADS];
    int nrecent;
    sqlite3_int64 next_id, first_id;
    int auto_id;
    int64_t tmin, tmax;
    uint64_t last_tick; /* the latest time the log recorded (raw ticks): a call in flight ends there */
} cs_import;

static int import_oom(cs_import *im)
{
    return cs_store_sql_fail(im->err, im->errlen, "%s: out of memory", im->log_path);
}

static int import_sql_error(cs_import *im)
{
    cs__store_sql_note(im->st->db);
    return cs_store_sql_fail(im->err, im->errlen, "%s: %s", im->st->path, sqlite3_errmsg(im->st->db));
}

/* Step an insert statement and reset it; 0, or -1 with the reason. */
static int import_step(cs_import *im, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : import_sql_error(im);
}

static int import_gt_add(cs_gt **pa, size_t *pn, size_t *pcap, cs_gt g)
{
    if (CS_VEC_RESERVE(*pa, *pcap, *pn + 1) != 0)
        return -1;
    (*pa)[(*pn)++] = g;
    return 0;
}

/* Pass 1: calibration points, communicator definitions and GPU times, which
 * spans written before them need. */
static int import_scan(cs_import *im, cs_logr *lr)
{
    const cs_rec *r;
    while ((r = cs_logr_next(lr)) != NULL) {
        uint32_t kind = CS_REC_KIND(r->hdr);
        if (kind == CS_REC_SPAN && r->t1 > im->last_tick)
            im->last_tick = r->t1;
        else if (kind == CS_REC_INFLIGHT && r->t0 > im->last_tick)
            im->last_tick = r->t0;
        else if (kind == CS_REC_HANG && ((const cs_rec_hang *)r)->detected > im->last_tick)
            im->last_tick = ((const cs_rec_hang *)r)->detected;
        if (kind == CS_REC_GPUPEND) {
            /* the latest note of each: begun once its begin event completed */
            const cs_rec_gpupend *g = (const cs_rec_gpupend *)r;
            if (g->at > im->last_tick)
                im->last_tick = g->at;
            if (import_gt_add(&im->gfl, &im->ngfl, &im->capgfl, (cs_gt){ g->corr, g->begun ? g->g0 : 0, 0, 0 }))
                return import_oom(im);
        } else if (kind == CS_REC_CALIB) {
            const cs_rec_calib *c = (const cs_rec_calib *)r;
            if (CS_VEC_RESERVE(im->cv.pt, im->cappt, im->cv.n + 1) != 0)
                return import_oom(im);
            im->cv.pt[im->cv.n++] = (cs_calpt){ c->ticks, c->mono_ns, c->real_ns };
            im->stats->calibs++;
        } else if (kind == CS_REC_COMMDEF) {
            const cs_rec_comm *c = (const cs_rec_comm *)r;
            if (c->local >= CS_IMPORT_MAX_COMMS) {
                im->stats->bad_records++; /* no process makes that many: a damaged record */
                continue;
            }
            if (c->local >= im->ncomm) {
                size_t nn = (size_t)c->local + 1;
                if (CS_VEC_RESERVE(im->comm_id, im->capcomm, nn) != 0)
                    return import_oom(im);
                memset(im->comm_id + im->ncomm, 0, (nn - im->ncomm) * sizeof *im->comm_id);
                im->ncomm = nn;
            }
            im->comm_id[c->local] = c->id;
        } else if (kind == CS_REC_GPUTIME) {
            const cs_rec_gputime *g = (const cs_rec_gputime *)r;
            cs_gt x = { g->corr, g->g0, g->g1, g->algo };
            /* Source 1: CUDA events; 2: the NCCL profiler plugin. */
            if (g->source == 2 ? import_gt_add(&im->nps, &im->nnp, &im->capnp, x)
                               : import_gt_add(&im->gts, &im->ngt, &im->capgt, x))
                return import_oom(im);
        } else if (kind == CS_REC_GPUACT) {
            /* CUPTI activity: joined to the launching CUDA call below. */
            const cs_rec_gpuact *a = (const cs_rec_gpuact *)r;
            if (import_gt_add(&im->acts, &im->nact, &im->capact, (cs_gt){ a->corr, a->g0, a->g1, 0 }))
                return import_oom(im);
        }
    }
    if (im->ngt)
        qsort(im->gts, im->ngt, sizeof *im->gts, cs_gt_cmp);
    if (im->nact)
        qsort(im->acts, im->nact, sizeof *im->acts, cs_gt_cmp);
    if (im->nnp)
        qsort(im->nps, im->nnp, sizeof *im->nps, cs_gt_cmp);
    if (im->ngfl) {
        /* one a call: the note that says it started, if any */
        qsort(im->gfl, im->ngfl, sizeof *im->gfl, cs_gt_cmp);
        size_t k = 0;
        for (size_t i = 0; i < im->ngfl; i++)
            if (k && im->gfl[k - 1].corr == im->gfl[i].corr) {
                if (im->gfl[i].g0)
                    im->gfl[k - 1].g0 = im->gfl[i].g0;
            } else {
                im->gfl[k++] = im->gfl[i];
            }
        im->ngfl = k;
    }
    if (im->cv.n == 0) {
        /* A log with no calibration holds no usable record either. */
        if (CS_VEC_RESERVE(im->cv.pt, im->cappt, 1) != 0)
            return import_oom(im);
        im->cv.pt[im->cv.n++] = (cs_calpt){ 0, 0, im->h.start_real_ns };
    }
    cs_conv_prepare(&im->cv);
    return 0;
}

/* The largest span id in [lo, hi) of the store, or lo when none: 0, or -1
 * when it cannot be read. */
static int import_max_id(cs_import *im, sqlite3_int64 lo, sqlite3_int64 hi, sqlite3_int64 *out)
{
    sqlite3_stmt *m;
    *out = lo;
    if (sqlite3_prepare_v2(im->st->db, "SELECT MAX(id) FROM span WHERE id > ? AND id < ?", -1, &m, NULL) != SQLITE_OK)
        return import_sql_error(im);
    sqlite3_bind_int64(m, 1, lo);
    sqlite3_bind_int64(m, 2, hi);
    int rc = sqlite3_step(m);
    if (rc == SQLITE_ROW && sqlite3_column_type(m, 0) != SQLITE_NULL)
        *out = sqlite3_column_int64(m, 0);
    sqlite3_finalize(m);
    return rc == SQLITE_ROW ? 0 : import_sql_error(im);
}

/* Statements, the transaction, and the first span id of this rank. */
static int import_begin(cs_import *im)
{
    cs_store *st = im->st;
    for (int i = 0; i < Q_N; i++)
        if (sqlite3_prepare_v2(st->db, cs_import_sql[i], -1, &im->q[i], NULL) != SQLITE_OK)
            return import_sql_error(im);
    if (cs_batch_prepare(st->db, &im->bs, CS_SPAN_INSERT_HEAD, 24) != 0 ||
        cs_batch_prepare(st->db, &im->bd, CS_DONE_INSERT_HEAD, 6) != 0)
        return import_sql_error(im);
    if (cs_store_sql_exec(st->db, st->path, "BEGIN", im->err, im->errlen) != 0)
        return -1;
    /* Span ids are unique across ranks by construction (each rank has its
     * own range), so per-rank files merge by plain copy (cs_store_merge). */
    sqlite3_int64 base = cs_span_id_base(im->rank), top;
    if (import_max_id(im, base, base + CS_SPAN_ID_RANGE, &top) != 0)
        return -1;
    im->next_id = top + 1;
    /* When no row lies above our range's next id, SQLite's own next rowid
     * (the largest plus one) is ours: rows after the first leave id NULL,
     * which appends without searching the table for the id. */
    if (import_max_id(im, INT64_MIN, INT64_MAX, &top) != 0)
        return -1;
    im->auto_id = top == INT64_MIN || top < im->next_id;
    im->first_id = im->next_id;
    im->tmin = INT64_MAX;
    im->tmax = INT64_MIN;
    return 0;
}

/* A span record, with what its thread wrote about it before (SPANX,
 * completions, counters). */
static int import_span(cs_import *im, const cs_rec *r, uint32_t flags)
{
    cs_batch *bs = &im->bs;
    int64_t b = cs_conv_ns(&im->cv, r->t0), e = cs_conv_ns(&im->cv, r->t1);
    if (e < b)
        e = b;
    if (b < im->tmin)
        im->tmin = b;
    if (e > im->tmax)
        im->tmax = e;
    sqlite3_int64 id = im->next_id++;
    cs_batch_row(bs);
    if (!im->auto_id || id == im->first_id)
        cs_batch_set(bs, 0, id);
    cs_batch_set(bs, 1, im->rank);
    cs_batch_set(bs, 2, r->tid);
    if (r->op < CS_OP_COUNT)
        cs_batch_set(bs, 3, r->op);
    else {
        cs_batch_set(bs, 3, CS_OP_NONE);
        im->stats->unknown_ops++;
    }
    if ((flags & CS_F_HAS_COMM) && r->comm < im->ncomm && im->comm_id[r->comm])
        cs_batch_set(bs, 4, (sqlite3_int64)im->comm_id[r->comm]);
    if (flags & CS_F_HAS_SEQ)
        cs_batch_set(bs, 5, r->seq);
    cs_batch_set(bs, 6, (sqlite3_int64)r->bytes);
    if (r->dtype)
        cs_batch_set(bs, 7, r->dtype);
    cs_batch_set(bs, 8, r->count);
    if (flags & CS_F_HAS_PEER)
        cs_batch_set(bs, 9, r->peer);
    int is_sendrecv = r->op == CS_OP_MPI_Sendrecv || r->op == CS_OP_MPI_Sendrecv_replace;
    if (is_sendrecv)
        cs_batch_set(bs, 10, (int32_t)r->req);
    if (flags & (CS_F_HAS_PEER | CS_F_FUSED | CS_F_FUSE_MEMBER))
        cs_batch_set(bs, 11, r->tag); /* p2p tag, or fused-call id */
    if (!is_sendrecv && r->req)
        cs_batch_set(bs, 12, r->req);
    cs_batch_set(bs, 13, b);
    cs_batch_set(bs, 14, e);
    cs_batch_set(bs, 15, r->rc);
    if (r->callsite)
        cs_batch_set(bs, 16, r->callsite);
    /* The extension record this thread wrote just before. */
    const cs_rec_spanx *x = NULL;
    for (int i = 0; i < im->nxp; i++)
        if (im->xp[i].tid == r->tid && im->xp[i].have) {
            im->xp[i].have = 0;
            if (im->xp[i].x.op == r->op)
                x = &im->xp[i].x;
            break;
        }
    /* NCCL calls: GPU times by the process's own correlation id
     * (GPUTIME); CUDA calls: by CUPTI's (GPUACT). */
    int is_cuda = r->op < CS_OP_COUNT && strcmp(cs_ops[r->op].api, "CUDA") == 0;
    const cs_gt *gt = x && x->corr
                          ? (is_cuda ? cs_gt_find(im->acts, im->nact, x->corr) : cs_gt_find(im->gts, im->ngt, x->corr))
                          : NULL;
    /* NCCL's profiler: its row, and its GPU times where CUDA events gave none. */
    const cs_gt *np = x && x->corr && !is_cuda && im->nnp ? cs_gt_find(im->nps, im->nnp, x->corr) : NULL;
    if (!gt && np && np->g0)
        gt = np;
    /* GPU work that never completed: in flight to the log's last time */
    const cs_gt *fl = !gt && x && x->corr && !is_cuda && im->ngfl ? cs_gt_find(im->gfl, im->ngfl, x->corr) : NULL;
    if (fl) {
        flags |= CS_F_INFLIGHT | CS_F_GPU_PEND;
        im->stats->inflight++;
    }
    cs_batch_set(bs, 17, (int)flags);
    if (x) {
        cs_batch_set(bs, 18, (sqlite3_int64)x->stream);
        if (x->grp)
            cs_batch_set(bs, 19, x->grp);
        if (x->redop >= 0)
            cs_batch_set(bs, 20, x->redop);
        if (x->corr)
            cs_batch_set(bs, 21, (sqlite3_int64)x->corr);
    }
    if (gt) {
        int64_t gb = cs_conv_ns(&im->cv, gt->g0), ge = cs_conv_ns(&im->cv, gt->g1);
        cs_batch_set(bs, 22, gb);
        cs_batch_set(bs, 23, ge < gb ? gb : ge);
    } else if (fl) {
        /* its begin when the work started (else unknown); its end, the last time */
        int64_t ge = cs_conv_ns(&im->cv, im->last_tick > r->t1 ? im->last_tick : r->t1);
        if (fl->g0) {
            int64_t gb = cs_conv_ns(&im->cv, fl->g0);
            cs_batch_set(bs, 22, gb);
            ge = ge < gb ? gb : ge;
        }
        cs_batch_set(bs, 23, ge);
        if (ge > im->tmax)
            im->tmax = ge;
    }
    if (cs_batch_put(bs) != 0)
        return import_sql_error(im);
    im->stats->spans++;
    if (np && cs_import_nccl_coll(im->q[Q_NCOLL], id, np, &im->cv) != 0)
        return import_sql_error(im);
    /* Attach what this thread left pending. */
    size_t keep = 0;
    for (size_t i = 0; i < im->npend; i++) {
        cs_pending *p = &im->pend[i];
        if (p->tid != r->tid) {
            im->pend[keep++] = *p;
            continue;
        }
        if (p->is_done) {
            cs_put_done(&im->bd, im->rank, &p->done, id, e);
            im->stats->completions++;
        } else {
            cs_put_counters(im->q[Q_CTR], im->h.papi_events, &p->ctr, id);
            im->stats->counters++;
        }
    }
    im->npend = keep;
    cs_recent_add(cs_recent_of(im->recent, &im->nrecent, r->tid), id, r->op, r->t0);
    return 0;
}

static int import_comm(cs_import *im, const cs_rec_comm *c)
{
    if (c->local >= CS_IMPORT_MAX_COMMS)
        return 0; /* counted in pass 1 */
    sqlite3_stmt *s = im->q[Q_COMM];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)c->id);
    sqlite3_bind_int(s, 2, im->rank);
    sqlite3_bind_int(s, 3, (int)c->local);
    sqlite3_bind_int(s, 4, c->rank);
    sqlite3_bind_int(s, 5, (int)c->size);
    if (c->parent)
        sqlite3_bind_int64(s, 6, (sqlite3_int64)c->parent);
    else
        sqlite3_bind_null(s, 6);
    sqlite3_bind_text(s, 7,
                      c->how < sizeof cs_comm_how_names / sizeof *cs_comm_how_names ? cs_comm_how_names[c->how] : "",
                      -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 8, cs_conv_ns(&im->cv, c->t0));
    if (c->args & CS_COMM_ARG_COLOR)
        sqlite3_bind_int(s, 9, c->color);
    else
        sqlite3_bind_null(s, 9);
    if (c->args & CS_COMM_ARG_KEY)
        sqlite3_bind_int(s, 10, c->key);
    else
        sqlite3_bind_null(s, 10);
    im->stats->comms++;
    return import_step(im, s);
}

/* One part of a communicator's name: a later name replaces an earlier one,
 * parts of the same name fill it in. Bytes that are no printable text
 * become '?', so a name never breaks a report's line or table. */
static int import_commname(cs_import *im, const cs_rec_commname *c)
{
    if (c->part >= CS_COMMNAME_MAX_PARTS || c->nparts == 0 || c->nparts > CS_COMMNAME_MAX_PARTS ||
        c->part >= c->nparts || c->id == 0 || c->id == UINT64_MAX) {
        im->stats->bad_records++;
        return 0;
    }
    int64_t at;
    cs_import_name *n;
    if (cs_map_get(&im->name_idx, c->id, &at)) {
        n = &im->names[at];
        if (c->t0 < n->t0)
            return 0;
        if (c->t0 > n->t0) {
            n->t0 = c->t0;
            memset(n->text, 0, sizeof n->text);
        }
    } else {
        if (CS_VEC_RESERVE(im->names, im->capname, im->nname + 1) != 0 ||
            cs_map_put(&im->name_idx, c->id, (int64_t)im->nname) != 0)
            return import_oom(im);
        n = &im->names[im->nname++];
        memset(n, 0, sizeof *n);
        n->id = c->id;
        n->t0 = c->t0;
    }
    char *dst = n->text + (size_t)c->part * CS_COMMNAME_PER_REC;
    for (size_t i = 0; i < CS_COMMNAME_PER_REC; i++) {
        unsigned char ch = (unsigned char)c->text[i];
        dst[i] = (char)(ch == 0 || (ch >= 0x20 && ch != 0x7f) ? ch : '?');
    }
    return 0;
}

/* The names gathered in pass 2, onto this rank's rows of comms. */
static int import_names(cs_import *im)
{
    sqlite3_stmt *s = im->q[Q_NAME];
    for (size_t i = 0; i < im->nname; i++) {
        const cs_import_name *n = &im->names[i];
        /* the text up to the first NUL: a part lost to damage ends it */
        size_t len = strnlen(n->text, CS_COMMNAME_MAX);
        if (len)
            sqlite3_bind_text(s, 1, n->text, (int)len, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(s, 1);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)n->id);
        sqlite3_bind_int(s, 3, im->rank);
        if (import_step(im, s) != 0)
            return -1;
    }
    return 0;
}

static int import_callsite(cs_import *im, const cs_rec_callsite *c)
{
    if (c->part == 0) {
        sqlite3_bind_int(im->q[Q_CS], 1, im->rank);
        sqlite3_bind_int64(im->q[Q_CS], 2, c->id);
        sqlite3_bind_int(im->q[Q_CS], 3, c->nframes);
        if (import_step(im, im->q[Q_CS]) != 0)
            return -1;
        im->stats->callsites++;
    }
    for (uint32_t i = 0; i < c->nhere && i < CS_CALLSITE_FRAMES_PER_REC; i++) {
        sqlite3_bind_int(im->q[Q_FRAME], 1, im->rank);
        sqlite3_bind_int64(im->q[Q_FRAME], 2, c->id);
        sqlite3_bind_int(im->q[Q_FRAME], 3, (int)(c->part * CS_CALLSITE_FRAMES_PER_REC + i));
        sqlite3_bind_int64(im->q[Q_FRAME], 4, (sqlite3_int64)c->pc[i]);
        if (import_step(im, im->q[Q_FRAME]) != 0)
            return -1;
    }
    return 0;
}

/* A FUSEGUARD record (apply mode's guard): one row of fuse_guard. */
static int import_guard(cs_import *im, const cs_rec_fuseguard *x)
{
    static const char *const why[] = { NULL, "best of the trial", "unfused wins the trial", "a check changed it" };
    sqlite3_stmt *s = im->q[Q_GUARD];
    sqlite3_bind_int(s, 1, im->rank);
    if (x->comm < im->ncomm && im->comm_id[x->comm])
        sqlite3_bind_int64(s, 2, (sqlite3_int64)im->comm_id[x->comm]);
    else
        sqlite3_bind_null(s, 2);
    int dec = x->what == CS_FG_DECISION;
    sqlite3_bind_text(s, 3, dec ? "decision" : "window", -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, x->window);
    sqlite3_bind_int(s, 5, x->setting);
    sqlite3_bind_int64(s, 6, (sqlite3_int64)x->buffer);
    if (dec) {
        sqlite3_bind_null(s, 7);
        sqlite3_bind_null(s, 8);
        if (x->why < sizeof why / sizeof why[0] && why[x->why])
            sqlite3_bind_text(s, 9, why[x->why], -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(s, 9);
        sqlite3_bind_double(s, 10, (double)x->ns / 1e3);
        sqlite3_bind_double(s, 11, (double)x->calls / 1e3);
        sqlite3_bind_double(s, 12, (double)x->ratio / 1e6);
    } else {
        sqlite3_bind_int64(s, 7, (sqlite3_int64)x->ns);
        sqlite3_bind_int64(s, 8, (sqlite3_int64)x->calls);
        sqlite3_bind_null(s, 9);
        sqlite3_bind_null(s, 10);
        sqlite3_bind_null(s, 11);
        sqlite3_bind_null(s, 12);
    }
    sqlite3_bind_int64(s, 13, cs_conv_ns(&im->cv, x->t));
    if (dec)
        sqlite3_bind_null(s, 14);
    else
        sqlite3_bind_int64(s, 14, (sqlite3_int64)x->wall);
    sqlite3_bind_text(s, 15, CS_REC_FLAGS(x->hdr) & CS_FG_F_NCCL ? "nccl" : "mpi", -1, SQLITE_STATIC);
    return import_step(im, s);
}

/* A HANG record (the watchdog's): one row of hangs. */
static int import_hang(cs_import *im, const cs_rec_hang *x, uint32_t flags)
{
    sqlite3_stmt *s = im->q[Q_HANG];
    sqlite3_bind_int(s, 1, im->rank);
    sqlite3_bind_int(s, 2, (int)im->h.pid);
    sqlite3_bind_int(s, 3, (int)x->tid);
    sqlite3_bind_int(s, 4, (int)x->ktid);
    sqlite3_bind_text(s, 5,
                      x->reason == CS_HANG_INFLIGHT ? "inflight"
                      : x->reason == CS_HANG_IDLE   ? "idle"
                                                    : "other",
                      -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, x->action == 2 ? "abort" : "report", -1, SQLITE_STATIC);
    if (x->op && x->op < CS_OP_COUNT)
        sqlite3_bind_text(s, 7, cs_ops[x->op].name, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 7);
    if ((flags & CS_F_HAS_COMM) && x->comm < im->ncomm && im->comm_id[x->comm])
        sqlite3_bind_int64(s, 8, (sqlite3_int64)im->comm_id[x->comm]);
    else
        sqlite3_bind_null(s, 8);
    if (flags & CS_F_HAS_SEQ)
        sqlite3_bind_int64(s, 9, x->seq);
    else
        sqlite3_bind_null(s, 9);
    if (flags & CS_F_HAS_PEER) {
        sqlite3_bind_int(s, 10, x->peer);
        sqlite3_bind_int(s, 11, x->tag);
    } else {
        sqlite3_bind_null(s, 10);
        sqlite3_bind_null(s, 11);
    }
    sqlite3_bind_int64(s, 12, (sqlite3_int64)x->bytes);
    sqlite3_bind_int64(s, 13, cs_conv_ns(&im->cv, x->since));
    sqlite3_bind_int64(s, 14, cs_conv_ns(&im->cv, x->detected));
    if (x->stack)
        sqlite3_bind_int64(s, 15, x->stack);
    else
        sqlite3_bind_null(s, 15);
    if (x->callsite)
        sqlite3_bind_int64(s, 16, x->callsite);
    else
        sqlite3_bind_null(s, 16);
    im->stats->hangs++;
    return import_step(im, s);
}

/* A SPANX record: kept for the thread's next span. */
static void import_spanx(cs_import *im, const cs_rec_spanx *x)
{
    int i = 0;
    while (i < im->nxp && im->xp[i].tid != x->tid)
        i++;
    if (i == im->nxp && im->nxp < (int)(sizeof im->xp / sizeof *im->xp))
        im->nxp++;
    if (i < im->nxp) {
        im->xp[i].tid = x->tid;
        im->xp[i].have = 1;
        im->xp[i].x = *x;
    }
}

static int import_gpuact(cs_import *im, const cs_rec_gpuact *a)
{
    static const char *const act_kind[] = { "", "kernel", "memcpy", "memset" };
    sqlite3_stmt *s = im->q[Q_ACT];
    sqlite3_bind_int(s, 1, im->rank);
    sqlite3_bind_text(s, 2, a->kind < 4 ? act_kind[a->kind] : "other", -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)(a->name & 0x7fffffffffffffffull));
    sqlite3_bind_int64(s, 4, (sqlite3_int64)a->stream);
    sqlite3_bind_int64(s, 5, a->corr);
    sqlite3_bind_int64(s, 6, cs_conv_ns(&im->cv, a->g0));
    sqlite3_bind_int64(s, 7, cs_conv_ns(&im->cv, a->g1));
    sqlite3_bind_int64(s, 8, (sqlite3_int64)a->bytes);
    sqlite3_bind_int(s, 9, (int)a->device);
    return import_step(im, s);
}

/* A completion or counters record, written while its span's call ran: to
 * that span when it came before, else held until the thread's next span. */
static int import_later(cs_import *im, const cs_rec *r, uint32_t kind, uint32_t flags)
{
    if (kind == CS_REC_REQDONE) {
        const cs_rec_done *x = (const cs_rec_done *)r;
        sqlite3_int64 sp = cs_recent_done(cs_recent_of(im->recent, &im->nrecent, x->tid), x);
        if (sp) {
            cs_put_done(&im->bd, im->rank, x, sp, cs_conv_ns(&im->cv, x->t1));
            im->stats->completions++;
            return 0;
        }
    } else if (flags & CS_CTR_AFTER) {
        const cs_rec_counters *x = (const cs_rec_counters *)r;
        cs_recent *rc = cs_recent_of(im->recent, &im->nrecent, x->tid);
        if (rc && rc->n) {
            cs_put_counters(im->q[Q_CTR], im->h.papi_events, x, rc->s[rc->pos].id);
            im->stats->counters++;
            return 0;
        }
    }
    if (CS_VEC_RESERVE(im->pend, im->cappend, im->npend + 1) != 0)
        return import_oom(im);
    cs_pending *p = &im->pend[im->npend++];
    memset(p, 0, sizeof *p);
    if (kind == CS_REC_REQDONE) {
        p->is_done = 1;
        p->done = *(const cs_rec_done *)r;
        p->tid = p->done.tid;
    } else {
        p->ctr = *(const cs_rec_counters *)r;
        p->tid = p->ctr.tid;
    }
    return 0;
}

/* Pass 2: every record into its table. */
static int import_records(cs_import *im, cs_logr *lr)
{
    const cs_rec *r;
    int rc = 0;
    while (rc == 0 && (r = cs_logr_next(lr)) != NULL) {
        uint32_t kind = CS_REC_KIND(r->hdr);
        uint32_t flags = CS_REC_FLAGS(r->hdr);
        if (kind == CS_REC_SPAN) {
            rc = import_span(im, r, flags);
        } else if (kind == CS_REC_INFLIGHT) {
            /* a call that had not returned when the log ended: a span to
             * the last time the log recorded, flagged */
            cs_rec x = *r;
            x.t1 = im->last_tick > x.t0 ? im->last_tick : x.t0;
            im->stats->inflight++;
            rc = import_span(im, &x, flags | CS_F_INFLIGHT);
        } else if (kind == CS_REC_COMMDEF)
            rc = import_comm(im, (const cs_rec_comm *)r);
        else if (kind == CS_REC_COMMNAME)
            rc = import_commname(im, (const cs_rec_commname *)r);
        else if (kind == CS_REC_CALLSITE)
            rc = import_callsite(im, (const cs_rec_callsite *)r);
        else if (kind == CS_REC_SPANX)
            import_spanx(im, (const cs_rec_spanx *)r);
        else if (kind == CS_REC_HANG)
            rc = import_hang(im, (const cs_rec_hang *)r, flags);
        else if (kind == CS_REC_FUSEGUARD)
            rc = import_guard(im, (const cs_rec_fuseguard *)r);
        else if (kind == CS_REC_GPUACT)
            rc = import_gpuact(im, (const cs_rec_gpuact *)r);
        else if (kind == CS_REC_REQDONE || kind == CS_REC_COUNTERS)
            rc = import_later(im, r, kind, flags);
    }
    if (rc != 0 || import_names(im) != 0)
        return -1;
    if (cs_batch_flush(&im->bs) != 0 || cs_batch_flush(&im->bd) != 0 || im->bd.bad)
        return import_sql_error(im);
    return 0;
}

/* The process row and its clock. */
static int import_process(cs_import *im)
{
    const cs_log_header *h = &im->h;
    sqlite3_stmt *s;
    const char *sql = "INSERT OR REPLACE INTO processes(rank, pid, host, exe, mpi, clock, ticks_per_ns,"
                      " world_size, status, spans, dropped, overhead_ns_per_call, overhead_ns, start_ns, end_ns,"
                      " callsites, papi_events, note, tool_version, log_file)"
                      " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(im->st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return import_sql_error(im);
    int64_t start = h->start_real_ns, end = h->end_real_ns;
    if (im->tmin != INT64_MAX && (start == 0 || im->tmin < start))
        start = im->tmin;
    if (end == 0 || (im->tmax != INT64_MIN && im->tmax > end))
        end = im->tmax != INT64_MIN ? im->tmax : start;
    cs_import_stats *stats = im->stats;
    sqlite3_bind_int(s, 1, im->rank);
    sqlite3_bind_int(s, 2, h->pid);
    /* Header strings are bounded by their fields, NUL or not. */
    sqlite3_bind_text(s, 3, h->host, (int)strnlen(h->host, sizeof h->host), SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 4, h->exe, (int)strnlen(h->exe, sizeof h->exe), SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 5, h->mpi, (int)strnlen(h->mpi, sizeof h->mpi), SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 6, h->clock_kind == 1 ? "tsc" : "monotonic", -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 7, h->ticks_per_ns);
    sqlite3_bind_int(s, 8, h->world_size);
    sqlite3_bind_text(s, 9, stats->closed ? "closed" : "crashed", -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 10, stats->spans);
    sqlite3_bind_int64(s, 11, (sqlite3_int64)h->dropped);
    sqlite3_bind_int64(s, 12, (sqlite3_int64)h->overhead_ns);
    /* A damaged header may hold any overhead: the product saturates. */
    int64_t total;
    if (h->overhead_ns > INT64_MAX || __builtin_mul_overflow((int64_t)h->overhead_ns, stats->spans, &total))
        total = INT64_MAX;
    sqlite3_bind_int64(s, 13, total);
    sqlite3_bind_int64(s, 14, start);
    sqlite3_bind_int64(s, 15, end);
    sqlite3_bind_int(s, 16, (int)h->callsites);
    sqlite3_bind_text(s, 17, h->papi_events, (int)strnlen(h->papi_events, sizeof h->papi_events), SQLITE_TRANSIENT);
    /* A damaged log says so where its process is listed. */
    char note[300];
    snprintf(note, sizeof note, "log damaged: %s", stats->damage);
    if (stats->damage[0])
        sqlite3_bind_text(s, 18, note, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_text(s, 18, h->note, (int)strnlen(h->note, sizeof h->note), SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 19, h->tool_version, (int)strnlen(h->tool_version, sizeof h->tool_version), SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 20, im->log_path, -1, SQLITE_TRANSIENT);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    if (!ok)
        return import_sql_error(im);
    char sql2[256];
    snprintf(sql2, sizeof sql2, "INSERT OR IGNORE INTO clocks(rank, clock) VALUES(%d, '%s')", im->rank,
             h->clock_kind == 1 ? "tsc" : "monotonic");
    return cs_store_sql_exec(im->st->db, im->st->path, sql2, im->err, im->errlen);
}

static void import_free(cs_import *im)
{
    for (int i = 0; i < Q_N; i++)
        sqlite3_finalize(im->q[i]);
    cs_batch_free(&im->bs);
    cs_batch_free(&im->bd);
    free(im->pend);
    free(im->cv.pt);
    free(im->comm_id);
    free(im->names);
    cs_map_free(&im->name_idx);
    free(im->gts);
    free(im->acts);
    free(im->nps);
    free(im->gfl);
}

int cs_store_import_log(cs_store *st, const char *log_path, cs_import_stats *stats, char *err, size_t errlen)
{
    cs_import_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    cs_logr *lr = cs_logr_open(log_path, err, errlen);
    if (!lr)
        return -1;
    /* On the heap: the preload converts its log at exit on whatever thread
     * ends the program, whose stack may be small. */
    cs_import *im = calloc(1, sizeof *im);
    if (!im) {
        cs_logr_close(lr);
        return cs_store_sql_fail(err, errlen, "%s: out of memory", log_path);
    }
    im->st = st;
    im->log_path = log_path;
    im->stats = stats;
    im->err = err;
    im->errlen = errlen;
    /* A copy: the reader is reopened for the second pass. */
    im->h = *cs_logr_header(lr);
    if (im->h.rank >= CS_IMPORT_RANK_MAX || im->h.rank < -1 ||
        (im->h.rank < 0 && (im->h.pid <= 0 || im->h.pid >= CS_IMPORT_RANK_MAX))) {
        int rank = im->h.rank, pid = im->h.pid;
        cs_logr_close(lr);
        free(im);
        return cs_store_sql_fail(err, errlen, "%s: rank %d, pid %d in the log header are out of range (damaged log?)",
                                 log_path, rank, pid);
    }
    im->rank = im->h.rank >= 0 ? im->h.rank : -im->h.pid;
    stats->rank = im->rank;
    stats->closed = cs_logr_closed(lr);
    stats->dropped = (int64_t)im->h.dropped;
    im->cv.tsc = im->h.clock_kind == 1;
    im->cv.tpn = im->h.ticks_per_ns > 0 ? im->h.ticks_per_ns : 1.0;

    int rc = import_scan(im, lr);
    cs_logr_close(lr);
    lr = NULL;
    if (rc == 0 && !(lr = cs_logr_open(log_path, err, errlen)))
        rc = -1;
    if (rc == 0)
        rc = import_begin(im);
    if (rc == 0)
        rc = import_records(im, lr);
    if (rc == 0) {
        char why[200];
        int damaged = cs_logr_damage(lr, why, sizeof why);
        if (damaged && stats->bad_records)
            snprintf(stats->damage, sizeof stats->damage, "%s; %lld damaged records", why,
                     (long long)stats->bad_records);
        else if (damaged)
            snprintf(stats->damage, sizeof stats->damage, "%s", why);
        else if (stats->bad_records)
            snprintf(stats->damage, sizeof stats->damage, "%lld damaged records", (long long)stats->bad_records);
        rc = import_process(im);
    }
    if (rc == 0 && cs_read_modules(st, log_path, im->rank) != 0)
        rc = import_sql_error(im);
    if (rc == 0)
        rc = cs_store_sql_exec(st->db, st->path, "COMMIT", err, errlen);
    if (rc != 0 && st->db && !sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    import_free(im);
    free(im);
    if (lr)
        cs_logr_close(lr);
    return rc;
}

static int cs_file_size(const char *path, long long *size, long long *mtime)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    *size = (long long)sb.st_size;
    *mtime = (long long)sb.st_mtime;
    return 0;
}

int cs_store_convert_log(const char *log_path, const char *dir, char *out_path, char *err, size_t errlen)
{
    char emsg[512];
    cs_logr *lr = cs_logr_open(log_path, err, errlen);
    if (!lr)
        return -1;
    const cs_log_header h = *cs_logr_header(lr);
    cs_logr_close(lr);
    char ranks[PATH_MAX], path[PATH_MAX + 64], tmp[PATH_MAX + 80];
    snprintf(ranks, sizeof ranks, "%s/ranks", dir);
    if (mkdir(ranks, 0755) != 0 && errno != EEXIST)
        return cs_store_sql_fail(err, errlen, "cannot create %s: %s", ranks, strerror(errno));
    if (cs_log_dir_safe(ranks, 1, emsg, sizeof emsg) != 0) /* never through a link planted as ranks/ */
        return cs_store_sql_fail(err, errlen, "%s", emsg);
    if (h.rank >= 0)
        snprintf(path, sizeof path, "%s/rank-%06d-%d.db", ranks, h.rank, h.pid);
    else
        snprintf(path, sizeof path, "%s/pid-%d.db", ranks, h.pid);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cs_store *st;
    /* the records the log holds at most: the chunks its writers claimed */
    long long expect = -1; /* (a header's sizes bounded first: no overflow) */
    if (h.rec_size <= 4096 && h.chunk_recs <= (1u << 20))
        expect = (long long)(h.next_chunk < (1ull << 30) ? h.next_chunk : 1ull << 30) * h.chunk_recs * h.rec_size;
    if (cs_store_create_sized(tmp, expect, &st, err, errlen) != 0)
        return -1;
    cs_import_stats stats;
    if (cs_store_import_log(st, log_path, &stats, err, errlen) != 0) {
        cs_store_close(st);
        unlink(tmp);
        return -1;
    }
    long long size = 0, mtime = 0;
    cs_file_size(log_path, &size, &mtime);
    snprintf(emsg, sizeof emsg, "%s %lld %d", log_path, size, stats.closed);
    /* A log of a newer preload: its new calls are kept, nameless, and
     * the ingest says so (meta unknown_ops). */
    char nunk[32], dmg[320];
    snprintf(nunk, sizeof nunk, "%lld", (long long)stats.unknown_ops);
    /* A damaged log: what was kept and what is missing, for the ingest to
     * tell (meta damage). */
    snprintf(dmg, sizeof dmg, "%lld spans recovered; %s", (long long)stats.spans, stats.damage);
    /* The run the process belonged to (its log's header): what the job
     * index records of the store, so that one of another run is told
     * apart (store_index.c). */
    char run_id[CS_LOG_RUN_ID_MAX + 1];
    snprintf(run_id, sizeof run_id, "%.*s", (int)strnlen(h.run_id, sizeof h.run_id), h.run_id);
    if (cs_store_meta_set(st, "source_log", emsg) != 0 || cs_store_meta_set(st, "kind", "rank") != 0 ||
        (run_id[0] && cs_store_meta_set(st, "run_id", run_id) != 0) ||
        (stats.unknown_ops && cs_store_meta_set(st, "unknown_ops", nunk) != 0) ||
        (stats.damage[0] && cs_store_meta_set(st, "damage", dmg) != 0)) {
        cs__store_sql_note(st->db);
        cs_store_sql_fail(err, errlen, "cannot write %s: %s", tmp, sqlite3_errmsg(st->db));
        cs_store_close(st);
        unlink(tmp);
        return -1;
    }
    /* Leave no WAL behind: the file is complete on its own. */
    sqlite3_exec(st->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
    cs_store_close(st);
    if (rename(tmp, path) != 0) {
        cs_store_sql_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (out_path)
        snprintf(out_path, PATH_MAX, "%s", path);
    return 0;
}

int cs_store_rank_db_current(const char *db_path, const char *log_path)
{
    cs_store *st;
    char err[256], have[PATH_MAX + 64], want[PATH_MAX + 64];
    if (cs_store_open(db_path, CS_STORE_READ, &st, err, sizeof err) != 0)
        return 0;
    int ok = cs_store_meta_get(st, "source_log", have, sizeof have) == 0;
    /* A store made before stores recorded their run, from a log that
     * names one, is made again, so that it carries it. */
    char run[CS_LOG_RUN_ID_MAX + 1] = "", log_run[CS_LOG_RUN_ID_MAX + 1] = "";
    cs_store_meta_get(st, "run_id", run, sizeof run);
    cs_store_close(st);
    cs_logr *lr = ok ? cs_logr_open(log_path, err, sizeof err) : NULL;
    if (lr) {
        const cs_log_header *h = cs_logr_header(lr);
        snprintf(log_run, sizeof log_run, "%.*s", (int)strnlen(h->run_id, sizeof h->run_id), h->run_id);
        cs_logr_close(lr);
    }
    if (!lr || strcmp(run, log_run) != 0)
        return 0;
    long long size = 0, mtime = 0;
    if (!ok || cs_file_size(log_path, &size, &mtime) != 0)
        return 0;
    /* Current only if made from this log, at this size, after it closed. */
    snprintf(want, sizeof want, "%s %lld 1", log_path, size);
    return strcmp(have, want) == 0;
}
