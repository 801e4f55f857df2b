/* an_verdict.c: the verdict pass: per-step figures, per-rank statistics,
 * then the straggler verdicts, each kind in its own file (verdict.h) and
 * run in the order of the table below, each verdict with its evidence. */
#include "config.h"
#include "analyzer/analysis/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kinds, in the order they run (and their verdicts are stored). */
static const cs_verdict_kind *const cs_verdict_kinds[] = {
    &cs__an_verdict_persistent, &cs__an_verdict_transient,       &cs__an_verdict_recurring,
    &cs__an_verdict_slow_link,  &cs__an_verdict_slow_collective, &cs__an_verdict_slow_link_comm,
};
#define CS_NKINDS (sizeof cs_verdict_kinds / sizeof cs_verdict_kinds[0])

/* The members of one communicator, by rank index (cs_store_comm_members). */
typedef struct cs_verdict_members {
    int64_t comm;
    int *member; /* [ndense]: 1 for a member */
    const cs_an_ctx *ctx;
} cs_verdict_members;

static int cs_verdict_member_cb(const cs_comm_member *m, void *arg)
{
    cs_verdict_members *p = arg;
    int d = m->comm == p->comm ? cs__an_ctx_ix(p->ctx, m->rank) : -1;
    if (d >= 0)
        p->member[d] = 1;
    return 0;
}

int cs__an_verdict(cs_an_ctx *ctx, const cs_an_clocks *clocks, const cs_an_steps *steps, cs_an_coll *coll,
                   const cs_an_msgs *msgs, cs_an_links *links, char *err, size_t errlen)
{
    cs_verdict_ctx c = { ctx, clocks, steps, coll, msgs, links, 0, 0, 0, 0, { 0 } }, *a = &c;
    int n = a->ctx->ndense; /* the ranks present, by index (rank_of) */
    int64_t ns = a->steps->nsteps;
    cs_vec tv = { 0 };
    for (int64_t s = 0; s < ns; s++)
        cs_vec_push(&tv, a->steps->step_time[s]);
    int64_t tmed = tv.n ? cs__an_ctx_median(&tv) : 0;
    cs_vec_free(&tv);
    /* the minimum effect: an absolute floor and a share of the step. (Not
     * the step-to-step spread: a straggler's own effect widens it, and the
     * cost measure already ignores slowdowns that hit every rank.) */
    int64_t E = (int64_t)(CS_MIN_EFFECT_FRAC * (double)tmed);
    if (E < CS_MIN_EFFECT_NS)
        E = CS_MIN_EFFECT_NS;
    a->E = E;
    a->tmed = tmed;

    /* steps table */
    for (int64_t s = 0; s < ns; s++) {
        int best = -1;
        int64_t bl = 0;
        for (int d = 0; d < n; d++) {
            int r = a->ctx->rank_of[d];
            int64_t l2 = a->steps->late2[cs__an_ctx_sr(a->ctx, s, r)];
            if (l2 > bl)
                bl = l2, best = r;
        }
        cs_step_row row = { s,
                            a->steps->step_begin[s],
                            a->steps->step_end[s],
                            a->steps->step_time[s],
                            best,
                            a->steps->step_time[s] - bl > 0 ? a->steps->step_time[s] - bl : 0 };
        if (cs_awriter_step(a->ctx->w, &row) != 0)
            goto werr;
    }
    /* rank stats */
    for (int d = 0; d < n; d++) {
        int r = a->ctx->rank_of[d];
        /* median lateness: per step when there are steps, else per instance */
        int64_t ml = 0;
        if (ns > 0) {
            cs_vec sv = { 0 };
            for (int64_t s = 0; s < ns; s++)
                cs_vec_push(&sv, a->steps->late2[cs__an_ctx_sr(a->ctx, s, r)]);
            ml = cs__an_ctx_median(&sv);
            cs_vec_free(&sv);
        } else if (a->coll->lateness[d].n) {
            ml = cs__an_ctx_median(&a->coll->lateness[d]);
        }
        cs_rank_stat rs = { r, a->coll->times_last[d], a->coll->imposed[d], ml };
        if (cs_awriter_rank_stat(a->ctx->w, &rs) != 0)
            goto werr;
    }
    /* the verdicts, kind by kind: first those about one rank (the first
     * kind that gives a rank a verdict decides it), then those about the
     * whole run */
    a->s0 = ns > 4 ? 1 : 0;
    a->considered = ns - a->s0;
    for (int d = 0; d < n && a->considered > 0; d++) {
        int r = a->ctx->rank_of[d];
        for (size_t k = 0; k < CS_NKINDS; k++) {
            if (!cs_verdict_kinds[k]->rank)
                continue;
            int rc = cs_verdict_kinds[k]->rank(a, r);
            if (rc < 0)
                goto oom;
            /* a transient window still lets the recurring kind look: a
             * stall that recurs beside scheduler-sized windows is the
             * verdict (it decides which stays) */
            if (rc > 0 && cs_verdict_kinds[k] != &cs__an_verdict_transient)
                break;
        }
    }
    for (size_t k = 0; k < CS_NKINDS; k++) {
        if (!cs_verdict_kinds[k]->run)
            continue;
        int rc = cs_verdict_kinds[k]->run(a);
        if (rc == -1)
            goto oom;
        if (rc == -2) {
            free(a->v.a);
            snprintf(err, errlen, "%s: cannot read the collective instances or communicators back",
                     cs_store_path(a->ctx->st));
            return -1;
        }
    }
    /* A rank whose lateness a slow link of its own explains is no straggler. */
    for (int i = 0; i < a->v.n; i++) {
        if (strcmp(a->v.a[i].kind, "slow_link") != 0)
            continue;
        for (int j = 0; j < a->v.n; j++) {
            cs_straggler *g = &a->v.a[j];
            if ((strcmp(g->kind, "persistent") == 0 || strcmp(g->kind, "transient") == 0 ||
                 strcmp(g->kind, "recurring") == 0) &&
                (g->rank == a->v.a[i].src || g->rank == a->v.a[i].dst) &&
                g->lateness_ns <= a->v.a[i].cost_ns * 3 / 2 + E) {
                g->kind[0] = '\0';
                size_t l = strlen(a->v.a[i].evidence);
                snprintf(a->v.a[i].evidence + l, sizeof a->v.a[i].evidence - l, "; it explains rank %d's lateness",
                         g->rank);
            }
        }
    }
    /* A member of a slow communicator spends the stall inside its
     * collectives there, which the collectives on its other communicators
     * count as its own time: a member's lateness that the stall covers is no
     * straggler either. */
    for (int i = 0; i < a->v.n; i++) {
        cs_straggler *l = &a->v.a[i];
        if (strcmp(l->kind, "slow_link") != 0 || l->src >= 0 || l->comm == 0)
            continue;
        cs_verdict_members m = { l->comm, calloc((size_t)(n > 0 ? n : 1), sizeof(int)), a->ctx };
        if (!m.member)
            goto oom;
        if (cs_store_comm_members(a->ctx->st, cs_verdict_member_cb, &m) != 0) {
            free(m.member);
            free(a->v.a);
            snprintf(err, errlen, "%s: cannot read the communicators back", cs_store_path(a->ctx->st));
            return -1;
        }
        for (int j = 0; j < a->v.n; j++) {
            cs_straggler *g = &a->v.a[j];
            int d = cs__an_ctx_ix(a->ctx, g->rank);
            if ((strcmp(g->kind, "persistent") == 0 || strcmp(g->kind, "transient") == 0 ||
                 strcmp(g->kind, "recurring") == 0) &&
                d >= 0 && m.member[d] && g->cost_ns <= l->cost_ns * 3 / 2 + E) {
                g->kind[0] = '\0';
                size_t k = strlen(l->evidence);
                snprintf(l->evidence + k, sizeof l->evidence - k, "; it explains rank %d's lateness", g->rank);
            }
        }
        free(m.member);
    }
    for (int i = 0; i < a->v.n; i++)
        if (a->v.a[i].kind[0] && cs_awriter_straggler(a->ctx->w, &a->v.a[i]) != 0)
            goto werr;
    free(a->v.a);
    return 0;
oom:
    free(a->v.a);
    snprintf(err, errlen, "out of memory");
    return -1;
werr:
    free(a->v.a);
    snprintf(err, errlen, "%s: cannot write the analysis", cs_store_path(a->ctx->st));
    return -1;
}
