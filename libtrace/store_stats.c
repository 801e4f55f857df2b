/* store_stats.c: statistics the store computes in SQL (see store.h):
 * durations by group and their quantiles, time in calls per rank, span
 * counts, and the GPU overlap of communication with compute. */
#include "config.h"
#include "common/stats.h"
#include "common/vec.h"
#include "libtrace/store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_store_group_durations(cs_store *st, const char *group, int (*cb)(const cs_group_row *, void *), void *arg)
{
    const char *key = strcmp(group, "comm") == 0       ? "CAST(s.comm AS TEXT)"
                      : strcmp(group, "callsite") == 0 ? "COALESCE(c.label, '(unknown)')"
                                                       : "o.name";
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT %s AS k, o.name, s.end_ns - s.begin_ns AS d, COALESCE(s.bytes, 0), s.rank FROM span s"
             " JOIN ops o ON o.id = s.op LEFT JOIN callsites c ON c.rank = s.rank AND c.id = s.callsite"
             " WHERE o.kind NOT IN ('init', 'finalize', 'marker', 'commnew', 'commfree', 'commname')%s"
             " ORDER BY k, d",
             key, strcmp(group, "comm") == 0 ? " AND s.comm IS NOT NULL" : "");
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        cs_group_row r = { (const char *)sqlite3_column_text(s, 0), (const char *)sqlite3_column_text(s, 1),
                           sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3), sqlite3_column_int(s, 4) };
        if ((rc = cb(&r, arg)) != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

typedef struct cs_gacc {
    cs_group_stat *a;
    size_t n, cap;
    char key[256]; /* the group being read */
    char op[48];
    int64_t *d;
    size_t nd, capd;
    int64_t bytes;
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
    x->total = 0;
    for (size_t i = 0; i < g->nd; i++)
        x->total += g->d[i];
    x->p50 = cs_stats_quantile(g->d, g->nd, 0.50);
    x->p90 = cs_stats_quantile(g->d, g->nd, 0.90);
    x->p99 = cs_stats_quantile(g->d, g->nd, 0.99);
    x->max = g->d[g->nd - 1];
    g->nd = 0;
    g->bytes = 0;
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
    return 0;
}

int cs_store_group_stats(cs_store *st, const char *group, cs_group_stat **out, size_t *n)
{
    cs_gacc g;
    memset(&g, 0, sizeof g);
    int rc = cs_store_group_durations(st, group, cs_gacc_row, &g);
    if (!g.oom)
        cs_gacc_flush(&g);
    free(g.d);
    if ((rc != 0 && !g.oom) || g.oom) {
        free(g.a);
        *out = NULL;
        *n = 0;
        return -1;
    }
    *out = g.a;
    *n = g.n;
    return 0;
}

int cs_store_rank_busy(cs_store *st, int (*cb)(int, int64_t, int64_t, int64_t, void *), void *arg)
{
    /* Time in traced calls between the end of MPI_Init and the start of
     * MPI_Finalize (or the whole log), against that wall time. */
    const char *sql =
        "SELECT s.rank, SUM(CASE WHEN o.kind IN ('init','finalize','marker') THEN 0 ELSE s.end_ns - s.begin_ns END),"
        " COALESCE(MAX(CASE WHEN o.kind = 'finalize' THEN s.begin_ns END), MAX(s.end_ns))"
        "  - COALESCE(MAX(CASE WHEN o.kind = 'init' THEN s.end_ns END), MIN(s.begin_ns)), count(*)"
        " FROM span s JOIN ops o ON o.id = s.op GROUP BY s.rank ORDER BY s.rank";
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

int64_t cs_store_count_spans(cs_store *st)
{
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
