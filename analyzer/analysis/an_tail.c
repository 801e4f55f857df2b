/* an_tail.c: tail latency per (op, communicator, size bucket, call site):
 * p50, p90, p99, p99.9 and max of the instance time (last exit - first
 * entry), and what the slowest 1 % of instances have in common: one rank
 * entering last, one time window, or a period in steps. */
#include "config.h"
#include "analyzer/analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

/* What this pass reads and writes (analysis.h). */
typedef struct cs_tail_io {
    cs_an_ctx *ctx;
    const cs_an_clocks *clocks;
} cs_tail_io;

typedef struct cs_tinst {
    int64_t d, t;
    int64_t step;
    int last;
} cs_tinst;

typedef struct cs_tailer {
    cs_tail_io *a;
    int have;
    cs_tail_row cur;
    cs_tinst *v;
    size_t n, cap;
    int fail;
} cs_tailer;

static int64_t cs_q(const cs_tinst *v, size_t n, double q)
{
    size_t k = (size_t)(q * (double)n + 0.999999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1].d;
}

static void cs_common(cs_tailer *t, cs_tail_row *row)
{
    size_t n = t->n, k = (n + 99) / 100;
    row->common[0] = '\0';
    if (n < 50 || k < 2)
        return;
    const cs_tinst *slow = t->v + (n - k);
    cs_tail_io *a = t->a;
    /* one rank last */
    for (size_t i = 0; i < k; i++) {
        int r = slow[i].last;
        if (r < 0)
            continue;
        size_t c = 0;
        for (size_t j = 0; j < k; j++)
            c += slow[j].last == r;
        if (c * 10 >= k * 6) {
            snprintf(row->common, sizeof row->common, "rank %d entered last in %zu of the %zu slowest", r, c, k);
            return;
        }
    }
    /* one time window */
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < k; i++) {
        if (slow[i].t < lo)
            lo = slow[i].t;
        if (slow[i].t > hi)
            hi = slow[i].t;
    }
    int64_t whole = a->clocks->t_last - a->clocks->t_first;
    if (whole > 0 && (double)(hi - lo) <= 0.1 * (double)whole) {
        snprintf(row->common, sizeof row->common, "all %zu slowest ran within %.3f s to %.3f s of the run", k,
                 (double)(lo - a->clocks->t_first) / 1e9, (double)(hi - a->clocks->t_first) / 1e9);
        return;
    }
    /* a period in steps */
    if (k >= 3)
        for (int p = 2; p <= 64; p++) {
            for (int ph = 0; ph < p; ph++) {
                size_t c = 0;
                for (size_t j = 0; j < k; j++)
                    c += slow[j].step >= 0 && slow[j].step % p == ph;
                if (c * 10 >= k * 8) {
                    /* the period must be rarer among all instances */
                    size_t call = 0;
                    for (size_t j = 0; j < n; j++)
                        call += t->v[j].step >= 0 && t->v[j].step % p == ph;
                    if (call * 2 < n) {
                        snprintf(row->common, sizeof row->common,
                                 "%zu of the %zu slowest fall on every %dth step (step %% %d == %d)", c, k, p, p, ph);
                        return;
                    }
                }
            }
        }
}

static int cs_tail_flush(cs_tailer *t)
{
    if (!t->have || t->n == 0)
        return 0;
    cs_tail_row row = t->cur;
    row.count = (int64_t)t->n;
    row.p50_ns = cs_q(t->v, t->n, 0.50);
    row.p90_ns = cs_q(t->v, t->n, 0.90);
    row.p99_ns = cs_q(t->v, t->n, 0.99);
    row.p999_ns = cs_q(t->v, t->n, 0.999);
    row.max_ns = t->v[t->n - 1].d;
    cs_common(t, &row);
    t->n = 0;
    return cs_awriter_tail(t->a->ctx->w, &row);
}

static int cs_tail_cb(const cs_inst_brief *b, void *arg)
{
    cs_tailer *t = arg;
    const char *cs = b->callsite ? b->callsite : "";
    if (!t->have || b->op != t->cur.op || b->comm != t->cur.comm || b->bucket != t->cur.bucket ||
        strcmp(cs, t->cur.callsite) != 0) {
        if (cs_tail_flush(t) != 0)
            return t->fail = 1;
        t->have = 1;
        memset(&t->cur, 0, sizeof t->cur);
        t->cur.op = b->op;
        t->cur.comm = b->comm;
        t->cur.bucket = b->bucket;
        snprintf(t->cur.callsite, sizeof t->cur.callsite, "%s", cs);
    }
    if (CS_VEC_RESERVE(t->v, t->cap, t->n + 1) != 0)
        return t->fail = 1;
    t->v[t->n++] = (cs_tinst){ b->dur_ns, b->first_entry_ns, b->step, b->last_rank };
    return 0;
}

int cs__an_tail(cs_an_ctx *ctx, const cs_an_clocks *clocks, char *err, size_t errlen)
{
    cs_tail_io io = { ctx, clocks }, *a = &io;
    cs_tailer t;
    memset(&t, 0, sizeof t);
    t.a = a;
    int rc = cs_store_instances_grouped(a->ctx->st, cs_tail_cb, &t);
    if (rc == 0 && !t.fail && cs_tail_flush(&t) != 0)
        rc = -1;
    free(t.v);
    if (rc != 0 || t.fail) {
        snprintf(err, errlen, "%s: cannot compute the tail latency", cs_store_path(a->ctx->st));
        return -1;
    }
    return 0;
}
