/* an_verdict_kit.c: what every straggler verdict kind uses (verdict.h):
 * a rank's cost in a step, the texts of steps and times, and adding a
 * verdict. Below the kinds and the verdict pass that runs them. */
#include "config.h"
#include "analyzer/analysis/verdict.h"

#include <stdio.h>

/* The cost rank r imposed in step s: for each instance it entered last, its
 * entry minus the next latest entry (what the step loses to it alone). The
 * lateness against the median of the others (steps->late) is larger for
 * ranks that lose the CPU now and then on an oversubscribed node, so the
 * verdicts decide on the cost. */
int64_t cs__an_verdict_lat(const cs_verdict_ctx *a, int64_t s, int r)
{
    return a->steps->xgap[cs__an_ctx_sr(a->ctx, s, r)];
}

void cs__an_verdict_fmt_steps(char *buf, size_t len, int64_t a, int64_t b)
{
    if (a == b)
        snprintf(buf, len, "step %lld", (long long)a);
    else
        snprintf(buf, len, "steps %lld-%lld", (long long)a, (long long)b);
}

int cs__an_verdict_push(cs_verdict_ctx *a, const cs_straggler *g)
{
    if (CS_VEC_RESERVE(a->v.a, a->v.cap, (size_t)a->v.n + 1) != 0)
        return -1;
    a->v.a[a->v.n++] = *g;
    return 0;
}

void cs__an_verdict_ns_in(char *b, size_t len, int64_t ns, int64_t unit_ns)
{
    if (unit_ns >= 10000000)
        snprintf(b, len, "%.1f ms", (double)ns / 1e6);
    else if (unit_ns >= 1000000)
        snprintf(b, len, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(b, len, "%.0f us", (double)ns / 1e3);
}

void cs__an_verdict_ns_text(char *b, size_t len, int64_t ns)
{
    if (ns >= 10000000)
        snprintf(b, len, "%.1f ms", (double)ns / 1e6);
    else if (ns >= 1000000)
        snprintf(b, len, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(b, len, "%.0f us", (double)ns / 1e3);
}
