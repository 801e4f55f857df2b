/* an_verdict_slow_collective.c: a communicator whose collectives were slow
 * for a while, with every rank on time.
 *
 *   slow_collective  a window of >= CS_TRANSIENT_MIN steps where a
 *                communicator's transfer per step is out of line with its
 *                other steps (E, 7.5 MADs) while its arrival skew is less
 *                than half the excess (the ranks were on time) */
#include "config.h"
#include "analyzer/analysis/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cs_slow_collective_run(cs_verdict_ctx *a)
{
    int64_t ns = a->steps->nsteps, E = a->E, s0 = a->s0;
    char b1[32], b2[32], b3[48];
    /* slow collectives: on one communicator, a window of steps whose
     * transfer (last exit - last entry, summed over the step) is out of line
     * with its other steps while the arrivals are on time */
    for (int ci = 0; ci < a->coll->ncomms && ns - s0 >= 2 * CS_TRANSIENT_MIN; ci++) {
        const int64_t *xs = a->coll->cstep_xfer + (size_t)ci * (size_t)ns,
                      *sk = a->coll->cstep_skew + (size_t)ci * (size_t)ns;
        cs_vec xv = { 0 };
        for (int64_t s = s0; s < ns; s++)
            cs_vec_push(&xv, xs[s]);
        int64_t xm = cs__an_ctx_median(&xv), xmad = cs__an_ctx_mad(&xv, xm);
        cs_vec_free(&xv);
        int64_t thr = E > xmad * 15 / 2 ? E : xmad * 15 / 2;
#define CS_SLOWX(s) (xs[s] - xm > thr && 2 * sk[s] < xs[s] - xm)
        int64_t s = s0;
        while (s < ns) {
            if (!CS_SLOWX(s)) {
                s++;
                continue;
            }
            int64_t wa = s, wb = s, cnt = 1, t = s + 1;
            while (t < ns) {
                if (CS_SLOWX(t)) {
                    wb = t++;
                    cnt++;
                } else if (t + 1 < ns && CS_SLOWX(t + 1)) {
                    t++;
                } else {
                    break;
                }
            }
            s = wb + 1;
            if (cnt < CS_TRANSIENT_MIN || (double)cnt < 0.6 * (double)(wb - wa + 1))
                continue;
            cs_vec exv = { 0 }, skv = { 0 };
            for (int64_t u = wa; u <= wb; u++) {
                cs_vec_push(&exv, xs[u] - xm);
                cs_vec_push(&skv, sk[u]);
            }
            cs_straggler g;
            memset(&g, 0, sizeof g);
            snprintf(g.kind, sizeof g.kind, "slow_collective");
            g.rank = g.src = g.dst = -1;
            g.comm = a->coll->comm_ids[ci];
            g.first_step = wa;
            g.last_step = wb;
            g.begin_ns = a->steps->step_begin[wa];
            g.end_ns = a->steps->step_end[wb];
            g.lateness_ns = g.cost_ns = cs__an_ctx_median(&exv);
            int64_t skm = cs__an_ctx_median(&skv);
            cs_vec_free(&exv);
            cs_vec_free(&skv);
            const char *opn = a->coll->cstep_op[ci] >= 0 && a->coll->cstep_op[ci] < a->ctx->nops
                                  ? a->ctx->ops[a->coll->cstep_op[ci]].name
                                  : "?";
            cs__an_verdict_ns_text(b1, sizeof b1, g.cost_ns + xm);
            cs__an_verdict_ns_text(b2, sizeof b2, xm);
            char b4[32];
            cs__an_verdict_ns_text(b4, sizeof b4, skm);
            cs__an_verdict_fmt_steps(b3, sizeof b3, wa, wb);
            char cname[CS_COMMS_DISPLAY_MAX];
            cs__an_ctx_commname(a->ctx, g.comm, cname, sizeof cname);
            snprintf(g.evidence, sizeof g.evidence,
                     "the collectives of communicator %s (%s, ...) transferred for a median %s per step in %lld "
                     "of the %lld steps of %s against %s in the other steps, while every rank arrived on time "
                     "(arrival skew %s per step)",
                     cname, opn, b1, (long long)cnt, (long long)(wb - wa + 1), b3, b2, b4);
            if (cs__an_verdict_push(a, &g) != 0)
                return -1;
        }
#undef CS_SLOWX
    }
    return 0;
}

const cs_verdict_kind cs__an_verdict_slow_collective = { .name = "slow_collective", .run = cs_slow_collective_run };
