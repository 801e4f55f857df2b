/* an_ctx.c: what every analysis pass shares: the index of the ranks
 * present, the notes for the report, the kind of each op, and the median
 * and MAD of a vector of times. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "common/stats.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t cs__an_ctx_median(cs_vec *v)
{
    return cs_stats_median_i64(v->a, v->n);
}

int64_t cs__an_ctx_mad(const cs_vec *v, int64_t m)
{
    return cs_stats_mad_i64(v->a, v->n, m);
}

void cs__an_ctx_note(cs_an_ctx *c, const char *fmt, ...)
{
    size_t l = strlen(c->notes);
    if (l + 4 >= sizeof c->notes)
        return;
    if (l)
        c->notes[l++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->notes + l, sizeof c->notes - l, fmt, ap);
    va_end(ap);
}

int cs__an_ctx_kind_is(const cs_an_ctx *c, int op, const char *kind)
{
    return op >= 0 && op < c->nops && strcmp(c->ops[op].kind, kind) == 0;
}

/* N-to-N: every member depends on every other (not scans, not rooted). */
int cs__an_ctx_op_is_n2n(const cs_an_ctx *c, int op)
{
    if (!cs__an_ctx_kind_is(c, op, "coll") || c->ops[op].nonblocking)
        return 0;
    const char *nm = c->ops[op].name;
    return strstr(nm, "scan") == NULL && strstr(nm, "Scan") == NULL;
}

int cs__an_ctx_is_n2n(const cs_an_ctx *c, int op)
{
    if (op < 0 || op >= c->nops)
        return 0;
    return c->op_n2n ? c->op_n2n[op] : cs__an_ctx_op_is_n2n(c, op);
}

int cs__an_ctx_is_async(const cs_an_ctx *c, int op)
{
    if (op < 0 || op >= c->nops)
        return 0;
    return strncmp(c->ops[op].name, "nccl", 4) == 0 || (c->c10d_async && strncmp(c->ops[op].name, "c10d_", 5) == 0);
}

int cs__an_ctx_ix_search(const cs_an_ctx *c, int r)
{
    int lo = 0, hi = c->ndense;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (c->rank_of[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->ndense && c->rank_of[lo] == r ? lo : -1;
}

static int cs_ctx_int_order(const void *x, const void *y)
{
    int p = *(const int *)x, q = *(const int *)y;
    return (p > q) - (p < q);
}

/* Ids up to this many per rank present (and a few thousand more) get a
 * table by id: as fast as before, and still memory by the ranks present. */
#define CS_CTX_BYID_PER_RANK 4
#define CS_CTX_BYID_SLACK 4096

int cs__an_ctx_index(cs_an_ctx *c, const int *ranks, int n)
{
    free(c->rank_of);
    free(c->byid);
    c->rank_of = NULL;
    c->byid = NULL;
    c->ndense = c->nbyid = 0;
    c->rank_of = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->rank_of);
    if (!c->rank_of)
        return -1;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (ranks[i] >= 0)
            c->rank_of[m++] = ranks[i];
    if (m > 1)
        qsort(c->rank_of, (size_t)m, sizeof *c->rank_of, cs_ctx_int_order);
    for (int i = 0; i < m; i++)
        if (c->ndense == 0 || c->rank_of[i] != c->rank_of[c->ndense - 1])
            c->rank_of[c->ndense++] = c->rank_of[i];
    if (c->ndense > 0) {
        int64_t top = (int64_t)c->rank_of[c->ndense - 1] + 1;
        if (top <= (int64_t)c->ndense * CS_CTX_BYID_PER_RANK + CS_CTX_BYID_SLACK) {
            c->byid = malloc((size_t)top * sizeof *c->byid);
            if (!c->byid)
                return -1;
            for (int64_t r = 0; r < top; r++)
                c->byid[r] = -1;
            for (int d = 0; d < c->ndense; d++)
                c->byid[c->rank_of[d]] = d;
            c->nbyid = (int)top;
        }
    }
    return 0;
}

const char *cs__an_ctx_commname(const cs_an_ctx *c, int64_t id, char *buf, size_t len)
{
    /* Read when asked: a handful of texts per analysis need a name. */
    cs_comms t;
    if (cs_store_comms_load(c->st, &t) != 0)
        return cs_store_comms_name(NULL, id, buf, len);
    cs_store_comms_name(&t, id, buf, len);
    cs_store_comms_free(&t);
    return buf;
}

void cs__an_ctx_scratch_file(char *buf, size_t len, const char *scratch, const char *stem, int i)
{
    const char *dot = strchr(stem, '.');
    if (dot)
        snprintf(buf, len, "%s/%.*s-%d%s", scratch, (int)(dot - stem), stem, i, dot);
    else
        snprintf(buf, len, "%s/%s-%d.db", scratch, stem, i);
}

char **cs__an_ctx_scratch_files(const char *scratch, const char *stem, int n)
{
    char **f = calloc((size_t)(n > 0 ? n : 1), sizeof *f);
    for (int i = 0; f && i < n; i++) {
        char p[4200];
        cs__an_ctx_scratch_file(p, sizeof p, scratch, stem, i);
        if (!(f[i] = strdup(p))) {
            cs__an_ctx_scratch_files_free(f, i);
            f = NULL;
        }
    }
    return f;
}

void cs__an_ctx_scratch_files_free(char **files, int n)
{
    for (int i = 0; files && i < n; i++)
        free(files[i]);
    free(files);
}
