/* an_verdict.c: per-step figures, per-rank statistics and the straggler
 * verdicts, each with its evidence.
 *
 * The unit of evidence is the step: L[s][r] is the cost rank r imposed
 * in step s (for every complete instance it entered last, its entry minus
 * the next latest entry, summed over the step). A rank is "late" in a step when L[s][r] exceeds
 * the minimum effect E = max(CS_MIN_EFFECT_NS, CS_MIN_EFFECT_FRAC x median
 * step time). Verdicts need persistence, so scheduling noise, which picks a
 * different rank each time, gives none:
 *   persistent   late in >= half of the steps
 *   transient    a window of >= CS_TRANSIENT_MIN steps, >= 80 % of them late,
 *                and lateness outside it no larger than noise
 *   slow_link    a directed pair whose median transfer (receive end after the
 *                later arrival) exceeds the median of the OTHER pairs by
 *                more than E and 3 robust sigmas (4.5 MADs), is at least
 *                twice it, with at least half its messages out of line and
 *                its senders on time; it suppresses the persistent or
 *                transient verdict of its own ends that it explains
 *   slow_collective  a window of >= CS_TRANSIENT_MIN steps where a
 *                communicator's transfer per step is out of line with its
 *                other steps (E, 7.5 MADs) while its arrival skew is less
 *                than half the excess (the ranks were on time)
 * E is the larger of CS_MIN_EFFECT_NS and CS_MIN_EFFECT_FRAC of the median
 * step time. On 2 cores shared by 4 ranks, scheduling alone makes one rank
 * cost 1-1.5 ms per step for a while: hence the 2 ms floor.
 * The first step is left out of the persistence counts (warm-up). */
#include "config.h"
#include "analyzer/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CS_MIN_EFFECT_NS 2000000
#define CS_MIN_EFFECT_FRAC 0.10
#define CS_TRANSIENT_MIN 5
#define CS_PERSIST_FRAC 0.5

/* The cost rank r imposed in step s: for each instance it entered last, its
 * entry minus the next latest entry (what the step loses to it alone). The
 * lateness against the median of the others (a->late) is larger for ranks
 * that lose the CPU now and then on an oversubscribed node, so the
 * verdicts decide on the cost. */
static int64_t cs_lat(const cs_an *a, int64_t s, int r) { return a->late2[(size_t)s * (size_t)a->nranks + (size_t)r]; }

static void cs_fmt_steps(char *buf, size_t len, int64_t a, int64_t b)
{
    if (a == b)
        snprintf(buf, len, "step %lld", (long long)a);
    else
        snprintf(buf, len, "steps %lld-%lld", (long long)a, (long long)b);
}

typedef struct cs_vlist {
    cs_straggler *a;
    int n, cap;
} cs_vlist;

static int cs_vpush(cs_vlist *l, const cs_straggler *g)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        cs_straggler *na = realloc(l->a, (size_t)l->cap * sizeof *na);
        if (!na)
            return -1;
        l->a = na;
    }
    l->a[l->n++] = *g;
    return 0;
}

static void cs_ns_text(char *b, size_t len, int64_t ns)
{
    if (ns >= 10000000)
        snprintf(b, len, "%.1f ms", (double)ns / 1e6);
    else if (ns >= 1000000)
        snprintf(b, len, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(b, len, "%.0f us", (double)ns / 1e3);
}

int cs_an_verdicts(cs_an *a, char *err, size_t errlen)
{
    int n = a->nranks;
    int64_t ns = a->nsteps;
    cs_vlist v = { 0 };
    cs_vec tv = { 0 };
    for (int64_t s = 0; s < ns; s++)
        cs_vec_push(&tv, a->step_time[s]);
    int64_t tmed = tv.n ? cs_vec_median(&tv) : 0;
    cs_vec_free(&tv);
    /* the minimum effect: an absolute floor and a share of the step. (Not
     * the step-to-step spread: a straggler's own effect widens it, and the
     * cost measure already ignores slowdowns that hit every rank.) */
    int64_t E = (int64_t)(CS_MIN_EFFECT_FRAC * (double)tmed);
    if (E < CS_MIN_EFFECT_NS)
        E = CS_MIN_EFFECT_NS;
    a->min_effect_ns = E;
    char b1[32], b2[32], b3[48];

    /* steps table */
    for (int64_t s = 0; s < ns; s++) {
        int best = -1;
        int64_t bl = 0;
        for (int r = 0; r < n; r++) {
            int64_t l2 = a->late2[(size_t)s * (size_t)n + (size_t)r];
            if (l2 > bl)
                bl = l2, best = r;
        }
        cs_step_row row = { s, a->step_begin[s], a->step_end[s], a->step_time[s], best,
                            a->step_time[s] - bl > 0 ? a->step_time[s] - bl : 0 };
        if (cs_awriter_step(a->w, &row) != 0)
            goto werr;
    }
    /* rank stats */
    for (int r = 0; r < n; r++) {
        if (!a->present[r])
            continue;
        /* median lateness: per step when there are steps, else per instance */
        int64_t ml = 0;
        if (ns > 0) {
            cs_vec sv = { 0 };
            for (int64_t s = 0; s < ns; s++)
                cs_vec_push(&sv, cs_lat(a, s, r));
            ml = cs_vec_median(&sv);
            cs_vec_free(&sv);
        } else if (a->lateness[r].n) {
            ml = cs_vec_median(&a->lateness[r]);
        }
        cs_rank_stat rs = { r, a->times_last[r], a->imposed[r], ml };
        if (cs_awriter_rank_stat(a->w, &rs) != 0)
            goto werr;
    }

    /* persistent and transient stragglers */
    int64_t s0 = ns > 4 ? 1 : 0, considered = ns - s0;
    for (int r = 0; r < n && considered > 0; r++) {
        if (!a->present[r])
            continue;
        int64_t late = 0, first = -1, lastk = -1;
        cs_vec lv = { 0 }, cv = { 0 };
        for (int64_t s = s0; s < ns; s++)
            if (cs_lat(a, s, r) > E) {
                late++;
                cs_vec_push(&lv, a->late[(size_t)s * (size_t)n + (size_t)r]);
                cs_vec_push(&cv, a->late2[(size_t)s * (size_t)n + (size_t)r]);
                if (first < 0)
                    first = s;
                lastk = s;
            }
        int64_t cmed = cv.n ? cs_vec_median(&cv) : 0;
        if (late >= 2 && (double)late >= CS_PERSIST_FRAC * (double)considered && cmed > E) {
            cs_straggler g;
            memset(&g, 0, sizeof g);
            snprintf(g.kind, sizeof g.kind, "persistent");
            g.rank = r;
            g.src = g.dst = -1;
            g.first_step = first;
            g.last_step = lastk;
            g.begin_ns = a->step_begin[first];
            g.end_ns = a->step_end[lastk];
            g.lateness_ns = cs_vec_median(&lv);
            g.cost_ns = cs_vec_median(&cv);
            int64_t mad = cs_vec_mad(&lv, g.lateness_ns);
            cs_ns_text(b1, sizeof b1, g.lateness_ns);
            cs_ns_text(b2, sizeof b2, mad);
            char b4[32];
            cs_ns_text(b4, sizeof b4, g.cost_ns);
            cs_fmt_steps(b3, sizeof b3, first, lastk);
            snprintf(g.evidence, sizeof g.evidence,
                     "rank %d entered last, late by a median %s (MAD %s), in %lld of %lld steps (%s); "
                     "the step would be %s shorter had it arrived on time (median step %.2f ms)",
                     r, b1, b2, (long long)late, (long long)considered, b3, b4, (double)tmed / 1e6);
            cs_vec_free(&cv);
            if (cs_vpush(&v, &g) != 0)
                goto oom;
            cs_vec_free(&lv);
            continue;
        }
        cs_vec_free(&lv);
        cs_vec_free(&cv);
        /* windows: late steps joined across one-step gaps */
        int64_t s = s0;
        while (s < ns) {
            if (cs_lat(a, s, r) <= E) {
                s++;
                continue;
            }
            int64_t wa = s, wb = s, cnt = 1;
            int64_t t = s + 1;
            while (t < ns) {
                if (cs_lat(a, t, r) > E) {
                    wb = t;
                    cnt++;
                    t++;
                } else if (t + 1 < ns && cs_lat(a, t + 1, r) > E) {
                    t++;

                } else {
                    break;
                }
            }
            s = wb + 1;
            int64_t len = wb - wa + 1;
            if (cnt < CS_TRANSIENT_MIN || (double)cnt < 0.6 * (double)len)
                continue;
            /* outside the window: little lateness */
            cs_vec in = { 0 }, out = { 0 }, c2 = { 0 };
            for (int64_t u = s0; u < ns; u++) {
                cs_vec_push(u >= wa && u <= wb ? &in : &out, cs_lat(a, u, r));
                if (u >= wa && u <= wb)
                    cs_vec_push(&c2, a->late2[(size_t)u * (size_t)n + (size_t)r]);
            }
            int64_t cost2 = cs_vec_median(&c2);
            cs_vec_free(&c2);
            int64_t mi = cs_vec_median(&in), mo = out.n ? cs_vec_median(&out) : 0;
            int64_t madout = out.n ? cs_vec_mad(&out, mo) : 0;
            int64_t outlate = 0;
            for (size_t i = 0; i < out.n; i++)
                outlate += out.a[i] > E;
            int ok = mi > E && cost2 * 2 > E && mi > mo + 5 * madout * 3 / 2 && (double)outlate <= 0.15 * (double)(out.n ? out.n : 1);
            cs_vec_free(&in);
            cs_vec_free(&out);
            if (!ok)
                continue;
            cs_straggler g;
            memset(&g, 0, sizeof g);
            snprintf(g.kind, sizeof g.kind, "transient");
            g.rank = r;
            g.src = g.dst = -1;
            g.first_step = wa;
            g.last_step = wb;
            g.begin_ns = a->step_begin[wa];
            g.end_ns = a->step_end[wb];
            g.lateness_ns = mi;
            g.cost_ns = cost2;
            cs_ns_text(b1, sizeof b1, mi);
            cs_fmt_steps(b3, sizeof b3, wa, wb);
            snprintf(g.evidence, sizeof g.evidence,
                     "rank %d was late by a median %s in %lld of the %lld steps of %s "
                     "(%.3f s to %.3f s into the run), and on time otherwise",
                     r, b1, (long long)cnt, (long long)len, b3, (double)(g.begin_ns - a->t_first) / 1e9,
                     (double)(g.end_ns - a->t_first) / 1e9);
            if (cs_vpush(&v, &g) != 0)
                goto oom;
        }
    }

    /* slow links: a directed pair's transfer (the receive's end after the
     * later of the two arrivals) against the distribution of the other
     * pairs, with most of its messages out of line and its senders on time */
    if (a->pair_xfer) {
        size_t np = (size_t)n * (size_t)n;
        int64_t *pm = calloc(np, sizeof *pm);
        if (!pm)
            goto oom;
        size_t npairs = 0;
        for (size_t i = 0; i < np; i++) {
            pm[i] = -1;
            if (a->pair_xfer[i].n >= 5) {
                pm[i] = cs_vec_median(&a->pair_xfer[i]);
                npairs++;
            }
        }
        for (size_t i = 0; i < np && npairs >= 3; i++) {
            if (pm[i] < 0)
                continue;
            cs_vec oth = { 0 };
            for (size_t j = 0; j < np; j++)
                if (j != i && pm[j] >= 0)
                    cs_vec_push(&oth, pm[j]);
            int64_t M = cs_vec_median(&oth);
            int64_t mad = cs_vec_mad(&oth, M);
            cs_vec_free(&oth);
            int64_t ex = pm[i] - M, thr = E > mad * 9 / 2 ? E : mad * 9 / 2;
            if (ex <= thr || pm[i] < 2 * M)
                continue;
            size_t out = 0, msgs = a->pair_xfer[i].n;
            for (size_t k = 0; k < msgs; k++)
                out += a->pair_xfer[i].a[k] > M + E / 2;
            if (out * 2 < msgs)
                continue;
            int64_t ls = cs_vec_median(&a->pair_late[i]);
            if (ls * 2 > ex)
                continue;
            cs_straggler g;
            memset(&g, 0, sizeof g);
            snprintf(g.kind, sizeof g.kind, "slow_link");
            g.src = (int)(i / (size_t)n);
            g.dst = (int)(i % (size_t)n);
            g.rank = g.src;
            g.begin_ns = a->pair_t0[i];
            g.end_ns = a->pair_t1[i];
            double per = ns > 0 ? (double)msgs / (double)ns : 1.0;
            if (per < 1)
                per = 1;
            g.lateness_ns = ex;
            g.cost_ns = (int64_t)((double)ex * per);
            g.first_step = ns > 0 ? 0 : -1;
            g.last_step = ns > 0 ? ns - 1 : -1;
            cs_ns_text(b1, sizeof b1, pm[i]);
            cs_ns_text(b2, sizeof b2, M);
            char b4[32], b5[32];
            cs_ns_text(b4, sizeof b4, ls);
            cs_ns_text(b5, sizeof b5, mad);
            snprintf(g.evidence, sizeof g.evidence,
                     "%zu messages from rank %d to rank %d took a median %s after both sides arrived, against a median "
                     "%s (MAD %s) for the other %zu pairs; %zu of them out of line, while their senders were late by "
                     "a median %s only",
                     msgs, g.src, g.dst, b1, b2, b5, npairs - 1, out, b4);
            if (cs_vpush(&v, &g) != 0) {
                free(pm);
                goto oom;
            }
        }
        free(pm);
    }

    /* slow collectives: on one communicator, a window of steps whose
     * transfer (last exit - last entry, summed over the step) is out of line
     * with its other steps while the arrivals are on time */
    for (int ci = 0; ci < a->ncomms && ns - s0 >= 2 * CS_TRANSIENT_MIN; ci++) {
        const int64_t *xs = a->cstep_xfer + (size_t)ci * (size_t)ns, *sk = a->cstep_skew + (size_t)ci * (size_t)ns;
        cs_vec xv = { 0 };
        for (int64_t s = s0; s < ns; s++)
            cs_vec_push(&xv, xs[s]);
        int64_t xm = cs_vec_median(&xv), xmad = cs_vec_mad(&xv, xm);
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
            g.comm = a->comm_ids[ci];
            g.first_step = wa;
            g.last_step = wb;
            g.begin_ns = a->step_begin[wa];
            g.end_ns = a->step_end[wb];
            g.lateness_ns = g.cost_ns = cs_vec_median(&exv);
            int64_t skm = cs_vec_median(&skv);
            cs_vec_free(&exv);
            cs_vec_free(&skv);
            const char *opn = a->cstep_op[ci] >= 0 && a->cstep_op[ci] < a->nops ? a->ops[a->cstep_op[ci]].name : "?";
            cs_ns_text(b1, sizeof b1, g.cost_ns + xm);
            cs_ns_text(b2, sizeof b2, xm);
            char b4[32];
            cs_ns_text(b4, sizeof b4, skm);
            cs_fmt_steps(b3, sizeof b3, wa, wb);
            snprintf(g.evidence, sizeof g.evidence,
                     "the collectives of communicator %lld (%s, ...) transferred for a median %s per step in %lld "
                     "of the %lld steps of %s against %s in the other steps, while every rank arrived on time "
                     "(arrival skew %s per step)",
                     (long long)g.comm, opn, b1, (long long)cnt, (long long)(wb - wa + 1), b3, b2, b4);
            if (cs_vpush(&v, &g) != 0)
                goto oom;
        }
#undef CS_SLOWX
    }
    /* A rank whose lateness a slow link of its own explains is no straggler. */
    for (int i = 0; i < v.n; i++) {
        if (strcmp(v.a[i].kind, "slow_link") != 0)
            continue;
        for (int j = 0; j < v.n; j++) {
            cs_straggler *g = &v.a[j];
            if ((strcmp(g->kind, "persistent") == 0 || strcmp(g->kind, "transient") == 0) &&
                (g->rank == v.a[i].src || g->rank == v.a[i].dst) && g->lateness_ns <= v.a[i].cost_ns * 3 / 2 + E) {
                g->kind[0] = '\0';
                size_t l = strlen(v.a[i].evidence);
                snprintf(v.a[i].evidence + l, sizeof v.a[i].evidence - l, "; it explains rank %d's lateness", g->rank);
            }
        }
    }
    for (int i = 0; i < v.n; i++)
        if (v.a[i].kind[0] && cs_awriter_straggler(a->w, &v.a[i]) != 0)
            goto werr;
    free(v.a);
    return 0;
oom:
    free(v.a);
    snprintf(err, errlen, "out of memory");
    return -1;
werr:
    free(v.a);
    snprintf(err, errlen, "%s: cannot write the analysis", cs_store_path(a->st));
    return -1;
}
