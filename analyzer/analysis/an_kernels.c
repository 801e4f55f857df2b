/* an_kernels.c: the top GPU kernels of each rank (table kernel_stats;
 * docs/analysis.md, "GPU kernels"): per kernel name (copies and sets too),
 * how many ran, their total GPU time, the median and p99 of their
 * durations; the CS_KERNEL_TOP of largest total per rank are kept.
 *
 * The store gives the named spans rank after rank, each rank's by name
 * (cs_store_kernel_spans); one name's durations are held at a time, one
 * rank's rows until the rank is done. Only imported traces carry kernel
 * names (span_kernel): for the others the table stays empty. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "common/stats.h"

#include <stdlib.h>
#include <string.h>

typedef struct cs_kern {
    cs_an_ctx *ctx;
    int rank, have;
    int64_t name_id;
    cs_kernel_row cur; /* the name being read */
    int64_t *dur;      /* its durations */
    size_t ndur, capDur;
    cs_kernel_row *rows; /* the rank's names so far */
    size_t nrows, capRows;
    int fail;
} cs_kern;

/* The largest total first, then by name. */
static int cs__an_kernels_cmp(const void *x, const void *y)
{
    const cs_kernel_row *a = x, *b = y;
    if (a->total_ns != b->total_ns)
        return a->total_ns < b->total_ns ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* The name being read into the rank's rows. 0, or -1 out of memory. */
static int cs__an_kernels_name_done(cs_kern *k)
{
    if (!k->ndur)
        return 0;
    qsort(k->dur, k->ndur, sizeof *k->dur, cs_stats_cmp_i64);
    k->cur.count = (int64_t)k->ndur;
    k->cur.median_ns = cs_stats_quantile(k->dur, k->ndur, 0.5);
    k->cur.p99_ns = cs_stats_quantile(k->dur, k->ndur, 0.99);
    k->ndur = 0;
    if (CS_VEC_RESERVE(k->rows, k->capRows, k->nrows + 1) != 0)
        return -1;
    k->rows[k->nrows++] = k->cur;
    return 0;
}

/* The rank's top rows written. 0, or -1 (out of memory, a failed write). */
static int cs__an_kernels_rank_done(cs_kern *k)
{
    if (cs__an_kernels_name_done(k) != 0)
        return -1;
    qsort(k->rows, k->nrows, sizeof *k->rows, cs__an_kernels_cmp);
    for (size_t i = 0; i < k->nrows && i < CS_KERNEL_TOP; i++)
        if (cs_awriter_kernel(k->ctx->w, &k->rows[i]) != 0)
            return -1;
    k->nrows = 0;
    return 0;
}

static int cs__an_kernels_cb(int rank, int64_t name_id, const char *name, int memory, int64_t dur, void *arg)
{
    cs_kern *k = arg;
    if (cs__an_ctx_ix(k->ctx, rank) < 0)
        return 0; /* a process with no rank is left out, as by the other passes */
    if (!k->have || rank != k->rank) {
        if (k->have && cs__an_kernels_rank_done(k) != 0)
            return k->fail = 1;
        k->have = 1;
        k->rank = rank;
        k->name_id = name_id - 1; /* a new name */
    }
    if (name_id != k->name_id) {
        if (cs__an_kernels_name_done(k) != 0)
            return k->fail = 1;
        memset(&k->cur, 0, sizeof k->cur);
        k->cur.rank = rank;
        snprintf(k->cur.name, sizeof k->cur.name, "%s", name);
        snprintf(k->cur.category, sizeof k->cur.category, "%s", memory ? "memory" : "compute");
        k->name_id = name_id;
    }
    if (CS_VEC_RESERVE(k->dur, k->capDur, k->ndur + 1) != 0)
        return k->fail = 1;
    k->dur[k->ndur++] = dur > 0 ? dur : 0;
    k->cur.total_ns += dur > 0 ? dur : 0;
    return 0;
}

int cs__an_kernels(cs_an_ctx *ctx, char *err, size_t errlen)
{
    cs_kern k;
    memset(&k, 0, sizeof k);
    k.ctx = ctx;
    int rc = cs_store_kernel_spans(ctx->st, cs__an_kernels_cb, &k);
    if (rc == 0 && !k.fail && k.have && cs__an_kernels_rank_done(&k) != 0)
        k.fail = 1;
    free(k.dur);
    free(k.rows);
    if (rc != 0 || k.fail) {
        snprintf(err, errlen, "%s: cannot compute the GPU kernel statistics of the ranks", cs_store_path(ctx->st));
        return -1;
    }
    return 0;
}
