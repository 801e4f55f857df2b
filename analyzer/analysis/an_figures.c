/* an_figures.c: the trace's own figures as the report prints them, kept
 * with the analysis (tables group_stats and rank_busy): per op,
 * communicator and call site the calls, bytes, time and duration
 * quantiles, and per rank the time in traced calls. Each is a scan of
 * every span and a sort of them (libtrace/store_stats.c; op and call
 * site from one scan); done once here,
 * a report of a stored analysis reads a few rows instead (1.44 M spans:
 * 4.8 s a report before). */
#include "config.h"
#include "analyzer/analysis/analysis.h"

#include <stdio.h>
#include <stdlib.h>

static int cs__an_figures_busy(int rank, int64_t busy, int64_t wall, int64_t spans, void *arg)
{
    cs_rank_busy_row r = { rank, busy, wall, spans };
    return cs_awriter_rank_busy(arg, &r) != 0 ? -1 : 0;
}

int cs__an_figures(cs_an_ctx *ctx, char *err, size_t errlen)
{
    /* per op and per call site from one scan (the same calls), per
     * communicator from another; stored in that order: op, comm, callsite */
    static const char *const grps[] = { "op", "comm", "callsite" };
    cs_group_stat *a[3] = { NULL, NULL, NULL };
    size_t n[3] = { 0, 0, 0 };
    int bad = cs_store_group_stats2(ctx->st, grps[0], &a[0], &n[0], grps[2], &a[2], &n[2]) != 0 ? 0
              : cs_store_group_stats(ctx->st, grps[1], &a[1], &n[1]) != 0                       ? 1
                                                                                                : -1;
    if (bad >= 0) {
        for (int i = 0; i < 3; i++)
            free(a[i]);
        snprintf(err, errlen, "%s: cannot compute the time per %s", cs_store_path(ctx->st),
                 bad == 0 ? "op and call site" : grps[1]);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < n[i] && rc == 0; k++) {
            cs_group_stat_row r;
            snprintf(r.grp, sizeof r.grp, "%s", grps[i]);
            r.s = a[i][k];
            if ((rc = cs_awriter_group_stat(ctx->w, &r)) != 0)
                snprintf(err, errlen, "%s: cannot store the time per %s", cs_store_path(ctx->st), grps[i]);
        }
    for (int i = 0; i < 3; i++)
        free(a[i]);
    if (rc != 0)
        return -1;
    if (cs_store_rank_busy(ctx->st, cs__an_figures_busy, ctx->w) != 0) {
        snprintf(err, errlen, "%s: cannot compute or store the time in calls per rank", cs_store_path(ctx->st));
        return -1;
    }
    return 0;
}
