/* an_ctx.c: what every analysis pass shares: the notes for the report,
 * the kind of each op, and the median and MAD of a vector of times. */
#include "config.h"
#include "analyzer/analysis.h"
#include "common/stats.h"

#include <stdarg.h>
#include <stdio.h>
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
