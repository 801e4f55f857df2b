/* an_verdict_slow_link.c: a directed pair of ranks whose messages are slow.
 *
 *   slow_link    a directed pair whose median transfer (receive end after the
 *                later arrival) exceeds the median of the OTHER pairs by
 *                more than E and 3 robust sigmas (4.5 MADs), is at least
 *                twice it, with at least 80 % of its messages beyond the
 *                noise ceiling (the 95th percentile of the other pairs'
 *                single transfers, those pairs in line), its senders on time
 *                (late by less than a quarter of the excess: a sender that
 *                loses the CPU around its sends on an oversubscribed node is
 *                late and slow to send alike) and its receiver not late as a
 *                sender by half the excess; not the echo of another slow
 *                link (its receives the calls that sent that link's
 *                messages, as in a Sendrecv). The pass drops the persistent
 *                or transient verdict of its own ends that it explains. */
#include "config.h"
#include "analyzer/analysis/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pair's place in the order of (sender, receiver). */
typedef struct cs_slow_link_key {
    int64_t key;
    size_t i;
} cs_slow_link_key;

static int cs_slow_link_order(const void *x, const void *y)
{
    int64_t p = ((const cs_slow_link_key *)x)->key, q = ((const cs_slow_link_key *)y)->key;
    return (p > q) - (p < q);
}

static int cs_slow_link_cmp(const void *x, const void *y)
{
    int64_t p = *(const int64_t *)x, q = *(const int64_t *)y;
    return (p > q) - (p < q);
}

static int cs_slow_link_run(cs_verdict_ctx *a)
{
    int n = a->ctx->ndense; /* pairs are indexed by the ranks present */
    int64_t ns = a->steps->nsteps, E = a->E;
    char b1[32], b2[32];
    /* slow links: a directed pair's transfer (the receive's end after the
     * later of the two arrivals) against the distribution of the other
     * pairs, with most of its messages out of line and its senders on time */
    if (a->links->npairs) {
        const cs_an_links *L = a->links;
        size_t np = L->npairs;
        int64_t *pm = calloc(np, sizeof *pm), *sv = calloc(np, sizeof *sv);
        cs_slow_link_key *ord = calloc(np, sizeof *ord);
        if (!pm || !sv || !ord) {
            free(pm);
            free(sv);
            free(ord);
            return -1;
        }
        size_t npairs = 0;
        for (size_t i = 0; i < np; i++) {
            pm[i] = -1;
            ord[i] = (cs_slow_link_key){ (int64_t)L->pair[i].src * n + L->pair[i].dst, i };
            if (L->pair[i].xfer.n >= 5) {
                pm[i] = cs__an_ctx_median(&L->pair[i].xfer);
                sv[npairs++] = pm[i];
            }
        }
        /* in the order of (sender, receiver), as the verdicts are listed */
        qsort(ord, np, sizeof *ord, cs_slow_link_order);
        /* No median of the others is below sv_lo (removing one value moves
         * no order statistic down): a pair not twice that, or not above it
         * by the noise floor, is no candidate, without the others' median
         * and MAD (which cost a pass over all pairs each). */
        qsort(sv, npairs, sizeof *sv, cs_slow_link_cmp);
        int64_t sv_lo = npairs >= 2 ? sv[(npairs - 2) / 2] : 0;
        for (size_t oi = 0; oi < np && npairs >= 3; oi++) {
            size_t i = ord[oi].i;
            if (pm[i] < 0 || pm[i] < 2 * sv_lo || pm[i] - sv_lo <= E)
                continue;
            cs_vec oth = { 0 };
            for (size_t j = 0; j < np; j++)
                if (j != i && pm[j] >= 0)
                    cs_vec_push(&oth, pm[j]);
            int64_t M = cs__an_ctx_median(&oth);
            int64_t mad = cs__an_ctx_mad(&oth, M);
            cs_vec_free(&oth);
            int64_t ex = pm[i] - M, thr = E > mad * 9 / 2 ? E : mad * 9 / 2;
            if (ex <= thr || pm[i] < 2 * M)
                continue;
            /* The noise ceiling: the 95th percentile of the single
             * transfers of the other pairs in line (a receiver that loses
             * the CPU makes whole scheduler slices of them). A slow link
             * delays nearly every message beyond it; scheduling noise that
             * happens to favour one pair does not. */
            cs_vec pool = { 0 };
            for (size_t j = 0; j < np; j++)
                if (j != i && pm[j] >= 0 && pm[j] - M <= thr)
                    for (size_t k = 0; k < L->pair[j].xfer.n; k++)
                        cs_vec_push(&pool, L->pair[j].xfer.a[k]);
            int64_t ceil = M + E / 2;
            if (pool.n) {
                cs__an_ctx_median(&pool); /* sorts */
                int64_t p95 = pool.a[(size_t)(0.95 * (double)(pool.n - 1))];
                if (p95 > ceil)
                    ceil = p95;
            }
            cs_vec_free(&pool);
            size_t out = 0, msgs = L->pair[i].xfer.n;
            for (size_t k = 0; k < msgs; k++)
                out += L->pair[i].xfer.a[k] > ceil;
            if (out * 5 < msgs * 4)
                continue;
            int64_t ls = cs__an_ctx_median(&L->pair[i].late);
            if (ls * 4 > ex)
                continue;
            /* the receiver on time too: late as a sender itself by half the
             * excess, it was starved of the CPU, not waiting on the link */
            cs_vec rl = { 0 };
            int dst = L->pair[i].dst;
            for (size_t k = 0; k < np; k++)
                if (L->pair[k].src == dst)
                    for (size_t q = 0; q < L->pair[k].late.n; q++)
                        cs_vec_push(&rl, L->pair[k].late.a[q]);
            int64_t rlm = rl.n ? cs__an_ctx_median(&rl) : 0;
            cs_vec_free(&rl);
            if (rlm * 2 > ex)
                continue;
            cs_straggler g;
            memset(&g, 0, sizeof g);
            snprintf(g.kind, sizeof g.kind, "slow_link");
            g.src = a->ctx->rank_of[L->pair[i].src];
            g.dst = a->ctx->rank_of[L->pair[i].dst];
            g.rank = g.src;
            g.begin_ns = L->pair[i].t0;
            g.end_ns = L->pair[i].t1;
            double per = ns > 0 ? (double)msgs / (double)ns : 1.0;
            if (per < 1)
                per = 1;
            g.lateness_ns = ex;
            g.cost_ns = (int64_t)((double)ex * per);
            g.first_step = ns > 0 ? 0 : -1;
            g.last_step = ns > 0 ? ns - 1 : -1;
            cs__an_verdict_ns_text(b1, sizeof b1, pm[i]);
            cs__an_verdict_ns_text(b2, sizeof b2, M);
            char b4[32], b5[32];
            cs__an_verdict_ns_text(b4, sizeof b4, ls);
            cs__an_verdict_ns_text(b5, sizeof b5, mad);
            snprintf(g.evidence, sizeof g.evidence,
                     "%zu messages from rank %d to rank %d took a median %s after both sides arrived, against a median "
                     "%s (MAD %s) for the other %zu pairs; %zu of them out of line, while their senders were late by "
                     "a median %s only",
                     msgs, g.src, g.dst, b1, b2, b5, npairs - 1, out, b4);
            if (cs__an_verdict_push(a, &g) != 0) {
                free(pm);
                free(sv);
                free(ord);
                return -1;
            }
        }
        free(pm);
        free(sv);
        free(ord);
    }

    /* A slow link whose receives were, for most of its messages, the very
     * calls that sent another slow link's messages (a Sendrecv held up by
     * its send half) is that link's echo, not a slow link of its own; echoes
     * chain (0->1 held up by 1->2, 3->0 by 0->1). Decided on the whole set
     * first; when every slow link echoes another, none is dropped. */
    {
        int nlinks = 0, nechoes = 0;
        char *echo = calloc((size_t)(a->v.n ? a->v.n : 1), 1);
        if (!echo)
            return -1;
        for (int i = 0; i < a->v.n && a->msgs->nmsgs > 0; i++) {
            if (strcmp(a->v.a[i].kind, "slow_link") != 0)
                continue;
            nlinks++;
            for (int j = 0; j < a->v.n && !echo[i]; j++) {
                if (j == i || strcmp(a->v.a[j].kind, "slow_link") != 0 || a->v.a[j].src != a->v.a[i].dst)
                    continue;
                cs_map sends = { 0 };
                size_t mine = 0, hits = 0;
                cs_msg_iter it;
                int rc = cs__an_msgs_begin(a->msgs, &it);
                if (rc == 0) {
                    for (const cs_msg *m; rc == 0 && (m = cs__an_msgs_next(&it));)
                        if (m->src == a->v.a[j].src && m->dst == a->v.a[j].dst && m->send_span > 0)
                            rc = cs_map_put(&sends, (uint64_t)m->send_span, 1) != 0 ? -1 : 0;
                    if (cs__an_msgs_end(&it) != 0)
                        rc = -1;
                }
                if (rc == 0 && (rc = cs__an_msgs_begin(a->msgs, &it)) == 0) {
                    for (const cs_msg *m; (m = cs__an_msgs_next(&it));) {
                        int64_t one;
                        if (m->src != a->v.a[i].src || m->dst != a->v.a[i].dst)
                            continue;
                        mine++;
                        hits += m->recv_span > 0 && cs_map_get(&sends, (uint64_t)m->recv_span, &one);
                    }
                    rc = cs__an_msgs_end(&it);
                }
                if (rc != 0) {
                    cs_map_free(&sends);
                    free(echo);
                    return -1;
                }
                cs_map_free(&sends);
                if (mine && hits * 2 >= mine) {
                    echo[i] = 1;
                    nechoes++;
                }
            }
        }
        for (int i = 0; i < a->v.n && nechoes < nlinks; i++)
            if (echo[i])
                a->v.a[i].kind[0] = '\0';
        free(echo);
    }
    return 0;
}

const cs_verdict_kind cs__an_verdict_slow_link = { .name = "slow_link", .run = cs_slow_link_run };
