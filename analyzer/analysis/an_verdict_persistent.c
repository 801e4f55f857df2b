/* an_verdict_persistent.c: a rank late in most steps.
 *
 *   persistent   late in >= CS_PERSIST_FRAC (3/4) of the steps; cost: the
 *                median L over its late steps. (A delayed rank is late in
 *                every step; under MPICH on 2 loaded cores one starved rank
 *                was late by a scheduler slice or three in 10 of 19 steps
 *                of a clean run.) */
#include "config.h"
#include "analyzer/analysis/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cs_persistent_rank(cs_verdict_ctx *a, int r)
{
    int64_t ns = a->steps->nsteps, E = a->E, s0 = a->s0, considered = a->considered, tmed = a->tmed;
    char b1[32], b2[32], b3[48];
    int64_t late = 0, first = -1, lastk = -1, lastin = 0;
    cs_vec lv = { 0 }, cv = { 0 };
    for (int64_t s = s0; s < ns; s++)
        if (cs__an_verdict_lat(a, s, r) > E) {
            late++;
            cs_vec_push(&lv, a->steps->late[cs__an_ctx_sr(a->ctx, s, r)]);
            cs_vec_push(&cv, cs__an_verdict_lat(a, s, r));
            lastin += a->steps->late2[cs__an_ctx_sr(a->ctx, s, r)] > 0;
            if (first < 0)
                first = s;
            lastk = s;
        }
    int64_t cmed = cv.n ? cs__an_ctx_median(&cv) : 0;
    if (late >= 2 && (double)late >= CS_PERSIST_FRAC * (double)considered && cmed > E) {
        cs_straggler g;
        memset(&g, 0, sizeof g);
        snprintf(g.kind, sizeof g.kind, "persistent");
        g.rank = r;
        g.src = g.dst = -1;
        g.first_step = first;
        g.last_step = lastk;
        g.begin_ns = a->steps->step_begin[first];
        g.end_ns = a->steps->step_end[lastk];
        g.lateness_ns = cs__an_ctx_median(&lv);
        g.cost_ns = cmed;
        int64_t mad = cs__an_ctx_mad(&cv, cmed);
        /* one unit for the sentence: that of its largest time */
        int64_t big = tmed > g.cost_ns ? tmed : g.cost_ns;
        big = g.lateness_ns > big ? g.lateness_ns : big;
        cs__an_verdict_ns_in(b1, sizeof b1, g.cost_ns, big);
        cs__an_verdict_ns_in(b2, sizeof b2, mad, big);
        char b4[32], b5[32];
        cs__an_verdict_ns_in(b4, sizeof b4, g.lateness_ns, big);
        cs__an_verdict_ns_in(b5, sizeof b5, tmed, big);
        cs__an_verdict_fmt_steps(b3, sizeof b3, first, lastk);
        snprintf(g.evidence, sizeof g.evidence,
                 "rank %d spent a median %s (MAD %s) longer between collectives than the next slowest rank "
                 "in %lld of %lld steps (%s), and entered last in %lld of them (by a median %s against the "
                 "others' median entry); the step would be about %s shorter without it (median step %s)",
                 r, b1, b2, (long long)late, (long long)considered, b3, (long long)lastin, b4, b1, b5);
        cs_vec_free(&cv);
        cs_vec_free(&lv);
        return cs__an_verdict_push(a, &g) != 0 ? -1 : 1;
    }
    cs_vec_free(&lv);
    cs_vec_free(&cv);
    return 0;
}

const cs_verdict_kind cs__an_verdict_persistent = { .name = "persistent", .rank = cs_persistent_rank };
