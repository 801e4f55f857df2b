/* an_verdict.c: per-step figures, per-rank statistics and the straggler
 * verdicts, each with its evidence.
 *
 * The unit of evidence is the step: L[s][r] is the excess own time of rank
 * r in step s (a->steps->xgap: for every complete instance, the rank whose time
 * since its exit from the communicator's previous instance is the longest,
 * that time minus the next longest, summed over the step). It is what the
 * rank added on its own, measured on its own clock: neither the clock
 * alignment nor the order in which a collective released the ranks (on an
 * oversubscribed node spread by whole scheduler slices, which made
 * "entry minus the next latest entry" miss a 20 ms delay by up to 12 ms)
 * enters it. A rank is "late" in a step when L[s][r] exceeds the minimum
 * effect E = max(CS_MIN_EFFECT_NS, CS_MIN_EFFECT_FRAC x median step time).
 * Verdicts need persistence or a clear window, so scheduling noise, which
 * picks a different rank each time, gives none:
 *   persistent   late in >= CS_PERSIST_FRAC (3/4) of the steps; cost: the
 *                median L over its late steps. (A delayed rank is late in
 *                every step; under MPICH on 2 loaded cores one starved rank
 *                was late by a scheduler slice or three in 10 of 19 steps
 *                of a clean run.)
 *   transient    a window of >= CS_TRANSIENT_MIN late steps, runs joined
 *                across single on-time steps, its edges trimmed of steps
 *                late by less than half its median, >= CS_TRANSIENT_DENSE of
 *                its steps late, with the rank on time outside (late in at
 *                most CS_OUTSIDE_LATE of the >= CS_TRANSIENT_MIN other
 *                steps) and its median L at least twice the outside median
 *   slow_link    a directed pair whose median transfer (receive end after the
 *                later arrival) exceeds the median of the OTHER pairs by
 *                more than E and 3 robust sigmas (4.5 MADs), is at least
 *                twice it, with at least 80 % of its messages beyond the
 *                noise ceiling (the 95th percentile of the other pairs'
 *                single transfers, those pairs in line), its senders on time
 *                and its receiver not late as a sender by half the excess (late by less than a quarter of the
 *                excess: a sender that loses the CPU around its sends on
 *                an oversubscribed node is late and slow to send alike);
 *                not the echo of another slow link (its receives the calls
 *                that sent that link's messages, as in a Sendrecv); it
 *                suppresses the persistent or transient verdict of its own
 *                ends that it explains
 *   slow_link    on a communicator (src = dst = rank = -1, comm set): its
 *                collectives' transfers (last exit minus last entry, per
 *                complete instance) out of line with the same collectives
 *                (op, size bucket, member count) on at least two other
 *                communicators, over the whole run. The reference of a
 *                call is the median (and MAD) over those communicators and
 *                steps of their mean transfer per call. A step is out of
 *                line when the communicator's transfer exceeds its calls'
 *                references by more than E and 4.5 MADs per call, with its
 *                arrival skew less than half the excess; a verdict needs
 *                >= CS_PERSIST_FRAC of >= 2 x CS_TRANSIENT_MIN steps out of
 *                line, a median excess above E, at least twice the
 *                reference, and every member's median excess own time
 *                below half the excess (under MPICH on 2 loaded cores a
 *                starved member made one 2-rank communicator's calls take
 *                a scheduler slice, 5.7 ms, in 17 of 19 steps of a clean
 *                run: a rank that loses the CPU is late and slow to finish
 *                its collectives alike); cost: the median excess per step
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

/* What this pass reads and writes (analysis.h). */
typedef struct cs_verdict_io {
    cs_an_ctx *ctx;
    const cs_an_clocks *clocks;
    const cs_an_steps *steps;
    cs_an_coll *coll;
    const cs_an_msgs *msgs;
    cs_an_links *links;
} cs_verdict_io;

#define CS_MIN_EFFECT_NS 2000000
#define CS_MIN_EFFECT_FRAC 0.10
#define CS_TRANSIENT_MIN 5
#define CS_PERSIST_FRAC 0.75
#define CS_TRANSIENT_DENSE 0.8
#define CS_OUTSIDE_LATE 0.15

/* The cost rank r imposed in step s: for each instance it entered last, its
 * entry minus the next latest entry (what the step loses to it alone). The
 * lateness against the median of the others (a->steps->late) is larger for ranks
 * that lose the CPU now and then on an oversubscribed node, so the
 * verdicts decide on the cost. */
static int64_t cs_lat(const cs_verdict_io *a, int64_t s, int r)
{
    return a->steps->xgap[(size_t)s * (size_t)a->ctx->nranks + (size_t)r];
}

static void cs_fmt_steps(char *buf, size_t len, int64_t a, int64_t b)
{
    if (a == b)
        snprintf(buf, len, "step %lld", (long long)a);
    else
        snprintf(buf, len, "steps %lld-%lld", (long long)a, (long long)b);
}

typedef struct cs_vlist {
    cs_straggler *a;
    int n;
    size_t cap;
} cs_vlist;

static int cs_vpush(cs_vlist *l, const cs_straggler *g)
{
    if (CS_VEC_RESERVE(l->a, l->cap, (size_t)l->n + 1) != 0)
        return -1;
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

/* ---- slow links on one communicator ---- */

#define CS_CLASS_MAX 64

/* The complete instances of one communicator with one op, size bucket and
 * member count, per step (instances, summed transfer, summed skew), and
 * the per-instance transfer the other communicators' instances of the same
 * kind take (ref -1: none to compare with). */
typedef struct cs_cclass {
    int64_t comm;
    int op, bucket, nranks;
    int64_t *n, *x, *k;
    int64_t ref, mad;
    int peers;
} cs_cclass;

typedef struct cs_members {
    int64_t comm;
    char text[96];
    int n;
    int *rank; /* [nranks]: 1 for a member */
    int nranks;
} cs_members;

static int cs_member_cb(const cs_comm_member *m, void *arg)
{
    cs_members *p = arg;
    if (m->comm != p->comm)
        return 0;
    if (m->rank >= 0 && m->rank < p->nranks)
        p->rank[m->rank] = 1;
    size_t l = strlen(p->text);
    if (p->n < 12)
        snprintf(p->text + l, sizeof p->text - l, "%s%d", p->n ? "," : "", m->rank);
    else if (p->n == 12)
        snprintf(p->text + l, sizeof p->text - l, ",...");
    p->n++;
    return 0;
}

/* Slow links on a communicator (the rule in the header comment): verdicts
 * pushed to v. Reads back the instances of the analysis being written and
 * the communicators' members (nothing is written meanwhile). Returns 0, -1
 * out of memory, -2 when the store cannot be read. */
static int cs_comm_links(cs_verdict_io *a, int64_t E, int64_t s0, cs_vlist *v)
{
    int64_t ns = a->steps->nsteps;
    if (ns - s0 < 2 * CS_TRANSIENT_MIN)
        return 0;
    cs_cclass *cl = calloc(CS_CLASS_MAX, sizeof *cl);
    if (!cl)
        return -1;
    int ncl = 0, rc = 0;
    cs_instance_iter *it = cs_store_instances_by_skew(a->ctx->st, 0, 0, 0);
    if (!it) {
        free(cl);
        return -2;
    }
    cs_instance in;
    int r;
    while ((r = cs_instance_next(it, &in)) > 0) {
        if (in.nranks < 2 || in.nranks < in.expected || in.step < s0 || in.step >= ns)
            continue;
        int b = cs_bytes_bucket(in.bytes), i = 0;
        while (i < ncl &&
               (cl[i].comm != in.comm || cl[i].op != in.op || cl[i].bucket != b || cl[i].nranks != in.nranks))
            i++;
        if (i == ncl) {
            if (ncl == CS_CLASS_MAX)
                continue;
            cl[i].n = calloc((size_t)ns * 3, sizeof *cl[i].n);
            if (!cl[i].n) {
                rc = -1;
                break;
            }
            cl[i].x = cl[i].n + ns;
            cl[i].k = cl[i].x + ns;
            cl[i].comm = in.comm;
            cl[i].op = in.op;
            cl[i].bucket = b;
            cl[i].nranks = in.nranks;
            ncl++;
        }
        cl[i].n[in.step]++;
        cl[i].x[in.step] += in.transfer_ns;
        cl[i].k[in.step] += in.skew_ns;
    }
    cs_instance_iter_free(it);
    if (r < 0 && rc == 0)
        rc = -2;
    /* the reference of each class: the per-instance transfer of the same
     * kind of instances on the other communicators, one value per
     * communicator and step, from at least two communicators */
    for (int i = 0; i < ncl && rc == 0; i++) {
        cs_vec pool = { 0 };
        cl[i].ref = -1;
        for (int j = 0; j < ncl; j++) {
            if (cl[j].comm == cl[i].comm || cl[j].op != cl[i].op || cl[j].bucket != cl[i].bucket ||
                cl[j].nranks != cl[i].nranks)
                continue;
            cl[i].peers++;
            for (int64_t s = s0; s < ns; s++)
                if (cl[j].n[s] && cs_vec_push(&pool, cl[j].x[s] / cl[j].n[s]) != 0)
                    rc = -1;
        }
        if (cl[i].peers >= 2 && pool.n >= 2 * CS_TRANSIENT_MIN) {
            cl[i].ref = cs_vec_median(&pool);
            cl[i].mad = cs_vec_mad(&pool, cl[i].ref);
        }
        cs_vec_free(&pool);
    }
    /* per communicator (its first class) and step, over its classes with a
     * reference: the transfer in excess of the reference, and the skew */
    for (int c = 0; c < ncl && rc == 0; c++) {
        int first = 1, ncmp = 0, cmp[CS_CLASS_MAX];
        for (int i = 0; i < c && first; i++)
            first = cl[i].comm != cl[c].comm;
        for (int i = c; i < ncl && first; i++)
            if (cl[i].comm == cl[c].comm && cl[i].ref >= 0)
                cmp[ncmp++] = i;
        if (!first || !ncmp)
            continue;
        int64_t considered = 0, fs = -1, ls = -1, xsum = 0, rsum = 0, calls = 0;
        cs_vec dv = { 0 }, pv = { 0 }, xv = { 0 }, rv = { 0 }, kv = { 0 };
        for (int64_t s = s0; s < ns; s++) {
            int64_t n = 0, x = 0, ref = 0, k = 0, sig = 0;
            for (int j = 0; j < ncmp; j++) {
                int i = cmp[j];
                if (!cl[i].n[s])
                    continue;
                n += cl[i].n[s];
                x += cl[i].x[s];
                k += cl[i].k[s];
                ref += cl[i].n[s] * cl[i].ref;
                sig += cl[i].n[s] * cl[i].mad * 9 / 2;
            }
            if (!n)
                continue;
            considered++;
            int64_t d = x - ref;
            if (d <= (E > sig ? E : sig) || 2 * k >= d)
                continue;
            if (fs < 0)
                fs = s;
            ls = s;
            xsum += x;
            rsum += ref;
            calls += n;
            if (cs_vec_push(&dv, d) || cs_vec_push(&pv, d / n) || cs_vec_push(&xv, x / n) ||
                cs_vec_push(&rv, ref / n) || cs_vec_push(&kv, k))
                rc = -1;
        }
        int64_t dmed = cs_vec_median(&dv);
        int ok = rc == 0 && considered >= 2 * CS_TRANSIENT_MIN &&
                 (double)dv.n >= CS_PERSIST_FRAC * (double)considered && dmed > E && xsum >= 2 * rsum;
        /* its members on time too: a member whose excess own time is half
         * the excess lost the CPU (on an oversubscribed node such a rank is
         * late and slow to finish its collectives alike) */
        cs_members mem = { cl[c].comm, "", 0, NULL, a->ctx->nranks };
        int late_member = -1;
        int64_t late_own = 0;
        if (ok) {
            mem.rank = calloc((size_t)a->ctx->nranks, sizeof *mem.rank);
            if (!mem.rank)
                rc = -1;
            else if (cs_store_comm_members(a->ctx->st, cs_member_cb, &mem) != 0)
                rc = -2;
            for (int q = 0; q < a->ctx->nranks && rc == 0 && late_member < 0; q++) {
                if (!mem.rank[q])
                    continue;
                cs_vec ov = { 0 };
                for (int64_t s = s0; s < ns; s++)
                    if (cs_vec_push(&ov, cs_lat(a, s, q)) != 0)
                        rc = -1;
                late_own = cs_vec_median(&ov);
                cs_vec_free(&ov);
                if (late_own * 2 > dmed)
                    late_member = q;
            }
            free(mem.rank);
            ok = rc == 0 && late_member < 0;
        }
        if (ok) {
            cs_straggler g;
            memset(&g, 0, sizeof g);
            snprintf(g.kind, sizeof g.kind, "slow_link");
            g.rank = g.src = g.dst = -1;
            g.comm = cl[c].comm;
            g.first_step = fs;
            g.last_step = ls;
            g.begin_ns = a->steps->step_begin[fs];
            g.end_ns = a->steps->step_end[ls];
            g.cost_ns = dmed;
            g.lateness_ns = cs_vec_median(&pv);
            if (!mem.n)
                snprintf(mem.text, sizeof mem.text, "?");
            const cs_cclass *m = &cl[cmp[0]];
            const char *opn = m->op >= 0 && m->op < a->ctx->nops ? a->ctx->ops[m->op].name : "?";
            char b1[32], b2[32], b3[32], b4[32], b5[32], b6[48], more[32] = "";
            long long blo = m->bucket ? 1LL << m->bucket : 0, bhi = (2LL << m->bucket) - 1;
            cs_ns_text(b1, sizeof b1, cs_vec_median(&xv));
            cs_ns_text(b2, sizeof b2, cs_vec_median(&rv));
            cs_ns_text(b3, sizeof b3, m->mad);
            cs_ns_text(b4, sizeof b4, dmed);
            cs_ns_text(b5, sizeof b5, cs_vec_median(&kv));
            cs_fmt_steps(b6, sizeof b6, fs, ls);
            if (ncmp > 1)
                snprintf(more, sizeof more, " and %d more", ncmp - 1);
            snprintf(g.evidence, sizeof g.evidence,
                     "the collectives of communicator %lld (%d ranks: %s) took a median %s per call after the last "
                     "arrival, against %s (MAD %s) for the same calls on %d other communicators (%s, %lld-%lld B%s); "
                     "out of line in %lld of %lld steps (%s, %lld calls), a median %s per step, while its ranks "
                     "arrived on time (skew %s per step)",
                     (long long)g.comm, m->nranks, mem.text, b1, b2, b3, m->peers, opn, blo, bhi, more, (long long)dv.n,
                     (long long)considered, b6, (long long)calls, b4, b5);
            if (cs_vpush(v, &g) != 0)
                rc = -1;
        }
        cs_vec_free(&dv);
        cs_vec_free(&pv);
        cs_vec_free(&xv);
        cs_vec_free(&rv);
        cs_vec_free(&kv);
    }
    for (int i = 0; i < ncl; i++)
        free(cl[i].n);
    free(cl);
    return rc;
}

int cs_an_verdicts(cs_an_ctx *ctx, const cs_an_clocks *clocks, const cs_an_steps *steps, cs_an_coll *coll,
                   const cs_an_msgs *msgs, cs_an_links *links, char *err, size_t errlen)
{
    cs_verdict_io io = { ctx, clocks, steps, coll, msgs, links }, *a = &io;
    int n = a->ctx->nranks;
    int64_t ns = a->steps->nsteps;
    cs_vlist v = { 0 };
    cs_vec tv = { 0 };
    for (int64_t s = 0; s < ns; s++)
        cs_vec_push(&tv, a->steps->step_time[s]);
    int64_t tmed = tv.n ? cs_vec_median(&tv) : 0;
    cs_vec_free(&tv);
    /* the minimum effect: an absolute floor and a share of the step. (Not
     * the step-to-step spread: a straggler's own effect widens it, and the
     * cost measure already ignores slowdowns that hit every rank.) */
    int64_t E = (int64_t)(CS_MIN_EFFECT_FRAC * (double)tmed);
    if (E < CS_MIN_EFFECT_NS)
        E = CS_MIN_EFFECT_NS;
    char b1[32], b2[32], b3[48];

    /* steps table */
    for (int64_t s = 0; s < ns; s++) {
        int best = -1;
        int64_t bl = 0;
        for (int r = 0; r < n; r++) {
            int64_t l2 = a->steps->late2[(size_t)s * (size_t)n + (size_t)r];
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
    for (int r = 0; r < n; r++) {
        if (!a->ctx->present[r])
            continue;
        /* median lateness: per step when there are steps, else per instance */
        int64_t ml = 0;
        if (ns > 0) {
            cs_vec sv = { 0 };
            for (int64_t s = 0; s < ns; s++)
                cs_vec_push(&sv, a->steps->late2[(size_t)s * (size_t)n + (size_t)r]);
            ml = cs_vec_median(&sv);
            cs_vec_free(&sv);
        } else if (a->coll->lateness[r].n) {
            ml = cs_vec_median(&a->coll->lateness[r]);
        }
        cs_rank_stat rs = { r, a->coll->times_last[r], a->coll->imposed[r], ml };
        if (cs_awriter_rank_stat(a->ctx->w, &rs) != 0)
            goto werr;
    }

    /* persistent and transient stragglers, from the excess own time */
    int64_t s0 = ns > 4 ? 1 : 0, considered = ns - s0;
    for (int r = 0; r < n && considered > 0; r++) {
        if (!a->ctx->present[r])
            continue;
        int64_t late = 0, first = -1, lastk = -1, lastin = 0;
        cs_vec lv = { 0 }, cv = { 0 };
        for (int64_t s = s0; s < ns; s++)
            if (cs_lat(a, s, r) > E) {
                late++;
                cs_vec_push(&lv, a->steps->late[(size_t)s * (size_t)n + (size_t)r]);
                cs_vec_push(&cv, cs_lat(a, s, r));
                lastin += a->steps->late2[(size_t)s * (size_t)n + (size_t)r] > 0;
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
            g.begin_ns = a->steps->step_begin[first];
            g.end_ns = a->steps->step_end[lastk];
            g.lateness_ns = cs_vec_median(&lv);
            g.cost_ns = cmed;
            int64_t mad = cs_vec_mad(&cv, cmed);
            cs_ns_text(b1, sizeof b1, g.cost_ns);
            cs_ns_text(b2, sizeof b2, mad);
            char b4[32];
            cs_ns_text(b4, sizeof b4, g.lateness_ns);
            cs_fmt_steps(b3, sizeof b3, first, lastk);
            snprintf(g.evidence, sizeof g.evidence,
                     "rank %d spent a median %s (MAD %s) longer between collectives than the next slowest rank "
                     "in %lld of %lld steps (%s), and entered last in %lld of them (by a median %s against the "
                     "others' median entry); the step would be about %s shorter without it (median step %.2f ms)",
                     r, b1, b2, (long long)late, (long long)considered, b3, (long long)lastin, b4, b1,
                     (double)tmed / 1e6);
            cs_vec_free(&cv);
            cs_vec_free(&lv);
            if (cs_vpush(&v, &g) != 0)
                goto oom;
            continue;
        }
        cs_vec_free(&lv);
        cs_vec_free(&cv);
        /* Windows: runs of late steps joined across single on-time steps,
         * at least CS_TRANSIENT_MIN late and CS_TRANSIENT_DENSE of their
         * length, with an on-time step (or the run's edge) on each side.
         * Outside every window the rank must be on time: scheduling noise
         * makes scattered late steps, not a window and a quiet rest. */
        int64_t wins[8][3];
        int nw = 0;
        int64_t s = s0;
        while (s < ns && nw < 8) {
            if (cs_lat(a, s, r) <= E) {
                s++;
                continue;
            }
            int64_t wa = s, wb = s, cnt = 1, t = s + 1;
            while (t < ns) {
                if (cs_lat(a, t, r) > E) {
                    wb = t++;
                    cnt++;
                } else if (t + 1 < ns && cs_lat(a, t + 1, r) > E) {
                    t++;
                } else {
                    break;
                }
            }
            s = wb + 1;
            /* clear edges: trim steps at either end that are late by less
             * than half the window's median (a scheduling hiccup next to
             * the window is not part of it) */
            cs_vec wl = { 0 };
            for (int64_t u = wa; u <= wb; u++)
                if (cs_lat(a, u, r) > E)
                    cs_vec_push(&wl, cs_lat(a, u, r));
            int64_t wmed = cs_vec_median(&wl);
            cs_vec_free(&wl);
            while (wb > wa && cs_lat(a, wb, r) * 2 < wmed)
                cnt -= cs_lat(a, wb--, r) > E;
            while (wa < wb && cs_lat(a, wa, r) * 2 < wmed)
                cnt -= cs_lat(a, wa++, r) > E;
            if (cnt >= CS_TRANSIENT_MIN && (double)cnt >= CS_TRANSIENT_DENSE * (double)(wb - wa + 1)) {
                wins[nw][0] = wa;
                wins[nw][1] = wb;
                wins[nw][2] = cnt;
                nw++;
            }
        }
        if (nw == 0)
            continue;
        int64_t outn = 0, outlate = 0;
        cs_vec out = { 0 };
        for (int64_t u = s0; u < ns; u++) {
            int in = 0;
            for (int k = 0; k < nw; k++)
                in |= u >= wins[k][0] && u <= wins[k][1];
            if (in)
                continue;
            outn++;
            outlate += cs_lat(a, u, r) > E;
            cs_vec_push(&out, cs_lat(a, u, r));
        }
        int64_t mo = out.n ? cs_vec_median(&out) : 0;
        cs_vec_free(&out);
        /* on time outside: at most CS_OUTSIDE_LATE of those steps late
         * (and not fewer than the steps of one window outside) */
        if (outn < CS_TRANSIENT_MIN || (double)outlate > CS_OUTSIDE_LATE * (double)outn)
            continue;
        for (int k = 0; k < nw; k++) {
            int64_t wa = wins[k][0], wb = wins[k][1], cnt = wins[k][2];
            cs_vec in = { 0 }, c2 = { 0 };
            for (int64_t u = wa; u <= wb; u++) {
                if (cs_lat(a, u, r) > E) {
                    cs_vec_push(&in, cs_lat(a, u, r));
                    cs_vec_push(&c2, a->steps->late[(size_t)u * (size_t)n + (size_t)r]);
                }
            }
            int64_t mi = cs_vec_median(&in), ml = cs_vec_median(&c2);
            cs_vec_free(&in);
            cs_vec_free(&c2);
            if (mi <= E || mi < 2 * mo)
                continue;
            cs_straggler g;
            memset(&g, 0, sizeof g);
            snprintf(g.kind, sizeof g.kind, "transient");
            g.rank = r;
            g.src = g.dst = -1;
            g.first_step = wa;
            g.last_step = wb;
            g.begin_ns = a->steps->step_begin[wa];
            g.end_ns = a->steps->step_end[wb];
            g.lateness_ns = ml;
            g.cost_ns = mi;
            cs_ns_text(b1, sizeof b1, mi);
            cs_ns_text(b2, sizeof b2, mo);
            cs_fmt_steps(b3, sizeof b3, wa, wb);
            snprintf(g.evidence, sizeof g.evidence,
                     "rank %d spent a median %s longer between collectives than the next slowest rank in %lld of "
                     "the %lld steps of %s (%.3f s to %.3f s into the run), and was on time otherwise (late in "
                     "%lld of %lld other steps, median excess %s)",
                     r, b1, (long long)cnt, (long long)(wb - wa + 1), b3,
                     (double)(g.begin_ns - a->clocks->t_first) / 1e9, (double)(g.end_ns - a->clocks->t_first) / 1e9,
                     (long long)outlate, (long long)outn, b2);
            if (cs_vpush(&v, &g) != 0)
                goto oom;
        }
    }

    /* slow links: a directed pair's transfer (the receive's end after the
     * later of the two arrivals) against the distribution of the other
     * pairs, with most of its messages out of line and its senders on time */
    if (a->links->pair_xfer) {
        size_t np = (size_t)n * (size_t)n;
        int64_t *pm = calloc(np, sizeof *pm);
        if (!pm)
            goto oom;
        size_t npairs = 0;
        for (size_t i = 0; i < np; i++) {
            pm[i] = -1;
            if (a->links->pair_xfer[i].n >= 5) {
                pm[i] = cs_vec_median(&a->links->pair_xfer[i]);
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
            /* The noise ceiling: the 95th percentile of the single
             * transfers of the other pairs in line (a receiver that loses
             * the CPU makes whole scheduler slices of them). A slow link
             * delays nearly every message beyond it; scheduling noise that
             * happens to favour one pair does not. */
            cs_vec pool = { 0 };
            for (size_t j = 0; j < np; j++)
                if (j != i && pm[j] >= 0 && pm[j] - M <= thr)
                    for (size_t k = 0; k < a->links->pair_xfer[j].n; k++)
                        cs_vec_push(&pool, a->links->pair_xfer[j].a[k]);
            int64_t ceil = M + E / 2;
            if (pool.n) {
                cs_vec_median(&pool); /* sorts */
                int64_t p95 = pool.a[(size_t)(0.95 * (double)(pool.n - 1))];
                if (p95 > ceil)
                    ceil = p95;
            }
            cs_vec_free(&pool);
            size_t out = 0, msgs = a->links->pair_xfer[i].n;
            for (size_t k = 0; k < msgs; k++)
                out += a->links->pair_xfer[i].a[k] > ceil;
            if (out * 5 < msgs * 4)
                continue;
            int64_t ls = cs_vec_median(&a->links->pair_late[i]);
            if (ls * 4 > ex)
                continue;
            /* the receiver on time too: late as a sender itself by half the
             * excess, it was starved of the CPU, not waiting on the link */
            cs_vec rl = { 0 };
            size_t dst = i % (size_t)n;
            for (size_t k = 0; k < (size_t)n; k++)
                for (size_t q = 0; q < a->links->pair_late[dst * (size_t)n + k].n; q++)
                    cs_vec_push(&rl, a->links->pair_late[dst * (size_t)n + k].a[q]);
            int64_t rlm = rl.n ? cs_vec_median(&rl) : 0;
            cs_vec_free(&rl);
            if (rlm * 2 > ex)
                continue;
            cs_straggler g;
            memset(&g, 0, sizeof g);
            snprintf(g.kind, sizeof g.kind, "slow_link");
            g.src = (int)(i / (size_t)n);
            g.dst = (int)(i % (size_t)n);
            g.rank = g.src;
            g.begin_ns = a->links->pair_t0[i];
            g.end_ns = a->links->pair_t1[i];
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

    /* A slow link whose receives were, for most of its messages, the very
     * calls that sent another slow link's messages (a Sendrecv held up by
     * its send half) is that link's echo, not a slow link of its own; echoes
     * chain (0->1 held up by 1->2, 3->0 by 0->1). Decided on the whole set
     * first; when every slow link echoes another, none is dropped. */
    {
        int nlinks = 0, nechoes = 0;
        char *echo = calloc((size_t)(v.n ? v.n : 1), 1);
        if (!echo)
            goto oom;
        for (int i = 0; i < v.n && a->msgs->msgs; i++) {
            if (strcmp(v.a[i].kind, "slow_link") != 0)
                continue;
            nlinks++;
            for (int j = 0; j < v.n && !echo[i]; j++) {
                if (j == i || strcmp(v.a[j].kind, "slow_link") != 0 || v.a[j].src != v.a[i].dst)
                    continue;
                cs_map sends = { 0 };
                size_t mine = 0, hits = 0;
                for (size_t k = 0; k < a->msgs->nmsgs; k++) {
                    const cs_msg *m = &a->msgs->msgs[k];
                    if (m->src == v.a[j].src && m->dst == v.a[j].dst && m->send_span > 0)
                        cs_map_put(&sends, (uint64_t)m->send_span, 1);
                }
                for (size_t k = 0; k < a->msgs->nmsgs; k++) {
                    const cs_msg *m = &a->msgs->msgs[k];
                    int64_t one;
                    if (m->src != v.a[i].src || m->dst != v.a[i].dst)
                        continue;
                    mine++;
                    hits += m->recv_span > 0 && cs_map_get(&sends, (uint64_t)m->recv_span, &one);
                }
                cs_map_free(&sends);
                if (mine && hits * 2 >= mine) {
                    echo[i] = 1;
                    nechoes++;
                }
            }
        }
        for (int i = 0; i < v.n && nechoes < nlinks; i++)
            if (echo[i])
                v.a[i].kind[0] = '\0';
        free(echo);
    }

    /* slow collectives: on one communicator, a window of steps whose
     * transfer (last exit - last entry, summed over the step) is out of line
     * with its other steps while the arrivals are on time */
    for (int ci = 0; ci < a->coll->ncomms && ns - s0 >= 2 * CS_TRANSIENT_MIN; ci++) {
        const int64_t *xs = a->coll->cstep_xfer + (size_t)ci * (size_t)ns,
                      *sk = a->coll->cstep_skew + (size_t)ci * (size_t)ns;
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
            g.comm = a->coll->comm_ids[ci];
            g.first_step = wa;
            g.last_step = wb;
            g.begin_ns = a->steps->step_begin[wa];
            g.end_ns = a->steps->step_end[wb];
            g.lateness_ns = g.cost_ns = cs_vec_median(&exv);
            int64_t skm = cs_vec_median(&skv);
            cs_vec_free(&exv);
            cs_vec_free(&skv);
            const char *opn = a->coll->cstep_op[ci] >= 0 && a->coll->cstep_op[ci] < a->ctx->nops
                                  ? a->ctx->ops[a->coll->cstep_op[ci]].name
                                  : "?";
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
    /* slow links on one communicator, over the whole run */
    int crc = cs_comm_links(a, E, s0, &v);
    if (crc == -1)
        goto oom;
    if (crc == -2) {
        free(v.a);
        snprintf(err, errlen, "%s: cannot read the collective instances or communicators back",
                 cs_store_path(a->ctx->st));
        return -1;
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
        if (v.a[i].kind[0] && cs_awriter_straggler(a->ctx->w, &v.a[i]) != 0)
            goto werr;
    free(v.a);
    return 0;
oom:
    free(v.a);
    snprintf(err, errlen, "out of memory");
    return -1;
werr:
    free(v.a);
    snprintf(err, errlen, "%s: cannot write the analysis", cs_store_path(a->ctx->st));
    return -1;
}
