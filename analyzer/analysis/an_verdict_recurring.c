/* an_verdict_recurring.c: a rank late again and again, in a fraction of the
 * steps: every k-th step, or at irregular intervals (a stall that comes
 * back: garbage collection, checkpoints, data loading).
 *
 *   recurring    its affected steps: L above the minimum effect E and above
 *                its on-time steps' median + CS_RECURRING_MADS x their MAD
 *                (on-time: L <= E; a baseline over all steps would move
 *                with the stall once it hits half of them); of the steps
 *                above that, an upper group (in L) whose smallest L is at
 *                least half its median (a stall costs about the same each
 *                time; noise beside it is smaller): the largest such group
 *                first, else the one grown from the top while it holds.
 *                At least CS_RECURRING_MIN affected steps, fewer than
 *                CS_PERSIST_FRAC of the steps (else persistent), not one
 *                window (at most half of them next to another affected
 *                step; a window is transient), standing out from the other
 *                ranks (at least twice the median count of their steps late
 *                by half its smallest affected L, plus CS_RECURRING_MIN:
 *                scheduling noise on shared cores makes scattered late
 *                steps, but on every rank alike), and the same stall each
 *                time (MAD of the affected L at most 1/CS_RECURRING_SPREAD
 *                of their median).
 *                Periodic when more than half of the affected steps, and
 *                CS_RECURRING_MIN_PERIODIC or more, fall on one phase of a
 *                period k >= 2 and at least CS_RECURRING_PHASE of the run's
 *                steps of that phase are affected; its affected steps are
 *                then those of the phase. Else irregular, which needs a
 *                cost of CS_RECURRING_IRREGULAR x E or more: a rank that
 *                loses the CPU for a scheduler slice or two (4-9 ms) now
 *                and then on shared cores shows that much excess in a few
 *                scattered steps, about the same each time; a period does
 *                not arise by chance.
 *                Cost: the median L over the affected steps (per affected
 *                step, as for persistent), and their sum (the total). */
#include "config.h"
#include "analyzer/analysis/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CS_RECURRING_MIN 3
#define CS_RECURRING_MADS 5
#define CS_RECURRING_PHASE 0.8
#define CS_RECURRING_SPREAD 3
#define CS_RECURRING_MIN_PERIODIC 4
#define CS_RECURRING_IRREGULAR 5

/* The affected steps of rank r (in order, into out): the steps where its
 * L stands out from its own on-time steps, grouped as `top` says (below);
 * *thrp: the threshold. */
static int cs_recurring_affected(const cs_verdict_ctx *a, int r, int top, cs_vec *out, int64_t *thrp)
{
    int64_t ns = a->steps->nsteps, E = a->E;
    cs_vec on = { 0 };
    for (int64_t s = a->s0; s < ns; s++) {
        int64_t l = cs__an_verdict_lat(a, s, r);
        if (l <= E && cs_vec_push(&on, l) != 0) {
            cs_vec_free(&on);
            return -1;
        }
    }
    int64_t med = on.n ? cs__an_ctx_median(&on) : 0;
    int64_t mad = on.n ? cs__an_ctx_mad(&on, med) : 0;
    cs_vec_free(&on);
    int64_t thr = med + CS_RECURRING_MADS * mad;
    if (thr < E)
        thr = E;
    cs_vec hi = { 0 };
    for (int64_t s = a->s0; s < ns; s++)
        if (cs__an_verdict_lat(a, s, r) > thr && cs_vec_push(&hi, cs__an_verdict_lat(a, s, r)) != 0) {
            cs_vec_free(&hi);
            return -1;
        }
    /* a stall that recurs costs about the same each time: of the steps
     * above the threshold (sorted), an upper group whose smallest L is at
     * least half its median; those below it are noise beside the stall
     * (steps a scheduler slice or a few late). top 0: the largest such
     * group (a small stall among larger noise, 4 ms stalls beside a few
     * 8 ms steps); top 1: the group grown from the top while it holds (a
     * large stall among more noise, 50 ms stalls beside many 4 ms steps).
     * None: no group. */
    if (hi.n)
        cs__an_ctx_median(&hi); /* sorts */
    size_t lo = hi.n;
    if (!top) {
        for (size_t i = 0; i + CS_RECURRING_MIN <= hi.n; i++)
            if (hi.a[i] * 2 >= hi.a[i + (hi.n - i) / 2]) {
                lo = i;
                break;
            }
    } else {
        for (size_t i = hi.n >= CS_RECURRING_MIN ? hi.n - CS_RECURRING_MIN + 1 : 0; i-- > 0;) {
            if (hi.a[i] * 2 < hi.a[i + (hi.n - i) / 2])
                break;
            lo = i;
        }
    }
    if (lo < hi.n && hi.a[lo] - 1 > thr)
        thr = hi.a[lo] - 1;
    else if (lo == hi.n && hi.n)
        thr = hi.a[hi.n - 1];
    cs_vec_free(&hi);
    *thrp = thr;
    for (int64_t s = a->s0; s < ns; s++)
        if (cs__an_verdict_lat(a, s, r) > thr && cs_vec_push(out, s) != 0)
            return -1;
    return 0;
}

/* Period and phase of the sorted steps st[0..n) among the steps s0..ns-1:
 * 0 when irregular. The candidates: the intervals from each step to the
 * next three (a noise step between two stalls splits their interval); the
 * one whose best phase holds the most steps wins (the smaller on a tie:
 * every multiple of a period fits too). */
static int64_t cs_recurring_period(const int64_t *st, size_t n, int64_t s0, int64_t ns, int64_t *phase)
{
    if (n < CS_RECURRING_MIN_PERIODIC || n > 4096)
        return 0;
    cs_map tried = { 0 };
    int64_t bestk = 0, bestph = 0, bestn = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n && j <= i + 3; j++) {
            int64_t k = st[j] - st[i], one;
            if (k < 2 || cs_map_get(&tried, (uint64_t)k, &one))
                continue;
            if (cs_map_put(&tried, (uint64_t)k, 1) != 0)
                goto out;
            cs_map cnt = { 0 };
            int64_t ph = -1, c = 0;
            for (size_t q = 0; q < n; q++) {
                int64_t v = 0;
                cs_map_get(&cnt, (uint64_t)(st[q] % k), &v);
                if (cs_map_put(&cnt, (uint64_t)(st[q] % k), v + 1) != 0) {
                    cs_map_free(&cnt);
                    goto out;
                }
                if (v + 1 > c || (v + 1 == c && st[q] % k < ph))
                    c = v + 1, ph = st[q] % k;
            }
            cs_map_free(&cnt);
            /* the steps of that phase in the whole run: most of them hit */
            int64_t first = s0 + ((ph - s0 % k) % k + k) % k;
            int64_t expect = first < ns ? (ns - 1 - first) / k + 1 : 0;
            if (c < CS_RECURRING_MIN_PERIODIC || (double)c < CS_RECURRING_PHASE * (double)expect || 2 * c <= (int64_t)n)
                continue;
            if (c > bestn || (c == bestn && k < bestk))
                bestn = c, bestk = k, bestph = ph;
        }
out:
    cs_map_free(&tried);
    *phase = bestph;
    return bestk;
}

/* The list "3,6,9" of the steps, as much as fits. */
static void cs_recurring_list(char *b, size_t len, const int64_t *st, size_t n)
{
    size_t l = 0;
    b[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(b + l, len - l, "%s%lld", i ? "," : "", (long long)st[i]);
        if (w < 0 || (size_t)w >= len - l) {
            /* cut back to the last whole entry */
            while (l > 0 && b[l - 1] != ',')
                l--;
            b[l > 0 ? l - 1 : 0] = '\0';
            return;
        }
        l += (size_t)w;
    }
}

/* The verdict on rank r with its steps grouped as `top` says: 1 when given,
 * 0 when none, -1 out of memory. */
static int cs_recurring_try(cs_verdict_ctx *a, int r, int top)
{
    cs_vec aff = { 0 };
    int64_t thr = 0;
    if (cs_recurring_affected(a, r, top, &aff, &thr) != 0)
        goto oom;
    size_t n = aff.n;
    if (n < CS_RECURRING_MIN || (double)n >= CS_PERSIST_FRAC * (double)a->considered)
        goto none;
    size_t adjacent = 0;
    for (size_t i = 0; i < n; i++)
        adjacent += (i > 0 && aff.a[i] - aff.a[i - 1] == 1) || (i + 1 < n && aff.a[i + 1] - aff.a[i] == 1);
    if (adjacent * 2 > n)
        goto none;
    /* against the other ranks, late by as much (half its smallest affected
     * L at least): noise hits them all */
    int64_t lmin = cs__an_verdict_lat(a, aff.a[0], r);
    for (size_t i = 1; i < n; i++)
        if (cs__an_verdict_lat(a, aff.a[i], r) < lmin)
            lmin = cs__an_verdict_lat(a, aff.a[i], r);
    int64_t othr = lmin / 2 > thr ? lmin / 2 : thr;
    cs_vec others = { 0 };
    for (int d = 0; d < a->ctx->ndense; d++) {
        int q = a->ctx->rank_of[d];
        if (q == r)
            continue;
        int64_t c = 0;
        for (int64_t s = a->s0; s < a->steps->nsteps; s++)
            c += cs__an_verdict_lat(a, s, q) > othr;
        if (cs_vec_push(&others, c) != 0) {
            cs_vec_free(&others);
            goto oom;
        }
    }
    int64_t omed = others.n ? cs__an_ctx_median(&others) : 0;
    cs_vec_free(&others);
    if ((int64_t)n < 2 * omed + CS_RECURRING_MIN)
        goto none;
    /* periodic: the steps of its phase (a noise step off it is no part of it) */
    int64_t phase = 0, k = cs_recurring_period(aff.a, n, a->s0, a->steps->nsteps, &phase);
    if (k) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (aff.a[i] % k == phase)
                aff.a[m++] = aff.a[i];
        aff.n = n = m;
    }

    cs_vec cv = { 0 }, lv = { 0 };
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t l = cs__an_verdict_lat(a, aff.a[i], r);
        total += l;
        if (cs_vec_push(&cv, l) != 0 || cs_vec_push(&lv, a->steps->late[cs__an_ctx_sr(a->ctx, aff.a[i], r)]) != 0) {
            cs_vec_free(&cv);
            cs_vec_free(&lv);
            goto oom;
        }
    }
    int64_t cmed = cs__an_ctx_median(&cv), mad = cs__an_ctx_mad(&cv, cmed);
    if (mad > cmed / CS_RECURRING_SPREAD) {
        cs_vec_free(&cv);
        cs_vec_free(&lv);
        goto none;
    }
    if (!k && cmed < CS_RECURRING_IRREGULAR * a->E) {
        cs_vec_free(&cv);
        cs_vec_free(&lv);
        goto none;
    }
    cs_straggler g;
    memset(&g, 0, sizeof g);
    snprintf(g.kind, sizeof g.kind, "recurring");
    g.rank = r;
    g.src = g.dst = -1;
    g.first_step = aff.a[0];
    g.last_step = aff.a[n - 1];
    g.begin_ns = a->steps->step_begin[g.first_step];
    g.end_ns = a->steps->step_end[g.last_step];
    g.cost_ns = cmed;
    g.lateness_ns = cs__an_ctx_median(&lv);
    g.period = k;
    g.phase = k ? phase : 0;
    g.affected = (int64_t)n;
    g.total_ns = total;
    cs_recurring_list(g.steps, sizeof g.steps, aff.a, n);
    cs_vec_free(&cv);
    cs_vec_free(&lv);
    char b1[32], b2[32], b3[32], b4[32], when[160];
    /* one unit for the sentence: that of its largest time */
    int64_t big = total > a->tmed ? total : a->tmed;
    cs__an_verdict_ns_in(b1, sizeof b1, g.cost_ns, big);
    cs__an_verdict_ns_in(b2, sizeof b2, mad, big);
    cs__an_verdict_ns_in(b3, sizeof b3, total, big);
    cs__an_verdict_ns_in(b4, sizeof b4, a->tmed, big);
    if (k)
        snprintf(when, sizeof when, "every %lld steps (phase %lld: steps %lld, %lld, ... %lld)", (long long)k,
                 (long long)g.phase, (long long)g.first_step, (long long)(g.first_step + k), (long long)g.last_step);
    else {
        char list[96];
        cs_recurring_list(list, sizeof list, aff.a, n);
        snprintf(when, sizeof when, "at irregular intervals (steps %s%s)", list,
                 strlen(list) < strlen(g.steps) ? ", ..." : "");
    }
    snprintf(g.evidence, sizeof g.evidence,
             "rank %d spent a median %s (MAD %s) longer between collectives than the next slowest rank in %lld of "
             "%lld steps, %s, and was on time in the others; %s lost in all (median step %s)",
             r, b1, b2, (long long)n, (long long)a->considered, when, b3, b4);
    cs_vec_free(&aff);
    return cs__an_verdict_push(a, &g) != 0 ? -1 : 1;
none:
    cs_vec_free(&aff);
    return 0;
oom:
    cs_vec_free(&aff);
    return -1;
}

#define CS_RECUR_OVER_TRANSIENT 4

static int cs_recurring_rank(cs_verdict_ctx *a, int r)
{
    /* A rank with transient windows: the recurring stall, when there is
     * one, replaces them if it costs at least CS_RECUR_OVER_TRANSIENT times
     * the largest of them per affected step (the windows were then the
     * scheduler's slices around it: 4 ms against 50 ms stalls under
     * MPICH's busy polling); else the windows stay and it does not. */
    int64_t tcost = -1;
    for (int i = 0; i < a->v.n; i++)
        if (a->v.a[i].rank == r && a->v.a[i].src < 0) {
            if (strcmp(a->v.a[i].kind, "transient") != 0)
                return 0;
            if (a->v.a[i].cost_ns > tcost)
                tcost = a->v.a[i].cost_ns;
        }
    int rc = cs_recurring_try(a, r, 0);
    if (rc == 0)
        rc = cs_recurring_try(a, r, 1);
    if (rc <= 0 || tcost < 0)
        return rc;
    cs_straggler g = a->v.a[a->v.n - 1];
    if (g.cost_ns < CS_RECUR_OVER_TRANSIENT * tcost) {
        a->v.n--; /* the windows stay */
        return 0;
    }
    int m = 0;
    for (int i = 0; i < a->v.n - 1; i++)
        if (!(a->v.a[i].rank == r && a->v.a[i].src < 0))
            a->v.a[m++] = a->v.a[i];
    a->v.a[m++] = g;
    a->v.n = m;
    return 1;
}

const cs_verdict_kind cs__an_verdict_recurring = { .name = "recurring", .rank = cs_recurring_rank };
