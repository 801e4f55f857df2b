/* store_stats.c: statistics the store computes in SQL (see store.h):
 * durations by group and their quantiles, time in calls per rank, span
 * counts, and the GPU overlap of communication with compute. */
#include "config.h"
#include "common/map.h"
#include "common/stats.h"
#include "common/vec.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- durations and their exclusive shares ---- */

/* One call of the group tables: its key, op, duration (a nonblocking
 * collective: start to the end of the completion call that finished it),
 * bytes, and its share of the rank's time line. */
typedef struct cs_grow {
    int32_t key, op; /* indexes into the string table */
    int32_t key2;    /* the second grouping's key (group_durations) */
    int rank;
    int64_t d, share, bytes;
} cs_grow;

/* Interned strings (keys and op names). */
typedef struct cs_strtab {
    cs_map idx;
    char **s;
    size_t n, cap;
} cs_strtab;

static int32_t cs_strtab_get(cs_strtab *t, const char *str)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = str; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    for (;; h = cs_map_hash(h + 1)) {
        int64_t i;
        if (h == UINT64_MAX)
            continue;
        if (!cs_map_get(&t->idx, h, &i))
            break;
        if (strcmp(t->s[i], str) == 0)
            return (int32_t)i;
    }
    if (CS_VEC_RESERVE(t->s, t->cap, t->n + 1) != 0)
        return -1;
    t->s[t->n] = strdup(str);
    if (!t->s[t->n] || cs_map_put(&t->idx, h, (int64_t)t->n) != 0) {
        free(t->s[t->n]);
        return -1;
    }
    return (int32_t)t->n++;
}

static void cs_strtab_free(cs_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    cs_map_free(&t->idx);
}

/* An interval of one rank's time line, with its weight. */
typedef struct cs_wiv {
    int64_t b, e;
    size_t row;
    int w;
} cs_wiv;

typedef struct cs_wev {
    int64_t t;
    int dw;
    size_t iv;
} cs_wev;

static int cs_wev_order(const void *x, const void *y)
{
    const cs_wev *a = x, *b = y;
    return (a->t > b->t) - (a->t < b->t);
}

/* The exclusive share of each interval of one rank: every instant of the
 * union of the intervals goes to the intervals of weight 1 covering it, in
 * equal parts (intervals of weight 0 get nothing while another covers
 * them, and are counted alone otherwise). The shares add up to the union. */
static int cs_shares(cs_wiv *iv, size_t n, cs_grow *rows)
{
    if (n == 0)
        return 0;
    cs_wev *ev = malloc(2 * n * sizeof *ev);
    double *fb = malloc(n * sizeof *fb), *fe = malloc(n * sizeof *fe), *f0 = malloc(n * sizeof *f0),
           *f0e = malloc(n * sizeof *f0e);
    if (!ev || !fb || !fe || !f0 || !f0e) {
        free(ev), free(fb), free(fe), free(f0), free(f0e);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        ev[2 * i] = (cs_wev){ iv[i].b, 1, i };
        ev[2 * i + 1] = (cs_wev){ iv[i].e, -1, i };
    }
    qsort(ev, 2 * n, sizeof *ev, cs_wev_order);
    /* F: time per unit of weight 1; G: time covered by weight-0 intervals
     * only, per interval of them */
    double F = 0, G = 0;
    int w1 = 0, w0 = 0;
    int64_t t = ev[0].t;
    for (size_t k = 0; k < 2 * n; k++) {
        const cs_wev *x = &ev[k];
        if (x->t > t) {
            double dt = (double)(x->t - t);
            if (w1 > 0)
                F += dt / w1;
            else if (w0 > 0)
                G += dt / w0;
            t = x->t;
        }
        const cs_wiv *v = &iv[x->iv];
        if (x->dw > 0) {
            fb[x->iv] = F, f0[x->iv] = G;
            if (v->w)
                w1++;
            else
                w0++;
        } else {
            fe[x->iv] = F, f0e[x->iv] = G;
            if (v->w)
                w1--;
            else
                w0--;
        }
    }
    for (size_t i = 0; i < n; i++)
        rows[iv[i].row].share = (int64_t)(iv[i].w ? fe[i] - fb[i] + 0.5 : f0e[i] - f0[i] + 0.5);
    free(ev), free(fb), free(fe), free(f0), free(f0e);
    return 0;
}

static int cs_grow_order(const void *x, const void *y)
{
    const cs_grow *a = x, *b = y;
    if (a->key != b->key)
        return (a->key > b->key) - (a->key < b->key);
    return (a->d > b->d) - (a->d < b->d);
}

typedef struct cs_named {
    const char *s;
    int32_t idx;
} cs_named;

static int cs_named_order(const void *x, const void *y)
{
    return strcmp(((const cs_named *)x)->s, ((const cs_named *)y)->s);
}

static const char *group_key(const char *group)
{
    return strcmp(group, "comm") == 0       ? "CAST(s.comm AS TEXT)"
           : strcmp(group, "callsite") == 0 ? "COALESCE(c.label, '(unknown)')"
                                            : "o.name";
}

/* cs_store_group_durations for group, and with group2 (not NULL) the
 * same for group2 to cb2 from the same scan: the two groupings must be
 * of the same calls (neither "comm", which leaves out calls without a
 * communicator). */
static int group_durations(cs_store *st, const char *group, int (*cb)(const cs_group_row *, void *), void *arg,
                           const char *group2, int (*cb2)(const cs_group_row *, void *), void *arg2)
{
    if (group2 && (strcmp(group, "comm") == 0 || strcmp(group2, "comm") == 0))
        return -1;
    const char *key = group_key(group);
    /* A nonblocking collective (flags 1 and 8) lasts to the end of the
     * completion call that finished it. */
    char sql[1400];
    snprintf(sql, sizeof sql,
             "SELECT %s AS k, o.name, s.begin_ns, s.end_ns, COALESCE(s.bytes, 0), s.rank, s.id, o.kind,"
             " d.end_ns, d.span, %s FROM span s"
             " JOIN ops o ON o.id = s.op LEFT JOIN callsites c ON c.rank = s.rank AND c.id = s.callsite"
             " LEFT JOIN (SELECT rank, req, MIN(end_ns) AS end_ns, MIN(span) AS span FROM completions"
             "  GROUP BY rank, req) d ON (s.flags & 9) = 9 AND d.rank = s.rank AND d.req = s.req"
             " WHERE o.kind NOT IN ('init', 'finalize', 'marker', 'commnew', 'commfree', 'commname', 'compute')%s"
             " ORDER BY s.rank, s.begin_ns",
             key, group2 ? group_key(group2) : "NULL", strcmp(group, "comm") == 0 ? " AND s.comm IS NOT NULL" : "");
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    cs_strtab tab;
    memset(&tab, 0, sizeof tab);
    cs_map done; /* completion spans that finished a nonblocking collective of the rank */
    memset(&done, 0, sizeof done);
    cs_grow *rows = NULL;
    cs_wiv *iv = NULL;
    int32_t *order = NULL, *byname = NULL;
    size_t n = 0, cap = 0, niv = 0, capIv = 0;
    int rc = 0, step, rank = 0;
    for (;;) {
        step = sqlite3_step(s);
        int more = step == SQLITE_ROW;
        int r = more ? sqlite3_column_int(s, 5) : 0;
        if (niv && (!more || r != rank)) {
            if (cs_shares(iv, niv, rows) != 0) {
                rc = -1;
                break;
            }
            niv = 0;
            cs_map_free(&done);
            memset(&done, 0, sizeof done);
        }
        if (!more)
            break;
        rank = r;
        const char *k = (const char *)sqlite3_column_text(s, 0);
        const char *op = (const char *)sqlite3_column_text(s, 1);
        const char *kind = (const char *)sqlite3_column_text(s, 7);
        int64_t b = sqlite3_column_int64(s, 2), e = sqlite3_column_int64(s, 3);
        int w = 1;
        if (sqlite3_column_type(s, 8) != SQLITE_NULL) {
            int64_t ce = sqlite3_column_int64(s, 8);
            if (ce > e)
                e = ce;
            if (cs_map_put(&done, (uint64_t)sqlite3_column_int64(s, 9), 1) != 0) {
                rc = -1;
                break;
            }
        } else if (kind && strcmp(kind, "complete") == 0) {
            int64_t one;
            /* its time belongs to the collectives it completed */
            if (cs_map_get(&done, (uint64_t)sqlite3_column_int64(s, 6), &one))
                w = 0;
        }
        if (e < b)
            e = b;
        int32_t ki = cs_strtab_get(&tab, k ? k : ""), oi = cs_strtab_get(&tab, op ? op : ""), k2i = 0;
        if (group2) {
            const char *k2 = (const char *)sqlite3_column_text(s, 10);
            k2i = cs_strtab_get(&tab, k2 ? k2 : "");
        }
        if (ki < 0 || oi < 0 || k2i < 0 || CS_VEC_RESERVE(rows, cap, n + 1) != 0 ||
            CS_VEC_RESERVE(iv, capIv, niv + 1) != 0) {
            rc = -1;
            break;
        }
        rows[n] = (cs_grow){ ki, oi, k2i, r, e - b, 0, sqlite3_column_int64(s, 4) };
        iv[niv++] = (cs_wiv){ b, e, n, w };
        n++;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    if (rc == 0 && n) {
        /* rows by key (in the order of the key strings), then duration */
        order = malloc(tab.n * sizeof *order);
        byname = malloc(tab.n * sizeof *byname);
        cs_named *nm = malloc(tab.n * sizeof *nm);
        if (!order || !byname || !nm) {
            rc = -1;
        } else {
            for (size_t i = 0; i < tab.n; i++)
                nm[i] = (cs_named){ tab.s[i], (int32_t)i };
            qsort(nm, tab.n, sizeof *nm, cs_named_order);
            for (size_t i = 0; i < tab.n; i++) {
                order[nm[i].idx] = (int32_t)i;
                byname[i] = nm[i].idx;
            }
            for (int pass = 0; pass < (group2 ? 2 : 1) && rc == 0; pass++) {
                for (size_t i = 0; i < n; i++)
                    rows[i].key = order[pass ? rows[i].key2 : rows[i].key];
                qsort(rows, n, sizeof *rows, cs_grow_order);
                for (size_t i = 0; i < n && rc == 0; i++) {
                    cs_group_row g = { tab.s[byname[rows[i].key]],
                                       tab.s[rows[i].op],
                                       rows[i].d,
                                       rows[i].bytes,
                                       rows[i].rank,
                                       rows[i].share };
                    rc = pass ? cb2(&g, arg2) : cb(&g, arg);
                }
            }
        }
        free(nm);
    }
    free(order);
    free(byname);
    free(rows);
    free(iv);
    cs_map_free(&done);
    cs_strtab_free(&tab);
    return rc;
}

int cs_store_group_durations(cs_store *st, const char *group, int (*cb)(const cs_group_row *, void *), void *arg)
{
    return group_durations(st, group, cb, arg, NULL, NULL, NULL);
}

typedef struct cs_gacc {
    cs_group_stat *a;
    size_t n, cap;
    char key[256]; /* the group being read */
    char op[48];
    int64_t *d;
    size_t nd, capd;
    int64_t bytes, share;
    int oom;
} cs_gacc;

static void cs_gacc_flush(cs_gacc *g)
{
    if (g->nd == 0)
        return;
    if (CS_VEC_RESERVE(g->a, g->cap, g->n + 1) != 0) {
        g->oom = 1;
        return;
    }
    cs_group_stat *x = &g->a[g->n++];
    snprintf(x->key, sizeof x->key, "%s", g->key);
    snprintf(x->op, sizeof x->op, "%s", g->op);
    x->count = (int64_t)g->nd;
    x->bytes = g->bytes;
    x->total = g->share;
    x->p50 = cs_stats_quantile(g->d, g->nd, 0.50);
    x->p90 = cs_stats_quantile(g->d, g->nd, 0.90);
    x->p99 = cs_stats_quantile(g->d, g->nd, 0.99);
    x->max = g->d[g->nd - 1];
    g->nd = 0;
    g->bytes = 0;
    g->share = 0;
}

/* Rows come ordered by key, then duration. */
static int cs_gacc_row(const cs_group_row *r, void *arg)
{
    cs_gacc *g = arg;
    const char *key = r->key ? r->key : "";
    if (g->nd == 0 || strcmp(key, g->key) != 0) {
        cs_gacc_flush(g);
        snprintf(g->key, sizeof g->key, "%s", key);
        snprintf(g->op, sizeof g->op, "%s", r->op ? r->op : "");
    } else if (r->op && strcmp(g->op, r->op) != 0) {
        snprintf(g->op, sizeof g->op, "(several)");
    }
    if (CS_VEC_RESERVE(g->d, g->capd, g->nd + 1) != 0) {
        g->oom = 1;
        return 1;
    }
    g->d[g->nd++] = r->dur_ns;
    g->bytes += r->bytes;
    g->share += r->share_ns;
    return 0;
}

/* The end of one grouping's figures: g's into *out, *n (0), or nothing
 * and -1 on a failure (rc) or want of memory. */
static int cs_gacc_done(cs_gacc *g, int rc, cs_group_stat **out, size_t *n)
{
    if (!g->oom)
        cs_gacc_flush(g);
    free(g->d);
    g->d = NULL;
    if (rc != 0 || g->oom) {
        free(g->a);
        *out = NULL;
        *n = 0;
        return -1;
    }
    *out = g->a;
    *n = g->n;
    return 0;
}

int cs_store_group_stats(cs_store *st, const char *group, cs_group_stat **out, size_t *n)
{
    cs_gacc g;
    memset(&g, 0, sizeof g);
    int rc = cs_store_group_durations(st, group, cs_gacc_row, &g);
    return cs_gacc_done(&g, rc, out, n);
}

int cs_store_group_stats2(cs_store *st, const char *group, cs_group_stat **out, size_t *n, const char *group2,
                          cs_group_stat **out2, size_t *n2)
{
    cs_gacc g, g2;
    memset(&g, 0, sizeof g);
    memset(&g2, 0, sizeof g2);
    int rc = group_durations(st, group, cs_gacc_row, &g, group2, cs_gacc_row, &g2);
    int a = cs_gacc_done(&g, rc, out, n), b = cs_gacc_done(&g2, rc, out2, n2);
    if (a == 0 && b == 0)
        return 0;
    free(*out), free(*out2);
    *out = *out2 = NULL;
    *n = *n2 = 0;
    return -1;
}

int cs_store_completion_calls(cs_store *st, int (*cb)(int rank, int64_t span, int64_t dur_ns, int64_t ncoll, void *),
                              void *arg)
{
    /* one scan of the spans, the completions looked up by (rank, req):
     * the other order scans a rank's spans once per completion */
    const char *sql = "SELECT c.rank, c.span, MAX(p.end_ns - p.begin_ns, 0), count(*) FROM span s"
                      " CROSS JOIN completions c ON c.rank = s.rank AND c.req = s.req"
                      " JOIN span p ON p.id = c.span WHERE (s.flags & 9) = 9 GROUP BY c.rank, c.span";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW)
        if ((rc = cb(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
                     sqlite3_column_int64(s, 3), arg)) != 0)
            break;
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_rank_busy(cs_store *st, int (*cb)(int, int64_t, int64_t, int64_t, void *), void *arg)
{
    /* Time in traced calls (the union of their intervals: threads of one
     * rank may be in calls at once) between the end of MPI_Init and the
     * start of MPI_Finalize (or the whole log), against that wall time. */
    const char *sql = "SELECT s.rank, o.kind, s.begin_ns, s.end_ns FROM span s JOIN ops o ON o.id = s.op"
                      " ORDER BY s.rank, s.begin_ns";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step, rank = 0, have = 0;
    int64_t busy = 0, ue = INT64_MIN, fin = INT64_MIN, init = INT64_MIN, lo = INT64_MAX, hi = INT64_MIN, n = 0;
    for (;;) {
        step = sqlite3_step(s);
        int more = step == SQLITE_ROW;
        int r = more ? sqlite3_column_int(s, 0) : 0;
        if (have && (!more || r != rank)) {
            int64_t wall = (fin != INT64_MIN ? fin : hi) - (init != INT64_MIN ? init : lo);
            if ((rc = cb(rank, busy, wall, n, arg)) != 0)
                break;
            busy = 0, ue = INT64_MIN, fin = INT64_MIN, init = INT64_MIN, lo = INT64_MAX, hi = INT64_MIN, n = 0;
        }
        if (!more)
            break;
        have = 1;
        rank = r;
        const char *kind = (const char *)sqlite3_column_text(s, 1);
        int64_t b = sqlite3_column_int64(s, 2), e = sqlite3_column_int64(s, 3);
        n++;
        if (b < lo)
            lo = b;
        if (e > hi)
            hi = e;
        if (kind && strcmp(kind, "init") == 0) {
            if (e > init)
                init = e;
            continue;
        }
        if (kind && strcmp(kind, "finalize") == 0) {
            if (b > fin)
                fin = b;
            continue;
        }
        if (kind && (strcmp(kind, "marker") == 0 || strcmp(kind, "compute") == 0))
            continue;
        if (b < ue)
            b = ue;
        if (e > b)
            busy += e - b;
        if (e > ue)
            ue = e;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

int64_t cs_store_count_spans(cs_store *st)
{
    /* a job read through its parts: the count their makers took (a count
     * here would read every page of every part) */
    if (st->nparts > 0)
        return st->spans;
    sqlite3_stmt *s;
    int64_t n = -1;
    if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM span", -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* ---- GPU overlap of communication with compute ---- */

typedef struct cs_iv {
    int64_t b, e;
} cs_iv;

/* Time of the sorted, disjoint intervals a[0..n) covered by the kernels of
 * rank `rank` on streams other than `stream` (their union). */
static int cs_overlap_covered(cs_store *st, int rank, int64_t stream, const cs_iv *a, size_t n, int64_t *covered)
{
    sqlite3_stmt *k;
    *covered = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT begin_ns, end_ns FROM gpu_activity WHERE rank = ? AND kind = 'kernel'"
                           " AND stream IS NOT ? AND end_ns > begin_ns ORDER BY begin_ns",
                           -1, &k, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(k, 1, rank);
    sqlite3_bind_int64(k, 2, stream);
    size_t i = 0;
    int64_t ub = 0, ue = INT64_MIN; /* the kernel union interval being built */
    int step = SQLITE_ROW;
    for (int more = 1; more;) {
        int64_t b = 0, e = 0;
        step = sqlite3_step(k);
        more = step == SQLITE_ROW;
        if (more) {
            b = sqlite3_column_int64(k, 0);
            e = sqlite3_column_int64(k, 1);
            if (b <= ue) {
                if (e > ue)
                    ue = e;
                continue;
            }
        }
        if (ue > INT64_MIN) {
            /* Intersect [ub, ue) with the communication intervals. */
            while (i < n && a[i].e <= ub)
                i++;
            for (size_t j = i; j < n && a[j].b < ue; j++) {
                int64_t lo = a[j].b > ub ? a[j].b : ub, hi = a[j].e < ue ? a[j].e : ue;
                if (hi > lo)
                    *covered += hi - lo;
            }
        }
        ub = b;
        ue = more ? e : INT64_MIN;
    }
    sqlite3_finalize(k);
    return step == SQLITE_DONE ? 0 : -1;
}

int cs_store_gpu_overlap(cs_store *st, int (*cb)(int rank, int64_t comm_ns, int64_t exposed_ns, void *), void *arg)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM gpu_activity WHERE kind = 'kernel' LIMIT 1", -1, &s, NULL) !=
        SQLITE_OK)
        return -1;
    int step = sqlite3_step(s);
    sqlite3_finalize(s);
    if (step != SQLITE_ROW)
        return step == SQLITE_DONE ? 0 : -1;
    if (sqlite3_prepare_v2(
            st->db,
            "SELECT s.rank, COALESCE(s.stream, 0), s.gpu_begin_ns, s.gpu_end_ns FROM span s"
            " JOIN ops o ON o.id = s.op WHERE o.api = 'NCCL' AND o.kind IN ('coll','rooted','send','recv')"
            " AND s.gpu_begin_ns IS NOT NULL AND s.gpu_end_ns > s.gpu_begin_ns"
            " ORDER BY s.rank, 2, s.gpu_begin_ns",
            -1, &s, NULL) != SQLITE_OK)
        return -1;
    cs_iv *a = NULL;
    size_t n = 0, cap = 0;
    int rank = 0, nranks = 0, rc = 0;
    int64_t stream = 0, comm_ns = 0, exposed_ns = 0;
    for (int more = 1; more && rc == 0;) {
        step = sqlite3_step(s);
        more = step == SQLITE_ROW;
        if (!more && step != SQLITE_DONE) {
            rc = -1;
            break;
        }
        int r = more ? sqlite3_column_int(s, 0) : 0;
        int64_t sm = more ? sqlite3_column_int64(s, 1) : 0;
        if (n && (!more || r != rank || sm != stream)) {
            int64_t total = 0, covered = 0;
            for (size_t i = 0; i < n; i++)
                total += a[i].e - a[i].b;
            if (cs_overlap_covered(st, rank, stream, a, n, &covered) != 0)
                rc = -1;
            comm_ns += total;
            exposed_ns += total - covered;
            n = 0;
            if (!more || r != rank) {
                if (rc == 0 && cb(rank, comm_ns, exposed_ns, arg) != 0)
                    rc = 1;
                nranks++;
                comm_ns = exposed_ns = 0;
            }
        }
        if (!more)
            break;
        rank = r;
        stream = sm;
        int64_t b = sqlite3_column_int64(s, 2), e = sqlite3_column_int64(s, 3);
        if (n && b <= a[n - 1].e) { /* grouped calls share their times */
            if (e > a[n - 1].e)
                a[n - 1].e = e;
            continue;
        }
        if (CS_VEC_RESERVE(a, cap, n + 1) != 0) {
            rc = -1;
            break;
        }
        a[n++] = (cs_iv){ b, e };
    }
    sqlite3_finalize(s);
    free(a);
    return rc < 0 ? -1 : nranks;
}
