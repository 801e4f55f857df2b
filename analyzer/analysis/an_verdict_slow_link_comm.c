/* an_verdict_slow_link_comm.c: a communicator whose collectives are slow
 * against the same collectives on other communicators, over the whole run.
 *
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
 *                its collectives alike); cost: the median excess per step */
#include "config.h"
#include "analyzer/analysis/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int *rank; /* [ndense], by rank index: 1 for a member */
    const cs_an_ctx *ctx;
} cs_members;

static int cs_member_cb(const cs_comm_member *m, void *arg)
{
    cs_members *p = arg;
    if (m->comm != p->comm)
        return 0;
    int d = cs__an_ctx_ix(p->ctx, m->rank);
    if (d >= 0)
        p->rank[d] = 1;
    size_t l = strlen(p->text);
    if (p->n < 12)
        snprintf(p->text + l, sizeof p->text - l, "%s%d", p->n ? "," : "", m->rank);
    else if (p->n == 12)
        snprintf(p->text + l, sizeof p->text - l, ",...");
    p->n++;
    return 0;
}

/* Slow links on a communicator (the rule above). Reads back the instances of the analysis being written and
 * the communicators' members (nothing is written meanwhile). Returns 0, -1
 * out of memory, -2 when the store cannot be read. */
static int cs_slow_link_comm_run(cs_verdict_ctx *a)
{
    int64_t E = a->E, s0 = a->s0;
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
            cl[i].ref = cs__an_ctx_median(&pool);
            cl[i].mad = cs__an_ctx_mad(&pool, cl[i].ref);
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
        int64_t dmed = cs__an_ctx_median(&dv);
        int ok = rc == 0 && considered >= 2 * CS_TRANSIENT_MIN &&
                 (double)dv.n >= CS_PERSIST_FRAC * (double)considered && dmed > E && xsum >= 2 * rsum;
        /* its members on time too: a member whose excess own time is half
         * the excess lost the CPU (on an oversubscribed node such a rank is
         * late and slow to finish its collectives alike) */
        cs_members mem = { cl[c].comm, "", 0, NULL, a->ctx };
        int late_member = -1;
        int64_t late_own = 0;
        if (ok) {
            mem.rank = calloc((size_t)(a->ctx->ndense > 0 ? a->ctx->ndense : 1), sizeof *mem.rank);
            if (!mem.rank)
                rc = -1;
            else if (cs_store_comm_members(a->ctx->st, cs_member_cb, &mem) != 0)
                rc = -2;
            for (int d = 0; d < a->ctx->ndense && rc == 0 && late_member < 0; d++) {
                int q = a->ctx->rank_of[d];
                if (!mem.rank[d])
                    continue;
                cs_vec ov = { 0 };
                for (int64_t s = s0; s < ns; s++)
                    if (cs_vec_push(&ov, cs__an_verdict_lat(a, s, q)) != 0)
                        rc = -1;
                late_own = cs__an_ctx_median(&ov);
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
            g.lateness_ns = cs__an_ctx_median(&pv);
            if (!mem.n)
                snprintf(mem.text, sizeof mem.text, "?");
            const cs_cclass *m = &cl[cmp[0]];
            const char *opn = m->op >= 0 && m->op < a->ctx->nops ? a->ctx->ops[m->op].name : "?";
            char b1[32], b2[32], b3[32], b4[32], b5[32], b6[48], more[32] = "";
            long long blo = m->bucket ? 1LL << m->bucket : 0, bhi = (2LL << m->bucket) - 1;
            cs__an_verdict_ns_text(b1, sizeof b1, cs__an_ctx_median(&xv));
            cs__an_verdict_ns_text(b2, sizeof b2, cs__an_ctx_median(&rv));
            cs__an_verdict_ns_text(b3, sizeof b3, m->mad);
            cs__an_verdict_ns_text(b4, sizeof b4, dmed);
            cs__an_verdict_ns_text(b5, sizeof b5, cs__an_ctx_median(&kv));
            cs__an_verdict_fmt_steps(b6, sizeof b6, fs, ls);
            if (ncmp > 1)
                snprintf(more, sizeof more, " and %d more", ncmp - 1);
            char cname[CS_COMMS_DISPLAY_MAX];
            cs__an_ctx_commname(a->ctx, g.comm, cname, sizeof cname);
            snprintf(g.evidence, sizeof g.evidence,
                     "the collectives of communicator %s (%d ranks: %s) took a median %s per call after the last "
                     "arrival, against %s (MAD %s) for the same calls on %d other communicators (%s, %lld-%lld B%s); "
                     "out of line in %lld of %lld steps (%s, %lld calls), a median %s per step, while its ranks "
                     "arrived on time (skew %s per step)",
                     cname, m->nranks, mem.text, b1, b2, b3, m->peers, opn, blo, bhi, more, (long long)dv.n,
                     (long long)considered, b6, (long long)calls, b4, b5);
            if (cs__an_verdict_push(a, &g) != 0)
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

const cs_verdict_kind cs__an_verdict_slow_link_comm = { .name = "slow_link_comm", .run = cs_slow_link_comm_run };
