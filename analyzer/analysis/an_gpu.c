/* an_gpu.c: the GPU time of each rank (table gpu_time; docs/analysis.md,
 * "GPU time"): over the rank's GPU window, the time in compute kernels, in
 * communication with no compute running (exposed) and with compute
 * (overlapped), in memory copies and sets alone, and idle; per step too
 * when the analysis found steps. Then the ranks whose compute share stands
 * out from the others'.
 *
 * The store gives the GPU intervals rank after rank, each rank's by begin
 * (cs_store_gpu_intervals); one rank's are held at a time, classified (a
 * CUPTI kernel within a communication call's GPU time on its stream is
 * NCCL's own kernel: communication; any other, compute), turned into
 * begin/end events and swept in time order. The whole-trace rows (one per
 * rank) are held to the end, for the outlier rule. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "common/stats.h"

#include <stdlib.h>
#include <string.h>

/* A begin (+1) or an end (-1) of an interval of class cls. */
typedef struct cs_gpu_ev {
    int64_t t;
    int cls, d;
} cs_gpu_ev;

/* A GPU interval of the rank being read. */
typedef struct cs_gpu_iv {
    int64_t stream, b, e;
    int cls;
} cs_gpu_iv;

typedef struct cs_gpu {
    cs_an_ctx *ctx;
    const cs_an_clocks *clocks;
    const cs_an_steps *steps;
    int rank, have;
    cs_gpu_iv *iv; /* the rank's intervals, by begin */
    size_t niv, capIv;
    cs_gpu_iv *comm; /* the communication ones among them, by (stream, begin) */
    int64_t *reach;  /* [i]: the latest end of comm[0..i] on comm[i]'s stream */
    size_t capComm;
    cs_gpu_ev *ev;
    size_t nev, capEv;
    cs_gpu_time_row *step; /* [steps->nsteps]: the rank's per-step rows */
    cs_gpu_time_row *rows; /* the whole-trace rows, one per rank */
    size_t nrows, capRows;
    int fail;
} cs_gpu;

static int cs__an_gpu_ev_cmp(const void *x, const void *y)
{
    const cs_gpu_ev *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t;
}

static int cs__an_gpu_comm_cmp(const void *x, const void *y)
{
    const cs_gpu_iv *a = x, *b = y;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* The class of each CUPTI kernel of the rank: communication when it runs
 * within the GPU time of a communication call on its stream (NCCL's own
 * kernel), else compute. 0, or -1 out of memory. */
static int cs__an_gpu_classify(cs_gpu *g)
{
    size_t nc = 0, nk = 0;
    for (size_t i = 0; i < g->niv; i++) {
        nc += g->iv[i].cls == CS_GPU_COMM;
        nk += g->iv[i].cls == CS_GPU_KERNEL;
    }
    if (!nk)
        return 0;
    if (nc > g->capComm) {
        cs_gpu_iv *c = realloc(g->comm, nc * sizeof *c);
        if (!c)
            return -1;
        g->comm = c;
        int64_t *r = realloc(g->reach, nc * sizeof *r);
        if (!r)
            return -1;
        g->reach = r;
        g->capComm = nc;
    }
    nc = 0;
    for (size_t i = 0; i < g->niv; i++)
        if (g->iv[i].cls == CS_GPU_COMM)
            g->comm[nc++] = g->iv[i];
    qsort(g->comm, nc, sizeof *g->comm, cs__an_gpu_comm_cmp);
    for (size_t i = 0; i < nc; i++) {
        const cs_gpu_iv *c = &g->comm[i];
        int same = i > 0 && g->comm[i - 1].stream == c->stream;
        g->reach[i] = same && g->reach[i - 1] > c->e ? g->reach[i - 1] : c->e;
    }
    for (size_t i = 0; i < g->niv; i++) {
        cs_gpu_iv *k = &g->iv[i];
        if (k->cls != CS_GPU_KERNEL)
            continue;
        /* the last communication interval at or before (stream, begin) */
        size_t lo = 0, hi = nc;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            const cs_gpu_iv *c = &g->comm[mid];
            if (c->stream < k->stream || (c->stream == k->stream && c->b <= k->b))
                lo = mid + 1;
            else
                hi = mid;
        }
        int within = lo > 0 && g->comm[lo - 1].stream == k->stream && g->reach[lo - 1] >= k->e;
        k->cls = within ? CS_GPU_COMM : CS_GPU_COMPUTE;
    }
    return 0;
}

/* Time dt of a moment where cnt[] intervals of each class run, into r:
 * compute wins, then communication, then memory; nothing running is idle. */
static void cs__an_gpu_add(cs_gpu_time_row *r, const int *cnt, int64_t dt)
{
    r->window_ns += dt;
    if (cnt[CS_GPU_COMPUTE] > 0) {
        r->compute_ns += dt;
        if (cnt[CS_GPU_COMM] > 0)
            r->comm_overlapped_ns += dt;
    } else if (cnt[CS_GPU_COMM] > 0)
        r->comm_exposed_ns += dt;
    else if (cnt[CS_GPU_MEMORY] > 0)
        r->memory_ns += dt;
    else
        r->idle_ns += dt;
}

/* The end of step k for the GPU: the analysis's, but the last step has
 * none (the GPU runs the work of its last calls after them). */
static int64_t cs__an_gpu_step_end(const cs_an_steps *st, int64_t k)
{
    return k + 1 < st->nsteps ? st->step_end[k] : INT64_MAX;
}

/* The segment [a, b) of the rank's raw time line into the steps it falls
 * in (step bounds are aligned times; *sp: the first step not yet past). */
static void cs__an_gpu_steps(cs_gpu *g, int64_t a, int64_t b, const int *cnt, int64_t *sp)
{
    const cs_an_steps *st = g->steps;
    int64_t A = cs__an_align_time(g->clocks, g->rank, a), B = cs__an_align_time(g->clocks, g->rank, b);
    while (*sp < st->nsteps && cs__an_gpu_step_end(st, *sp) <= A)
        (*sp)++;
    for (int64_t k = *sp; k < st->nsteps && st->step_begin[k] < B; k++) {
        int64_t lo = A > st->step_begin[k] ? A : st->step_begin[k];
        int64_t end = cs__an_gpu_step_end(st, k), hi = B < end ? B : end;
        if (hi > lo)
            cs__an_gpu_add(&g->step[k], cnt, hi - lo);
    }
}

/* The rank's events swept: its whole-trace row kept, its step rows
 * written. 0, or -1 (out of memory, a write that failed). */
static int cs__an_gpu_flush(cs_gpu *g)
{
    if (!g->have || g->niv == 0)
        return 0;
    if (cs__an_gpu_classify(g) != 0 || CS_VEC_RESERVE(g->ev, g->capEv, 2 * g->niv) != 0)
        return -1;
    g->nev = 0;
    for (size_t i = 0; i < g->niv; i++) {
        g->ev[g->nev++] = (cs_gpu_ev){ g->iv[i].b, g->iv[i].cls, 1 };
        g->ev[g->nev++] = (cs_gpu_ev){ g->iv[i].e, g->iv[i].cls, -1 };
    }
    g->niv = 0;
    qsort(g->ev, g->nev, sizeof *g->ev, cs__an_gpu_ev_cmp);
    cs_gpu_time_row all;
    memset(&all, 0, sizeof all);
    all.rank = g->rank;
    all.step = -1;
    int64_t nsteps = g->step ? g->steps->nsteps : 0, sp = 0;
    for (int64_t k = 0; k < nsteps; k++) {
        memset(&g->step[k], 0, sizeof g->step[k]);
        g->step[k].rank = g->rank;
        g->step[k].step = k;
    }
    int cnt[4] = { 0, 0, 0, 0 };
    int64_t prev = g->ev[0].t;
    for (size_t i = 0; i < g->nev; i++) {
        const cs_gpu_ev *e = &g->ev[i];
        if (e->t > prev) {
            cs__an_gpu_add(&all, cnt, e->t - prev);
            if (nsteps)
                cs__an_gpu_steps(g, prev, e->t, cnt, &sp);
        }
        cnt[e->cls] += e->d;
        prev = e->t;
    }
    g->nev = 0;
    for (int64_t k = 0; k < nsteps; k++)
        if (g->step[k].window_ns > 0 && cs_awriter_gpu_time(g->ctx->w, &g->step[k]) != 0)
            return -1;
    if (CS_VEC_RESERVE(g->rows, g->capRows, g->nrows + 1) != 0)
        return -1;
    g->rows[g->nrows++] = all;
    return 0;
}

static int cs__an_gpu_cb(int rank, int cls, int64_t stream, int64_t b, int64_t e, void *arg)
{
    cs_gpu *g = arg;
    if (cls < CS_GPU_COMPUTE || cls > CS_GPU_KERNEL || cs__an_ctx_ix(g->ctx, rank) < 0)
        return 0; /* a process with no rank is left out, as by the other passes */
    if (!g->have || rank != g->rank) {
        if (cs__an_gpu_flush(g) != 0)
            return g->fail = 1;
        g->have = 1;
        g->rank = rank;
    }
    if (CS_VEC_RESERVE(g->iv, g->capIv, g->niv + 1) != 0)
        return g->fail = 1;
    g->iv[g->niv++] = (cs_gpu_iv){ stream, b, e, cls };
    return 0;
}

/* The outlier rule on the compute shares of the ranks (at least 4): a
 * share more than CS_GPU_OUTLIER_MADS MADs and CS_GPU_OUTLIER_POINTS
 * points of percentage from the median stands out. */
static int cs__an_gpu_outliers(cs_gpu *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nrows; i++)
        n += g->rows[i].window_ns > 0;
    if (n < 4)
        return 0;
    double *v = malloc(n * sizeof *v), *dev = malloc(n * sizeof *dev);
    if (!v || !dev) {
        free(v);
        free(dev);
        return -1;
    }
    n = 0;
    for (size_t i = 0; i < g->nrows; i++)
        if (g->rows[i].window_ns > 0)
            v[n++] = 100.0 * (double)g->rows[i].compute_ns / (double)g->rows[i].window_ns;
    double med = cs_stats_median_dbl(v, n);
    for (size_t i = 0; i < n; i++)
        dev[i] = v[i] > med ? v[i] - med : med - v[i];
    double mad = cs_stats_median_dbl(dev, n);
    double thr = CS_GPU_OUTLIER_MADS * mad > CS_GPU_OUTLIER_POINTS ? CS_GPU_OUTLIER_MADS * mad : CS_GPU_OUTLIER_POINTS;
    for (size_t i = 0; i < g->nrows; i++) {
        cs_gpu_time_row *r = &g->rows[i];
        if (r->window_ns <= 0)
            continue;
        double sh = 100.0 * (double)r->compute_ns / (double)r->window_ns;
        r->outlier = sh > med + thr ? 1 : sh < med - thr ? -1 : 0;
    }
    free(v);
    free(dev);
    return 0;
}

int cs__an_gpu(cs_an_ctx *ctx, const cs_an_clocks *clocks, const cs_an_steps *steps, char *err, size_t errlen)
{
    cs_gpu g;
    memset(&g, 0, sizeof g);
    g.ctx = ctx;
    g.clocks = clocks;
    g.steps = steps;
    if (steps->nsteps > 0 && steps->step_begin && steps->step_end &&
        !(g.step = calloc((size_t)steps->nsteps, sizeof *g.step))) {
        snprintf(err, errlen, "out of memory (%lld steps)", (long long)steps->nsteps);
        return -1;
    }
    int rc = cs_store_gpu_intervals(ctx->st, cs__an_gpu_cb, &g);
    if (rc == 0 && !g.fail && cs__an_gpu_flush(&g) != 0)
        g.fail = 1;
    if (rc == 0 && !g.fail && cs__an_gpu_outliers(&g) != 0)
        g.fail = 1;
    for (size_t i = 0; rc == 0 && !g.fail && i < g.nrows; i++)
        if (cs_awriter_gpu_time(ctx->w, &g.rows[i]) != 0)
            g.fail = 1;
    free(g.iv);
    free(g.comm);
    free(g.reach);
    free(g.ev);
    free(g.step);
    free(g.rows);
    if (rc != 0 || g.fail) {
        snprintf(err, errlen, "%s: cannot compute the GPU time of the ranks", cs_store_path(ctx->st));
        return -1;
    }
    return 0;
}
