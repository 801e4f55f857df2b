/* an_whatif.c: the what-if replay: a dependency-graph simulation
 * of the trace, fitted to its own measured costs, and the proposals it
 * estimates.
 *
 * Every rank's spans replay in their order on the rank (one lane per rank
 * and thread; NCCL calls replay on the host side, as enqueued). The gap
 * before a span (the compute since the previous span of its lane) keeps its
 * measured length. A span ends:
 *   - local spans (compute-free calls, starts of nonblocking operations,
 *     markers, sends): after their measured duration;
 *   - a blocking collective: at max(its replayed begin, the replayed last
 *     arrival of its instance) + its transfer;
 *   - a completion call (Wait*, Test*): at max(its begin, the last arrival
 *     of every collective instance it completed and the sender of every
 *     receive it completed) + its transfer;
 *   - a blocking receive (Recv, Sendrecv): at max(its begin, the sender's
 *     begin) + its transfer;
 *   - a blocking send that waited for its receiver (it began first and
 *     ended after the receive began: a rendezvous): at max(its begin, the
 *     receive's begin) + its transfer.
 * The transfer is the measured one (end - max(begin, measured arrival):
 * the replay then gives back the measured times exactly, a check of the
 * dependencies), or, for collectives with a cost model, the model's time
 * of the calls that complete together plus the member's residual (its
 * measured transfer minus the mean of its instance's or completion group's
 * members: the ranks keep their spread around the modelled time). The
 * modelled replay's median step time against the measured one is the
 * "replay error" of the report; the models are fitted twice, to cell
 * medians and to cell means (analyzer/analysis/an_model.c), and the fit whose
 * replay is closer is kept. A span that ended before its dependencies
 * arrived (rooted ops, NCCL enqueues) did not wait: it stays local.
 *
 * Nonblocking collectives completed by a Wait/Waitall: their transfer is
 * taken from the last member's start to the completion, i.e. from the
 * moment every member had started the instances AND this rank had entered
 * the completion call, to this rank leaving it. All instances a
 * completion call completed make one point of the cost model (n = their
 * number, bytes = their sum, time = the mean over the members); the
 * start calls replay as local spans of their measured length and are no
 * part of any point.
 *
 * Steps: the analysis's (MPI_Pcontrol markers, else the detected period);
 * a step's time is the earliest begin of its boundary spans (markers) to
 * the next step's, so the last step does not count.
 *
 * Variants, each against the modelled replay:
 *   (a) stragglers on time: each straggler verdict's rank takes, in its
 *       affected steps, for every gap no more than the median of the other
 *       ranks' gaps at the same place of the step;
 *   (b) fusion: a run of allreduces on one communicator, same op and
 *       datatype, issued back-to-back (no other call between them on the
 *       lane) from one call site, split greedily into buckets of at most B
 *       bytes (calls larger than the fusion threshold stay alone); a bucket
 *       becomes one call of its summed bytes, issued when its last member
 *       is (so it waits for it). Blocking members (the program's own
 *       buckets) before the last return at once, and the bucket adds a
 *       pack and an unpack copy at cs__an_whatif_memcpy_gbps(). Nonblocking
 *       members take apply mode's own costs, measured on fused traces
 *       (whatif_int.h, bench/fuse_costs.sh; per MPI library): before the
 *       last, its queueing instead of their start; the last keeps its start
 *       and adds the queueing and the fused call's issue (allocation,
 *       pack, the start's growth with the summed bytes) on the rank's time
 *       line; the completion call that completes fused calls adds their
 *       unpack and the members' request completions (wf_fcosts). For
 *       the program issuing such buckets itself, the members before the
 *       last take no time (the curve's second gain, which check-estimate
 *       uses when AFTER has no fused call). Replayed for every power-of-two
 *       bucket from the largest call to the largest run; the suggested bucket is
 *       the smallest whose gain is within 10 % of the best one (bigger
 *       buckets wait longer for their last member and copy more).
 *       A class is proposed only when (else one line in meta
 *       whatif_declined says why): the steps hold its runs (at most 1 in 10
 *       split into pieces of less than 90 % of its calls); the modelled replay is within
 *       CS_WF_MAX_MODEL_ERROR of the measured median step; its model's
 *       cells' relative residual is within CS_MODEL_MAX_RESID; an
 *       alpha-only model of blocking calls only for calls small enough
 *       (CS_WF_ALPHA_ONLY_COPY); the best
 *       gain is no more than the measured time in communication per step
 *       (plus the modelled replay's excess over the measured step) and
 *       CS_MODEL_MAX_RESID (a gain between the two is capped at it); for nonblocking
 *       calls, the per-call cost was fitted (completions of different
 *       numbers of calls) or every completion held the same n (then taken
 *       as overlapping, an_model.c); and the gain, the median over the
 *       steps of the modelled replay's step time minus the fused one's
 *       (paired step by step), is at least CS_WF_MIN_GAIN x CS_WF_MARGIN
 *       of the measured median step with its 95 % interval and its median
 *       over each half of the steps above CS_WF_MIN_GAIN (declined as too
 *       thin from CS_WF_MIN_GAIN / CS_WF_MARGIN up). The evidence names
 *       the fit the gain rests on;
 *   (c) overlap: exposed GPU communication (CUPTI activity) that started
 *       earlier would be hidden by the compute of the step, up to the
 *       measured compute per step.
 *
 * Memory: one record per loaded span (about 130 bytes) while the pass runs,
 * unlike the streaming passes (1M spans, 64 ranks: 2.3 s and about 250 MB
 * for the whole analysis). A trace of more than CS_WF_BUDGET_SPANS spans
 * with step markers is replayed on its first steps only (as many as fit the
 * budget, read rank by rank up to that step's marker; a note says which);
 * without markers, traces above CS_WF_MAX_SPANS spans are not replayed. */
#include "config.h"
#include "analyzer/analysis/whatif.h"
#include "common/msg.h"
#include "common/numarg.h"
#include "common/fmt.h"
#include "common/stats.h"
#include "libtrace/span.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/whatif_int.h"

static int wf_op_is(const wf_io *a, int op, const char *kind)
{
    return cs__an_ctx_kind_is(a->ctx, op, kind);
}

static int wf_is_allreduce(const wf_io *a, int op)
{
    return op >= 0 && op < a->ctx->nops &&
           (strstr(a->ctx->ops[op].name, "llreduce") || strstr(a->ctx->ops[op].name, "AllReduce"));
}

/* Collectives whose transfer a cost model describes: N-to-N (not rooted, not scans). */
static int wf_modelled_op(const wf_io *a, int op)
{
    return wf_op_is(a, op, "coll") && !strstr(a->ctx->ops[op].name, "scan") && !strstr(a->ctx->ops[op].name, "Scan");
}

static int wf_comm_kind(const wf_io *a, int op)
{
    static const char *const k[] = { "coll", "rooted", "send", "recv", "sendrecv", "complete", "probe" };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (wf_op_is(a, op, k[i]))
            return 1;
    return 0;
}

static void wf_env_warn(const char *msg)
{
    static int warned;
    if (!warned++)
        cs_note("%s", msg);
}

double cs__an_whatif_memcpy_gbps(void)
{
    return cs_numarg_env("COLLSCOPE_MEMCPY_GBPS", 1e-6, 1e9, CS_WF_MEMCPY_GBPS, wf_env_warn);
}

static int64_t wf_copy_ns(int64_t bytes)
{
    return (int64_t)((double)bytes / cs__an_whatif_memcpy_gbps());
}

/* ---- loading ---- */

static int wf_span_cmp(const void *x, const void *y)
{
    const wf_span *p = x, *q = y;
    if (p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    if (p->tid != q->tid)
        return p->tid < q->tid ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return (p->id > q->id) - (p->id < q->id);
}

typedef struct wf_pair {
    int span;
    int64_t code; /* >= 0: a span index; < 0: instance -1 - code */
} wf_pair;

static int wf_pair_cmp(const void *x, const void *y)
{
    const wf_pair *p = x, *q = y;
    if (p->span != q->span)
        return p->span < q->span ? -1 : 1;
    return (p->code > q->code) - (p->code < q->code);
}

typedef struct wf_pairs {
    wf_pair *a;
    size_t n, cap;
} wf_pairs;

static int wf_pair_push(wf_pairs *v, int span, int64_t code)
{
    if (CS_VEC_RESERVE(v->a, v->cap, v->n + 1) != 0)
        return -1;
    v->a[v->n++] = (wf_pair){ span, code };
    return 0;
}

typedef struct wf_done {
    int64_t span, key, end; /* the completing span's id; cs__an_ctx_rank_key(rank, req); its end */
} wf_done;
typedef struct wf_dones {
    wf_done *a;
    size_t n, cap;
} wf_dones;

static int wf_done_cb(const cs_completion *c, void *arg)
{
    wf_dones *v = arg;
    if (CS_VEC_RESERVE(v->a, v->cap, v->n + 1) != 0)
        return -1;
    v->a[v->n++] = (wf_done){ c->span, (int64_t)cs__an_ctx_rank_key(c->rank, c->req), c->end_ns };
    return 0;
}

typedef struct wf_algo_ctx {
    wf *w;
    cs_map *span_algo;
} wf_algo_ctx;

static int wf_algo_cb(int64_t span, const char *algo, const char *proto, void *arg)
{
    wf_algo_ctx *x = arg;
    char nm[40];
    snprintf(nm, sizeof nm, "%s%s%s", algo ? algo : "", proto && *proto ? "/" : "", proto ? proto : "");
    if (!nm[0])
        return 0;
    int k;
    for (k = 0; k < x->w->nalgos; k++)
        if (strcmp(x->w->algos[k], nm) == 0)
            break;
    if (k == x->w->nalgos) {
        if (CS_VEC_RESERVE(x->w->algos, x->w->capAlgos, (size_t)k + 1) != 0)
            return -1;
        if (!(x->w->algos[k] = strdup(nm)))
            return -1;
        x->w->nalgos++;
    }
    return cs_map_put(x->span_algo, (uint64_t)span, k + 1);
}

static void wf_free(wf *w)
{
    free(w->s);
    free(w->lane_lo);
    free(w->lane_hi);
    free(w->lane_rank);
    free(w->lane_nmark);
    free(w->in);
    free(w->dep);
    free(w->models);
    free(w->mfit);
    free(w->bstep);
    free(w->bspan);
    free(w->mbeg);
    free(w->bp);
    free(w->ep);
    free(w->lmax);
    free(w->lbuf);
    free(w->cnt);
    free(w->stamp);
    free(w->pos);
    for (int i = 0; i < w->nalgos; i++)
        free(w->algos[i]);
    free(w->algos);
}

/* Load the spans, instances and dependencies. 1: nothing to replay. */
static int wf_load(wf *w, char *err, size_t errlen)
{
    wf_io *a = w->a;
    int64_t total = cs_store_count_spans(a->ctx->st);
    if (total > CS_WF_MAX_SPANS && !(a->steps->step_source == 1 && a->steps->nsteps > CS_WF_MIN_STEPS)) {
        cs__an_ctx_note(a->ctx, "what-if replay skipped: %lld spans (more than %d)", (long long)total, CS_WF_MAX_SPANS);
        return 1;
    }
    cs_map span_algo = { 0 };
    wf_algo_ctx ac = { w, &span_algo };
    if (cs_store_nccl_algos(a->ctx->st, wf_algo_cb, &ac) != 0) {
        cs_map_free(&span_algo);
        snprintf(err, errlen, "%s: cannot read nccl_coll", cs_store_path(a->ctx->st));
        return -1;
    }
    /* A large trace with step markers: its first steps only. */
    if (total > CS_WF_BUDGET_SPANS && a->steps->step_source == 1 && a->steps->nsteps > CS_WF_MIN_STEPS) {
        int64_t k = a->steps->nsteps * CS_WF_BUDGET_SPANS / total;
        w->maxsteps = (int)(k > CS_WF_MIN_STEPS ? k : CS_WF_MIN_STEPS);
        if (w->maxsteps >= a->steps->nsteps)
            w->maxsteps = 0;
        else
            cs__an_ctx_note(
                a->ctx, "what-if replay: steps 0-%d of %lld (%lld spans; the first %d steps fit the replay's budget)",
                w->maxsteps - 1, (long long)a->steps->nsteps, (long long)total, w->maxsteps);
    }
    size_t cap = 0;
    cs_span sp;
    int r = 0;
    for (int d = 0; d < a->ctx->ndense && r >= 0; d++) {
        int rank = a->ctx->rank_of[d]; /* the ranks present, in the order of their ids */
        cs_span_query q = { .order = CS_ORDER_RANK_TIME, .rank = rank };
        cs_span_iter *it = cs_store_spans(a->ctx->st, &q, err, errlen);
        if (!it) {
            cs_map_free(&span_algo);
            return -1;
        }
        int64_t marks = 0;
        while ((r = cs_span_next(it, &sp)) > 0) {
            if (cs__an_ctx_ix(a->ctx, sp.rank) < 0)
                continue;
            /* the marker that begins step maxsteps ends this rank's window */
            if (w->maxsteps && wf_op_is(a, sp.op, "marker") && ++marks > w->maxsteps)
                break;
            if (CS_VEC_RESERVE(w->s, cap, (size_t)w->ns + 1) != 0) {
                cs_span_iter_free(it);
                cs_map_free(&span_algo);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            wf_span *x = &w->s[w->ns++];
            memset(x, 0, sizeof *x);
            x->id = sp.id;
            x->b = sp.begin_ns;
            x->e = sp.end_ns > sp.begin_ns ? sp.end_ns : sp.begin_ns;
            x->bytes = sp.bytes;
            x->comm = sp.comm;
            x->seq = sp.seq;
            x->callsite = sp.callsite;
            x->flags = sp.flags;
            x->op = sp.op;
            x->rank = sp.rank;
            x->tid = sp.tid;
            x->dtype = sp.dtype;
            x->inst = -1;
            x->step = -1;
            x->cls = WF_LOCAL;
            /* request ids ride in lag until the dependencies are built */
            int nb =
                (sp.flags & CS_F_NONBLOCKING) || (sp.op >= 0 && sp.op < a->ctx->nops && a->ctx->ops[sp.op].nonblocking);
            x->lag = nb ? sp.req : 0;
            if (wf_op_is(a, sp.op, "marker")) {
                /* a marker marks a moment; one with a length (an imported
                 * ProfilerStep#N covers its step) covers other calls, and
                 * replayed as a call it would hold its lane that long */
                x->cls = WF_MARK;
                x->e = x->b;
            } else if (sp.seq >= 0 && sp.comm != 0 && !(sp.flags & CS_F_FUSED) &&
                       (wf_op_is(a, sp.op, "coll") || wf_op_is(a, sp.op, "rooted")))
                x->cls = nb ? WF_NBCOLL : WF_COLL;
        }
        cs_span_iter_free(it);
    }
    if (r < 0) {
        cs_map_free(&span_algo);
        snprintf(err, errlen, "%s: cannot read the spans (corrupt?)", cs_store_path(a->ctx->st));
        return -1;
    }
    if (w->ns == 0) {
        cs_map_free(&span_algo);
        return 1;
    }
    if (w->ns)
        qsort(w->s, w->ns, sizeof *w->s, wf_span_cmp);
    /* lanes */
    size_t n = w->ns;
    int nl = 0;
    for (size_t i = 0; i < n; i++)
        nl += i == 0 || w->s[i].rank != w->s[i - 1].rank || w->s[i].tid != w->s[i - 1].tid;
    w->nlanes = nl;
    w->lane_lo = calloc((size_t)nl, sizeof *w->lane_lo);
    w->lane_hi = calloc((size_t)nl, sizeof *w->lane_hi);
    w->lane_rank = calloc((size_t)nl, sizeof *w->lane_rank);
    w->lane_nmark = calloc((size_t)nl, sizeof *w->lane_nmark);
    w->bp = malloc(n * sizeof *w->bp);
    w->ep = malloc(n * sizeof *w->ep);
    w->pos = malloc((size_t)nl * sizeof *w->pos);
    if (!w->lane_lo || !w->lane_hi || !w->lane_rank || !w->lane_nmark || !w->bp || !w->ep || !w->pos) {
        cs_map_free(&span_algo);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0, l = (size_t)-1; i < n; i++) {
        if (i == 0 || w->s[i].rank != w->s[i - 1].rank || w->s[i].tid != w->s[i - 1].tid) {
            l++;
            w->lane_lo[l] = (int)i;
            w->lane_rank[l] = w->s[i].rank;
        }
        w->lane_hi[l] = (int)i + 1;
        w->s[i].lane = (int)l;
        w->lane_nmark[l] += w->s[i].cls == WF_MARK;
    }
    /* instances */
    cs_map imap = { 0 }, sidx = { 0 }, reqs = { 0 };
    int rc = -1;
    wf_pairs pairs = { 0 };
    wf_dones done = { 0 };
    for (size_t i = 0; i < n; i++) {
        wf_span *x = &w->s[i];
        if (cs_map_put(&sidx, (uint64_t)x->id, (int64_t)i) != 0)
            goto oom;
        if (x->lag && cs_map_put(&reqs, cs__an_ctx_rank_key(x->rank, x->lag), (int64_t)i) != 0)
            goto oom;
        x->lag = 0;
        if (x->cls != WF_COLL && x->cls != WF_NBCOLL)
            continue;
        uint64_t key = ((uint64_t)x->comm * 0x100000001B3ULL) ^ (uint64_t)x->seq;
        if (key == UINT64_MAX)
            key = 0;
        int64_t k;
        if (!cs_map_get(&imap, key, &k)) {
            if (CS_VEC_RESERVE(w->in, w->capi, (size_t)w->ninst + 1) != 0)
                goto oom;
            k = w->ninst++;
            wf_inst *in = &w->in[k];
            memset(in, 0, sizeof *in);
            in->comm = x->comm;
            in->seq = x->seq;
            in->bytes = x->bytes;
            in->op = x->op;
            in->L = INT64_MIN;
            in->model = -1;
            in->calls = 1;
            in->nb = x->cls == WF_NBCOLL;
            int64_t al = 0;
            in->algo = cs_map_get(&span_algo, (uint64_t)x->id, &al) ? (int)al : 0;
            if (cs_map_put(&imap, key, k) != 0)
                goto oom;
        }
        x->inst = (int)k;
        w->in[k].nmem++;
        if (x->b > w->in[k].L)
            w->in[k].L = x->b;
    }
    /* dependencies: blocking collectives on their instance; completion
     * calls on what their requests waited for; receives on their sender */
    for (size_t i = 0; i < n; i++)
        if (w->s[i].cls == WF_COLL && wf_pair_push(&pairs, (int)i, -1 - (int64_t)w->s[i].inst) != 0)
            goto oom;
    cs_map sender = { 0 };
    cs_msg_iter mit;
    if (cs__an_msgs_begin(a->msgs, &mit) != 0) {
        snprintf(err, errlen, "cannot read the paired messages back");
        goto out;
    }
    for (const cs_msg *m; (m = cs__an_msgs_next(&mit));) {
        int64_t si, ri;
        if (m->send_span <= 0 || m->recv_span <= 0 || !cs_map_get(&sidx, (uint64_t)m->send_span, &si) ||
            !cs_map_get(&sidx, (uint64_t)m->recv_span, &ri))
            continue;
        if (cs_map_put(&sender, (uint64_t)ri, si) != 0) {
            cs__an_msgs_end(&mit);
            cs_map_free(&sender);
            goto oom;
        }
        if (!m->recv_nonblocking && wf_pair_push(&pairs, (int)ri, si) != 0) {
            cs__an_msgs_end(&mit);
            cs_map_free(&sender);
            goto oom;
        }
        /* a blocking send that waited for its receiver (it began first and
         * ended after the receive began: a rendezvous) ends after the
         * receive's begin, plus its transfer */
        const wf_span *xs = &w->s[si], *xr = &w->s[ri];
        if (!(xs->flags & CS_F_NONBLOCKING) && xs->cls == WF_LOCAL && xs->lane != xr->lane && xr->b > xs->b &&
            xs->e > xr->b && wf_pair_push(&pairs, (int)si, ri) != 0) {
            cs__an_msgs_end(&mit);
            cs_map_free(&sender);
            goto oom;
        }
    }
    if (cs__an_msgs_end(&mit) != 0) {
        cs_map_free(&sender);
        snprintf(err, errlen, "the paired messages could not be read back whole");
        goto out;
    }
    if (cs_store_completions(a->ctx->st, wf_done_cb, &done) != 0) {
        cs_map_free(&sender);
        snprintf(err, errlen, "%s: cannot read the completions", cs_store_path(a->ctx->st));
        goto out;
    }
    for (size_t k = 0; k < done.n; k++) {
        int64_t ci, st_i, snd;
        if (!cs_map_get(&sidx, (uint64_t)done.a[k].span, &ci) || !cs_map_get(&reqs, (uint64_t)done.a[k].key, &st_i))
            continue;
        /* completions.span may name a neighbour of the completion call (it
         * was seen naming the span after it): take the completion call of
         * the lane next to it whose end is closest to the completion's */
        {
            int64_t best = -1, bd = INT64_MAX;
            for (int64_t c2 = ci - 1; c2 <= ci + 1; c2++) {
                if (c2 < 0 || (size_t)c2 >= n || w->s[c2].lane != w->s[ci].lane ||
                    !wf_op_is(a, w->s[c2].op, "complete"))
                    continue;
                int64_t dd = w->s[c2].e > done.a[k].end ? w->s[c2].e - done.a[k].end : done.a[k].end - w->s[c2].e;
                if (dd < bd)
                    bd = dd, best = c2;
            }
            if (best < 0)
                continue;
            ci = best;
        }
        const wf_span *start = &w->s[st_i];
        if (start->cls == WF_NBCOLL) {
            if (wf_pair_push(&pairs, (int)ci, -1 - (int64_t)start->inst) != 0)
                goto oom2;
        } else if (cs_map_get(&sender, (uint64_t)st_i, &snd)) {
            if (wf_pair_push(&pairs, (int)ci, snd) != 0)
                goto oom2;
        }
    }
    cs_map_free(&sender);
    if (pairs.n)
        qsort(pairs.a, pairs.n, sizeof *pairs.a, wf_pair_cmp);
    w->dep = malloc((pairs.n ? pairs.n : 1) * sizeof *w->dep);
    if (!w->dep)
        goto oom;
    for (size_t k = 0; k < pairs.n; k++) {
        if (k && pairs.a[k].span == pairs.a[k - 1].span && pairs.a[k].code == pairs.a[k - 1].code)
            continue;
        wf_span *x = &w->s[pairs.a[k].span];
        if (x->ndep == 0)
            x->dep0 = (int)w->ndep;
        x->ndep++;
        w->dep[w->ndep++] = pairs.a[k].code;
        if (x->cls == WF_LOCAL)
            x->cls = wf_op_is(a, x->op, "complete") ? WF_WAIT : WF_RECV;
    }
    /* measured transfers: end - max(begin, the measured arrivals) */
    for (size_t i = 0; i < n; i++) {
        wf_span *x = &w->s[i];
        if (!x->ndep)
            continue;
        int64_t D = INT64_MIN;
        for (int d = 0; d < x->ndep; d++) {
            int64_t c = w->dep[x->dep0 + d];
            int64_t t = c >= 0 ? w->s[c].b : w->in[-1 - c].L;
            if (t > D)
                D = t;
        }
        int64_t M = D > x->b ? D : x->b;
        x->lag = x->e - M;
        x->nowait = x->e < D;
    }
    /* residuals: each member's lag against the mean of its group (the
     * instance, or the first instance a completion call completed): the
     * modelled replay keeps the ranks' spread around the modelled time */
    {
        wf_pairs g = { 0 };
        for (size_t i = 0; i < n; i++) {
            const wf_span *x = &w->s[i];
            if (!x->ndep || x->nowait)
                continue;
            int64_t key = INT64_MAX;
            for (int d = 0; d < x->ndep; d++)
                if (w->dep[x->dep0 + d] < 0 && -1 - w->dep[x->dep0 + d] < key)
                    key = -1 - w->dep[x->dep0 + d];
            if (key != INT64_MAX && wf_pair_push(&g, (int)i, key) != 0) {
                free(g.a);
                goto oom;
            }
        }
        for (size_t k = 0; k < g.n; k++) { /* sort by group: swap roles */
            int tmp = g.a[k].span;
            g.a[k].span = (int)g.a[k].code;
            g.a[k].code = tmp;
        }
        if (g.n)
            qsort(g.a, g.n, sizeof *g.a, wf_pair_cmp);
        for (size_t k = 0; k < g.n;) {
            size_t j = k;
            int64_t sum = 0;
            while (j < g.n && g.a[j].span == g.a[k].span)
                sum += w->s[g.a[j++].code].lag;
            int64_t mean = sum / (int64_t)(j - k);
            for (size_t q = k; q < j; q++)
                w->s[g.a[q].code].res = w->s[g.a[q].code].lag - mean;
            k = j;
        }
        free(g.a);
    }
    rc = 0;
    goto out;
oom2:
    cs_map_free(&sender);
oom:
    snprintf(err, errlen, "out of memory");
out:
    cs_map_free(&imap);
    cs_map_free(&sidx);
    cs_map_free(&reqs);
    cs_map_free(&span_algo);
    free(pairs.a);
    free(done.a);
    return rc;
}

/* ---- steps ---- */

static int wf_steps(wf *w)
{
    wf_io *a = w->a;
    w->nsteps = (int)a->steps->nsteps;
    if (w->maxsteps > 0 && w->maxsteps < w->nsteps)
        w->nsteps = w->maxsteps;
    if (w->nsteps < 2)
        return 0;
    size_t capStep = 0, capSpan = 0;
    for (int l = 0; l < w->nlanes; l++) {
        int k = 0;
        /* a detected period: the lane's rank's marks (the first call of each
         * repetition) */
        int pd = a->steps->step_source == 2 ? cs__an_ctx_ix(a->ctx, w->lane_rank[l]) : -1;
        const cs_vec *pm = pd >= 0 ? &a->steps->marks[pd] : NULL;
        for (int i = w->lane_lo[l]; i < w->lane_hi[l]; i++) {
            const wf_span *x = &w->s[i];
            int is_b = 0;
            if (a->steps->step_source == 1)
                is_b = x->cls == WF_MARK;
            else if (pm && (size_t)k < pm->n && x->b >= pm->a[k])
                is_b = 1;
            if (!is_b || k >= w->nsteps)
                continue;
            if (CS_VEC_RESERVE(w->bstep, capStep, (size_t)w->nb + 1) != 0 ||
                CS_VEC_RESERVE(w->bspan, capSpan, (size_t)w->nb + 1) != 0)
                return -1;
            w->bstep[w->nb] = k++;
            w->bspan[w->nb++] = i;
        }
    }
    w->mbeg = malloc((size_t)w->nsteps * sizeof *w->mbeg);
    if (!w->mbeg)
        return -1;
    for (int k = 0; k < w->nsteps; k++)
        w->mbeg[k] = INT64_MAX;
    for (size_t j = 0; j < w->nb; j++)
        if (w->s[w->bspan[j]].b < w->mbeg[w->bstep[j]])
            w->mbeg[w->bstep[j]] = w->s[w->bspan[j]].b;
    /* each span's step: its lane's markers, else the steps' measured begins */
    for (int l = 0; l < w->nlanes; l++) {
        int k = -1;
        int pd = a->steps->step_source == 2 ? cs__an_ctx_ix(a->ctx, w->lane_rank[l]) : -1;
        const cs_vec *pm = pd >= 0 ? &a->steps->marks[pd] : NULL;
        for (int i = w->lane_lo[l]; i < w->lane_hi[l]; i++) {
            wf_span *x = &w->s[i];
            if (w->lane_nmark[l] && a->steps->step_source == 1) {
                if (x->cls == WF_MARK)
                    k++;
            } else if (pm && pm->n) {
                while ((size_t)(k + 1) < pm->n && pm->a[k + 1] <= x->b)
                    k++;
            } else {
                while (k + 1 < w->nsteps && w->mbeg[k + 1] <= x->b)
                    k++;
            }
            x->step = k < w->nsteps ? k : w->nsteps - 1;
        }
    }
    return 0;
}

/* Median step time of one replay (begins in bp), over steps 0..n-2 (the
 * last step has no next begin); -1 when there are fewer than 2 steps. */
void cs__wf_step_begins(const wf *w, const int64_t *bp, int64_t *out)
{
    for (int k = 0; k < w->nsteps; k++)
        out[k] = INT64_MAX;
    for (size_t j = 0; j < w->nb; j++)
        if (bp[w->bspan[j]] < out[w->bstep[j]])
            out[w->bstep[j]] = bp[w->bspan[j]];
}

int64_t cs__wf_step_median(const wf *w, const int64_t *bp, int64_t *buf)
{
    if (w->nsteps < 2)
        return -1;
    cs__wf_step_begins(w, bp, buf);
    size_t m = 0;
    for (int k = 0; k + 1 < w->nsteps; k++)
        if (buf[k] != INT64_MAX && buf[k + 1] != INT64_MAX)
            buf[m++] = buf[k + 1] - buf[k];
    return cs_stats_median_i64(buf, m);
}

/* Each step's time in one replay (begins in bp): out[k] for steps
 * 0..nsteps-2, INT64_MIN where a step or the next has no begin. buf:
 * nsteps values of scratch. */
static void wf_step_times(const wf *w, const int64_t *bp, int64_t *buf, int64_t *out)
{
    cs__wf_step_begins(w, bp, buf);
    for (int k = 0; k + 1 < w->nsteps; k++)
        out[k] = buf[k] != INT64_MAX && buf[k + 1] != INT64_MAX ? buf[k + 1] - buf[k] : INT64_MIN;
}

/* A variant's gain, paired step by step with the reference replay: the
 * median over steps of ref[k] - var[k], and the distribution-free 95 %
 * interval of that median (the order statistics n/2 -+ 0.98 sqrt(n)).
 * Paired, the gain is the same calls' time in the same step, not the
 * difference of two medians of different steps, which moves with the
 * steps' spread from run to run. d: n values of scratch. */
typedef struct wf_gain {
    int64_t med, lo, hi;
    int64_t half[2]; /* the median over the first and over the second half of the steps */
    int n;
} wf_gain;

static int64_t wf_mid(int64_t *d, size_t m)
{
    if (m == 0)
        return 0;
    qsort(d, m, sizeof *d, cs_stats_cmp_i64);
    return m % 2 ? d[m / 2] : d[m / 2 - 1] + (d[m / 2] - d[m / 2 - 1]) / 2;
}

static wf_gain wf_paired_gain(const int64_t *ref, const int64_t *var, int n, int64_t *d)
{
    wf_gain g = { 0, 0, 0, { 0, 0 }, 0 };
    for (int k = 0; k < n; k++)
        if (ref[k] != INT64_MIN && var[k] != INT64_MIN)
            d[g.n++] = ref[k] - var[k];
    if (g.n == 0)
        return g;
    /* the halves in step order first: a gain that moves through the run
     * (the load changing) moves between reruns too */
    int nh = g.n / 2;
    g.half[1] = wf_mid(d + nh, (size_t)(g.n - nh));
    g.half[0] = wf_mid(d, (size_t)nh);
    qsort(d, (size_t)g.n, sizeof *d, cs_stats_cmp_i64);
    size_t m = (size_t)g.n;
    g.med = m % 2 ? d[m / 2] : d[m / 2 - 1] + (d[m / 2] - d[m / 2 - 1]) / 2;
    double h = 0.98 * sqrt((double)m);
    long lo = (long)floor((double)m / 2 - h), hi = (long)ceil((double)m / 2 + h) - 1;
    g.lo = d[lo < 0 ? 0 : lo];
    g.hi = d[hi >= (long)m ? (long)m - 1 : hi];
    return g;
}

/* Apply mode's own costs, by MPI library: how they were measured is in
 * whatif_int.h above wf_fcost. The first is the default. */
static const wf_fcost wf_fcosts[] = {
    { "openmpi", CS_WF_QUEUE_NS, 1340, 40, 69, 550, 37 },
    { "mpich", 180, 1000, 276, 69, 1450, 42 },
};

static const wf_fcost *wf_fcost_for(cs_store *st)
{
    cs_proc *pr = NULL;
    int n = 0;
    const wf_fcost *fc = &wf_fcosts[0];
    if (cs_store_procs(st, &pr, &n) == 0 && n > 0)
        for (size_t i = 0; i < sizeof wf_fcosts / sizeof wf_fcosts[0]; i++)
            if (strcmp(pr[0].mpi, wf_fcosts[i].mpi) == 0)
                fc = &wf_fcosts[i];
    free(pr);
    return fc;
}

/* ---- the replay ---- */

/* Replay one variant into w->bp / w->ep. Returns 0, or -1 when the
 * dependencies deadlock (an inconsistent trace). */
int cs__wf_replay(wf *w, const wf_var *v)
{
    int nall = w->ninst + v->nvin;
    const wf_fcost *fc = w->fc ? w->fc : &wf_fcosts[0];
    for (int k = 0; k < nall; k++) {
        w->cnt[k] = 0;
        w->lmax[k] = INT64_MIN;
        w->stamp[k] = -1;
    }
    for (size_t i = 0; i < w->ns; i++)
        w->bp[i] = CS_WF_UNSET;
    for (int l = 0; l < w->nlanes; l++)
        w->pos[l] = w->lane_lo[l];
    size_t remaining = w->ns;
#define WF_INST(k) ((k) < w->ninst ? &w->in[k] : &v->vin[(k)-w->ninst])
#define WF_ARRIVE(k, t)       \
    do {                      \
        w->cnt[k]++;          \
        if ((t) > w->lmax[k]) \
            w->lmax[k] = (t); \
    } while (0)
    while (remaining) {
        int progress = 0;
        for (int l = 0; l < w->nlanes; l++) {
            while (w->pos[l] < w->lane_hi[l]) {
                int i = w->pos[l];
                const wf_span *x = &w->s[i];
                int g = x->inst >= 0 && v->ifg ? v->ifg[x->inst] : -1;
                if (w->bp[i] == CS_WF_UNSET) {
                    int64_t gap = i == w->lane_lo[l] ? 0 : v->gap ? v->gap[i] : x->b - w->s[i - 1].e;
                    w->bp[i] = i == w->lane_lo[l] ? x->b : w->ep[i - 1] + gap;
                    if (x->inst >= 0 && g < 0)
                        WF_ARRIVE(x->inst, w->bp[i]);
                    else if (g >= 0 && v->flast[i] && x->cls == WF_COLL)
                        WF_ARRIVE(g, w->bp[i] + wf_copy_ns(WF_INST(g)->bytes));
                }
                int64_t b = w->bp[i], d = v->dur ? v->dur[i] : x->e - x->b, e;
                if (x->cls == WF_COLL && !x->nowait && g >= 0) {
                    if (!v->flast[i]) {
                        e = b;
                    } else {
                        if (w->cnt[g] < WF_INST(g)->nmem)
                            break;
                        int64_t t =
                            (int64_t)cs__an_model_time(&w->models[WF_INST(g)->model], 1, (double)WF_INST(g)->bytes) +
                            wf_copy_ns(WF_INST(g)->bytes) + x->res;
                        e = w->lmax[g] + (t > 0 ? t : 0);
                    }
                } else if ((x->cls == WF_COLL || x->cls == WF_WAIT || x->cls == WF_RECV) && !x->nowait) {
                    int64_t D = INT64_MIN, msum = 0, nfm = 0;
                    int ready = 1, allmodel = 1, fused = 0, nmod = 0;
                    struct {
                        int m;
                        double n, bytes;
                    } mg[8]; /* calls completing together, per model */
                    for (int q = 0; q < x->ndep && ready; q++) {
                        int64_t c = w->dep[x->dep0 + q];
                        if (c >= 0) {
                            if (w->bp[c] == CS_WF_UNSET)
                                ready = 0;
                            else if (w->bp[c] > D)
                                D = w->bp[c];
                            allmodel = 0;
                            continue;
                        }
                        int k = (int)(-1 - c), gk = v->ifg && v->ifg[k] >= 0 ? v->ifg[k] : k;
                        const wf_inst *in = WF_INST(gk);
                        if (w->cnt[gk] < in->nmem) {
                            ready = 0;
                            break;
                        }
                        if (w->lmax[gk] > D)
                            D = w->lmax[gk];
                        nfm += gk >= w->ninst && !v->drop_members; /* an apply-mode member */
                        if (w->stamp[gk] == i)
                            continue;
                        w->stamp[gk] = i;
                        if (in->model < 0) {
                            allmodel = 0;
                            continue;
                        }
                        int t;
                        for (t = 0; t < nmod && mg[t].m != in->model; t++)
                            ;
                        if (t == nmod) {
                            if (nmod == 8) {
                                allmodel = 0;
                                continue;
                            }
                            mg[nmod].m = in->model;
                            mg[nmod].n = mg[nmod].bytes = 0;
                            nmod++;
                        }
                        mg[t].n += 1;
                        mg[t].bytes += (double)in->bytes;
                        if (gk >= w->ninst) {
                            fused = 1;
                            /* apply mode unpacks at its measured rate; the
                             * program's own buckets need no copy back
                             * beyond the one at the memory bandwidth */
                            msum += v->drop_members || x->cls == WF_COLL ? wf_copy_ns(in->bytes)
                                                                         : in->bytes * fc->unpack_per_kib / 1024;
                        }
                    }
                    if (!ready)
                        break;
                    for (int t = 0; t < nmod; t++)
                        msum += (int64_t)cs__an_model_time(&w->models[mg[t].m], mg[t].n, mg[t].bytes);
                    /* apply mode completes each member's request itself */
                    if (nfm)
                        msum += fc->done + nfm * fc->done_member;
                    int64_t M = D > b ? D : b;
                    if ((v->model || fused) && allmodel && x->ndep)
                        e = M + (msum + x->res > 0 ? msum + x->res : 0);
                    else
                        e = M + (v->lag ? v->lag[i] : x->lag);
                } else if (x->cls == WF_NBCOLL && g >= 0 && v->drop_members && !v->flast[i]) {
                    e = b;
                } else if (x->cls == WF_NBCOLL && g >= 0 && !v->flast[i]) {
                    /* apply mode queues the call (a generalized request and
                     * the span) instead of starting it; the last member's
                     * measured start stands for the fused call's start */
                    e = b + (d < fc->queue ? d : fc->queue);
                } else if (x->cls == WF_NBCOLL && g >= 0 && !v->drop_members) {
                    /* the last member: queued, then the fused call issued
                     * on this rank's time line (allocation, pack, the start
                     * of the summed bytes over the member's own) */
                    int64_t gb = WF_INST(g)->bytes, extra = gb > x->bytes ? gb - x->bytes : 0;
                    e = b + d + (d < fc->queue ? d : fc->queue) + fc->issue + extra * fc->issue_per_kib / 1024;
                } else {
                    e = b + d;
                }
                w->ep[i] = e;
                if (g >= 0 && v->flast[i] && x->cls == WF_NBCOLL)
                    WF_ARRIVE(g, v->drop_members ? e + wf_copy_ns(WF_INST(g)->bytes) : e);
                w->pos[l]++;
                remaining--;
                progress = 1;
            }
        }
        if (!progress && remaining)
            return -1;
    }
#undef WF_ARRIVE
#undef WF_INST
    return 0;
}

/* ---- the cost models ---- */

typedef struct wf_kpt {
    int key; /* model index */
    cs_fitpt p;
} wf_kpt;

typedef struct wf_kpts {
    wf_kpt *a;
    size_t n, cap;
} wf_kpts;

static int wf_kpt_push(wf_kpts *v, int key, double n, double bytes, double t)
{
    if (CS_VEC_RESERVE(v->a, v->cap, v->n + 1) != 0)
        return -1;
    v->a[v->n++] = (wf_kpt){ key, { n, bytes, t } };
    return 0;
}

static int wf_kpt_cmp(const void *x, const void *y)
{
    const wf_kpt *p = x, *q = y;
    return (p->key > q->key) - (p->key < q->key);
}

/* The model key of an instance: (comm, op, algo), an index into w->models. */
static int wf_model_index(wf *w, const wf_inst *in)
{
    for (int m = 0; m < w->nmodels; m++)
        if (w->models[m].comm == in->comm && w->models[m].op == in->op &&
            strcmp(w->models[m].algo, in->algo ? w->algos[in->algo - 1] : "") == 0)
            return m;
    if (CS_VEC_RESERVE(w->models, w->capModels, (size_t)w->nmodels + 1) != 0 ||
        CS_VEC_RESERVE(w->mfit, w->capFit, (size_t)w->nmodels + 1) != 0)
        return -1;
    memset(&w->mfit[w->nmodels], 0, sizeof w->mfit[w->nmodels]);
    cs_model_row *m = &w->models[w->nmodels];
    memset(m, 0, sizeof *m);
    m->comm = in->comm;
    m->op = in->op;
    snprintf(m->algo, sizeof m->algo, "%s", in->algo ? w->algos[in->algo - 1] : "");
    return w->nmodels++;
}

static int wf_fit_models(wf *w, int use_mean)
{
    wf_io *a = w->a;
    wf_kpts kp = { 0 };
    for (int k = 0; k < w->ninst; k++)
        w->in[k].model = -1;
    for (int k = 0; k < w->ninst; k++) {
        wf_inst *in = &w->in[k];
        if (!wf_modelled_op(a, in->op))
            continue;
        int m = wf_model_index(w, in);
        if (m < 0)
            return -1;
        in->model = m;
    }
    /* blocking instances: the mean over the members of their exit - the
     * last entry (each member's lag - its residual), once per instance */
    char *took = calloc((size_t)(w->ninst ? w->ninst : 1), 1);
    if (!took)
        return -1;
    for (size_t i = 0; i < w->ns; i++) {
        const wf_span *x = &w->s[i];
        if (x->cls == WF_COLL && !x->nowait && w->in[x->inst].model >= 0 && w->in[x->inst].nmem > 1 && !took[x->inst]) {
            took[x->inst] = 1;
            if (wf_kpt_push(&kp, w->in[x->inst].model, 1, (double)x->bytes, (double)(x->lag - x->res)) != 0) {
                free(took);
                free(kp.a);
                return -1;
            }
        }
    }
    /* nonblocking: each member's completion call, over the instances it
     * completed: its exit - max(its entry, the last member's start) */
    for (size_t i = 0; i < w->ns; i++) {
        const wf_span *x = &w->s[i];
        if (x->cls != WF_WAIT || x->nowait)
            continue;
        int first = -1, ok = 1, n = 0;
        int64_t bytes = 0, D = INT64_MIN;
        for (int q = 0; q < x->ndep && ok; q++) {
            int64_t c = w->dep[x->dep0 + q];
            if (c >= 0) {
                ok = 0;
                break;
            }
            const wf_inst *in = &w->in[-1 - c];
            if (in->model < 0 || (first >= 0 && (in->comm != w->in[first].comm || in->op != w->in[first].op))) {
                ok = 0;
                break;
            }
            if (first < 0 || -1 - c < first)
                first = (int)(-1 - c);
            n++;
            bytes += in->bytes;
            if (in->L > D)
                D = in->L;
        }
        if (!ok || first < 0 || w->in[first].nmem < 2 || took[first])
            continue;
        (void)D;
        took[first] = 1;
        if (wf_kpt_push(&kp, w->in[first].model, n, (double)bytes, (double)(x->lag - x->res)) != 0) {
            free(took);
            free(kp.a);
            return -1;
        }
    }
    free(took);
    wf_kpt *pts = kp.a;
    size_t np = kp.n;
    if (np)
        qsort(pts, np, sizeof *pts, wf_kpt_cmp);
    cs_fitpt *fp = malloc((np ? np : 1) * sizeof *fp);
    if (!fp) {
        free(pts);
        return -1;
    }
    for (int m = 0; m < w->nmodels; m++) {
        size_t k = 0;
        for (size_t i = 0; i < np; i++)
            if (pts[i].key == m)
                fp[k++] = pts[i].p;
        if (cs__an_model_fit(fp, k, use_mean, &w->models[m], &w->mfit[m]) != 0) {
            free(fp);
            free(pts);
            return -1;
        }
    }
    free(fp);
    free(pts);
    /* a model with no point models nothing */
    for (int k = 0; k < w->ninst; k++)
        if (w->in[k].model >= 0 && w->models[w->in[k].model].points == 0)
            w->in[k].model = -1;
    return 0;
}

/* ---- fusion ---- */

typedef struct wf_classes {
    wf_class *a;
    int n;
    size_t cap;
} wf_classes;

static int wf_run_push(wf_class *c, int first, int len)
{
    if (CS_VEC_RESERVE(c->runs, c->cap, (size_t)c->nruns * 2 + 2) != 0)
        return -1;
    c->runs[c->nruns * 2] = first;
    c->runs[c->nruns * 2 + 1] = len;
    c->nruns++;
    return 0;
}

static int wf_fusable(const wf *w, const wf_span *x)
{
    return (x->cls == WF_COLL || x->cls == WF_NBCOLL) && x->inst >= 0 && wf_is_allreduce(w->a, x->op) &&
           !(x->flags & (CS_F_FUSED | CS_F_FUSE_MEMBER)) && w->in[x->inst].model >= 0;
}

static int wf_same_class(const wf_span *x, const wf_span *y)
{
    return x->comm == y->comm && x->op == y->op && x->dtype == y->dtype && x->callsite == y->callsite &&
           x->cls == y->cls;
}

/* Runs of fusable allreduces on the reference rank's first lane. */
static int wf_find_runs(wf *w, int lane, wf_classes *cl)
{
    for (int i = w->lane_lo[lane]; i < w->lane_hi[lane];) {
        if (!wf_fusable(w, &w->s[i])) {
            i++;
            continue;
        }
        int j = i + 1;
        while (j < w->lane_hi[lane] && wf_fusable(w, &w->s[j]) && wf_same_class(&w->s[i], &w->s[j]))
            j++;
        if (j - i >= 2) {
            const wf_span *x = &w->s[i];
            int c;
            for (c = 0; c < cl->n; c++)
                if (cl->a[c].comm == x->comm && cl->a[c].op == x->op && cl->a[c].dtype == x->dtype &&
                    cl->a[c].callsite == x->callsite && cl->a[c].nb == (x->cls == WF_NBCOLL))
                    break;
            if (c == cl->n) {
                if (CS_VEC_RESERVE(cl->a, cl->cap, (size_t)cl->n + 1) != 0)
                    return -1;
                wf_class *na = cl->a;
                memset(&na[c], 0, sizeof na[c]);
                na[c].comm = x->comm;
                na[c].op = x->op;
                na[c].dtype = x->dtype;
                na[c].callsite = x->callsite;
                na[c].nb = x->cls == WF_NBCOLL;
                na[c].minb = INT64_MAX;
                cl->n++;
            }
            wf_class *k = &cl->a[c];
            if (wf_run_push(k, i, j - i) != 0)
                return -1;
            int64_t rb = 0;
            for (int q = i; q < j; q++) {
                int64_t bb = w->s[q].bytes;
                k->calls++;
                k->bytes += bb;
                rb += bb;
                if (bb < k->minb)
                    k->minb = bb;
                if (bb > k->maxb)
                    k->maxb = bb;
            }
            if (rb > k->maxrun)
                k->maxrun = rb;
        }
        i = j;
    }
    return 0;
}

/* Build the fusion variant of class c with buckets of `bucket` bytes (calls
 * above `threshold` alone). Fills ifg, vin, flast; returns the number of
 * calls issued per step on the reference lane after fusion (groups plus
 * calls left alone), or -1 out of memory. */
static double wf_fuse_variant(wf *w, const wf_class *c, int64_t bucket, int64_t threshold, int *ifg, wf_inst **vin,
                              int *nvin, char *flast)
{
    for (int k = 0; k < w->ninst; k++)
        ifg[k] = -1;
    *nvin = 0;
    size_t cap = 0;
    int64_t issued = 0;
    for (size_t r = 0; r < c->nruns; r++) {
        int first = c->runs[r * 2], len = c->runs[r * 2 + 1];
        int gstart = first;
        int64_t gbytes = 0;
        for (int q = first; q <= first + len; q++) {
            int64_t bb = q < first + len ? w->s[q].bytes : 0;
            int close = q == first + len || bb > threshold || (gbytes + bb > bucket && q > gstart);
            if (close && q > gstart) {
                int n = q - gstart;
                issued++;
                if (n >= 2) {
                    if (CS_VEC_RESERVE(*vin, cap, (size_t)*nvin + 1) != 0)
                        return -1;
                    int g = w->ninst + *nvin;
                    wf_inst *gi = &(*vin)[(*nvin)++];
                    *gi = w->in[w->s[gstart].inst];
                    gi->bytes = gbytes;
                    gi->calls = 1;
                    gi->nmem = 0;
                    for (int t = gstart; t < q; t++)
                        ifg[w->s[t].inst] = g;
                }
                gstart = q;
                gbytes = 0;
            }
            if (q == first + len)
                break;
            if (bb > threshold) {
                issued++;
                gstart = q + 1;
                continue;
            }
            gbytes += bb;
        }
    }
    /* every lane: members of a group must be contiguous; mark the last */
    int *seen = calloc((size_t)(*nvin ? *nvin : 1), sizeof *seen);
    char *bad = calloc((size_t)(*nvin ? *nvin : 1), 1);
    if (!seen || !bad) {
        free(seen);
        free(bad);
        return -1;
    }
    for (int l = 0; l < w->nlanes; l++) {
        int prev = -1;
        for (int i = w->lane_lo[l]; i < w->lane_hi[l]; i++) {
            int g = w->s[i].inst >= 0 ? ifg[w->s[i].inst] : -1;
            flast[i] = 0;
            if (g >= 0 && g != prev) {
                if (seen[g - w->ninst] == l + 1)
                    bad[g - w->ninst] = 1;
                seen[g - w->ninst] = l + 1;
            }
            if (prev >= 0 && g != prev)
                flast[i - 1] = 1;
            prev = g;
        }
        if (prev >= 0)
            flast[w->lane_hi[l] - 1] = 1;
    }
    for (size_t i = 0; i < w->ns; i++) {
        int g = w->s[i].inst >= 0 ? ifg[w->s[i].inst] : -1;
        if (g >= 0 && flast[i])
            (*vin)[g - w->ninst].nmem++;
    }
    for (int k = 0; k < w->ninst; k++)
        if (ifg[k] >= 0 && bad[ifg[k] - w->ninst])
            ifg[k] = -1;
    for (size_t i = 0; i < w->ns; i++)
        if (w->s[i].inst >= 0 && ifg[w->s[i].inst] < 0)
            flast[i] = 0;
    free(seen);
    free(bad);
    return w->nsteps > 0 ? (double)issued / (double)w->nsteps : (double)issued;
}

static int64_t wf_pow2_ceil(int64_t x)
{
    int64_t p = 1;
    while (p < x && p < ((int64_t)1 << 50))
        p <<= 1;
    return p;
}

static void wf_bytes_text(char *b, size_t len, int64_t v)
{
    if (v >= (1 << 20) && v % (1 << 20) == 0)
        snprintf(b, len, "%lld MiB", (long long)(v >> 20));
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(b, len, "%lld KiB", (long long)(v >> 10));
    else
        cs_fmt_bytes(v, b, len);
}

/* ---- the pass ---- */

typedef struct wf_gpu {
    int64_t comm, exposed;
    int ranks;
} wf_gpu;

static int wf_gpu_cb(int rank, int64_t comm_ns, int64_t exposed_ns, void *arg)
{
    (void)rank;
    wf_gpu *g = arg;
    g->comm += comm_ns;
    g->exposed += exposed_ns;
    g->ranks++;
    return 0;
}

static int wf_strag_cb(const cs_straggler *g, void *arg)
{
    cs_vec *v = arg; /* triples rank, first, last */
    if (strcmp(g->kind, "persistent") != 0 && strcmp(g->kind, "transient") != 0)
        return 0;
    return cs_vec_push(v, g->rank) || cs_vec_push(v, g->first_step) || cs_vec_push(v, g->last_step);
}

static void wf_meta_i64(wf_io *a, const char *key, int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)v);
    cs_store_meta_set(a->ctx->st, key, b);
}

static void wf_meta_dbl(wf_io *a, const char *key, double v)
{
    char b[64];
    snprintf(b, sizeof b, "%.6g", v);
    cs_store_meta_set(a->ctx->st, key, b);
}

static const char *const wf_meta_keys[] = {
    "whatif_measured_ns",
    "whatif_replay_ns",
    "whatif_replay_error",
    "whatif_model_ns",
    "whatif_model_error",
    "whatif_ontime_ns",
    "whatif_ontime_gain_ns",
    "whatif_comm_step_ns",
    "whatif_fuse_members",
    "whatif_fused_calls",
    "whatif_allreduce_calls_per_step",
    "whatif_memcpy_gbps",
    "whatif_steps",
    "whatif_note",
    "whatif_declined",
    "whatif_step_period",
};

/* Per step: the mean over ranks of the time inside communication calls;
 * the median over steps 0..n-2. Also the allreduce calls per rank and step
 * issued to the library (fused calls count, their members do not). */
static int64_t wf_comm_figures(wf *w)
{
    wf_io *a = w->a;
    int64_t comm_step = -1;
    if (w->nsteps < 2)
        return -1;
    size_t nk = (size_t)w->nsteps * (size_t)(a->ctx->ndense + 1); /* cs__an_ctx_sr */
    int64_t *acc = calloc(nk, sizeof *acc);
    char *has = calloc(nk, 1);
    int64_t members = 0, fused = 0, ar = 0;
    if (!acc || !has) {
        free(acc);
        free(has);
        return -1;
    }
    for (size_t i = 0; i < w->ns; i++) {
        const wf_span *x = &w->s[i];
        members += (x->flags & CS_F_FUSE_MEMBER) != 0;
        fused += (x->flags & CS_F_FUSED) != 0;
        if (x->step < 0 || x->step + 1 >= w->nsteps)
            continue;
        if (cs__an_ctx_ix(a->ctx, x->rank) < 0)
            continue;
        size_t k = cs__an_ctx_sr(a->ctx, x->step, x->rank);
        has[k] = 1;
        /* a fused call lies inside the program's call that started it */
        if (wf_comm_kind(a, x->op) && !(x->flags & CS_F_FUSED))
            acc[k] += x->e - x->b;
        if (wf_is_allreduce(a, x->op) && !(x->flags & CS_F_FUSE_MEMBER))
            ar++;
    }
    int64_t *per = malloc((size_t)w->nsteps * sizeof *per);
    size_t m = 0;
    int nr = a->ctx->ndense;
    for (int s = 0; per && s + 1 < w->nsteps; s++) {
        int64_t sum = 0;
        int n = 0;
        for (int d = 0; d < a->ctx->ndense; d++) {
            size_t k = cs__an_ctx_sr(a->ctx, s, a->ctx->rank_of[d]);
            if (has[k]) {
                sum += acc[k];
                n++;
            }
        }
        if (n)
            per[m++] = sum / n;
    }
    /* the steps pass's figure (the union of each rank's communication
     * calls in its own steps) where it has one */
    if (a->steps->step_comm_ns >= 0)
        comm_step = a->steps->step_comm_ns;
    else if (per)
        comm_step = cs_stats_median_i64(per, m);
    if (comm_step >= 0)
        wf_meta_i64(a, "whatif_comm_step_ns", comm_step);
    wf_meta_i64(a, "whatif_fuse_members", members);
    wf_meta_i64(a, "whatif_fused_calls", fused);
    wf_meta_dbl(a, "whatif_allreduce_calls_per_step", nr ? (double)ar / (double)nr / (double)(w->nsteps - 1) : 0);
    free(per);
    free(acc);
    free(has);
    return comm_step;
}

/* (a) the stragglers on time: the gaps of each straggler's rank in its
 * steps, each at most the median of the other ranks' gaps at the same
 * place (step, index in the step) of their first lane. */
static int64_t *wf_ontime_gaps(wf *w, const cs_vec *sv)
{
    wf_io *a = w->a;
    int64_t *gap = malloc(w->ns * sizeof *gap);
    int *first = malloc((size_t)w->nlanes * (size_t)w->nsteps * sizeof *first);
    int *lane0 = malloc((size_t)(a->ctx->ndense > 0 ? a->ctx->ndense : 1) * sizeof *lane0); /* by rank index */
    if (!gap || !first || !lane0) {
        free(gap);
        free(first);
        free(lane0);
        return NULL;
    }
    for (size_t i = 0; i < w->ns; i++)
        gap[i] = i == 0 || w->s[i].lane != w->s[i - 1].lane ? 0 : w->s[i].b - w->s[i - 1].e;
    for (int d = 0; d < a->ctx->ndense; d++)
        lane0[d] = -1;
    for (int l = w->nlanes - 1; l >= 0; l--)
        if (cs__an_ctx_ix(a->ctx, w->lane_rank[l]) >= 0)
            lane0[cs__an_ctx_ix(a->ctx, w->lane_rank[l])] = l;
    for (size_t k = 0; k < (size_t)w->nlanes * (size_t)w->nsteps; k++)
        first[k] = -1;
    for (size_t i = 0; i < w->ns; i++) {
        const wf_span *x = &w->s[i];
        if (x->step >= 0 && first[(size_t)x->lane * (size_t)w->nsteps + (size_t)x->step] < 0)
            first[(size_t)x->lane * (size_t)w->nsteps + (size_t)x->step] = (int)i;
    }
    cs_vec others = { 0 };
    for (size_t t = 0; t + 2 < sv->n; t += 3) {
        int r = (int)sv->a[t];
        int d = cs__an_ctx_ix(a->ctx, r);
        if (d < 0 || lane0[d] < 0)
            continue;
        int l = lane0[d];
        for (int i = w->lane_lo[l] + 1; i < w->lane_hi[l]; i++) {
            const wf_span *x = &w->s[i];
            if (x->step < sv->a[t + 1] || x->step > sv->a[t + 2] || x->step < 0)
                continue;
            int j = i - first[(size_t)l * (size_t)w->nsteps + (size_t)x->step];
            others.n = 0;
            for (int d2 = 0; d2 < a->ctx->ndense; d2++) {
                int l2 = lane0[d2];
                if (d2 == d || l2 < 0)
                    continue;
                int f2 = first[(size_t)l2 * (size_t)w->nsteps + (size_t)x->step];
                int i2 = f2 + j;
                if (f2 < 0 || i2 <= w->lane_lo[l2] || i2 >= w->lane_hi[l2] || w->s[i2].step != x->step ||
                    w->s[i2].op != x->op)
                    continue;
                cs_vec_push(&others, gap[i2]);
            }
            if (others.n) {
                int64_t m = cs__an_ctx_median(&others);
                if (gap[i] > m)
                    gap[i] = m;
            }
        }
    }
    cs_vec_free(&others);
    free(first);
    free(lane0);
    return gap;
}

int cs__an_whatif(cs_an_ctx *ctx, const cs_an_steps *steps, const cs_an_msgs *msgs, cs_an_replay_hook after_replay,
                  char *err, size_t errlen)
{
    wf_io io = { ctx, steps, msgs }, *a = &io;
    wf w;
    memset(&w, 0, sizeof w);
    w.a = a;
    for (size_t i = 0; i < sizeof wf_meta_keys / sizeof wf_meta_keys[0]; i++)
        cs_store_meta_set(a->ctx->st, wf_meta_keys[i], "");
    int rc = wf_load(&w, err, errlen);
    if (rc != 0) {
        wf_free(&w);
        return rc < 0 ? -1 : 0;
    }
    rc = -1;
    int64_t *buf = NULL, *gap = NULL, *mstep = NULL, *vstep = NULL, *dscr = NULL;
    double *alpha_med = NULL;
    int *ifg = NULL;
    wf_inst *vin = NULL;
    char *flast = NULL;
    wf_classes cl = { 0 };
    cs_vec sv = { 0 };
    if (wf_fit_models(&w, 0) != 0 || wf_steps(&w) != 0)
        goto oom;
    w.fc = wf_fcost_for(a->ctx->st);
    /* each model's alpha fitted to the cells' medians: the typical call,
     * whichever fit the replay keeps */
    alpha_med = malloc(((size_t)w.nmodels + 1) * sizeof *alpha_med);
    if (!alpha_med)
        goto oom;
    for (int m = 0; m < w.nmodels; m++)
        alpha_med[m] = w.models[m].alpha_ns;
    int64_t comm_step = wf_comm_figures(&w);
    if (w.nsteps < 3) {
        cs_store_meta_set(a->ctx->st, "whatif_note", "fewer than 3 steps: no replay");
        rc = 0;
        goto out_models;
    }
    size_t nall = (size_t)w.ninst + w.ns + 1;
    w.cnt = malloc(nall * sizeof *w.cnt);
    w.stamp = malloc(nall * sizeof *w.stamp);
    w.lmax = malloc(nall * sizeof *w.lmax);
    buf = malloc(((size_t)w.nsteps + 1) * sizeof *buf);
    if (!w.cnt || !w.stamp || !w.lmax || !buf)
        goto oom;
    for (size_t i = 0; i < w.ns; i++)
        w.bp[i] = w.s[i].b;
    int64_t measured = cs__wf_step_median(&w, w.bp, buf);
    wf_meta_i64(a, "whatif_measured_ns", measured);
    wf_meta_i64(a, "whatif_steps", w.nsteps);
    if (a->steps->step_source == 2)
        wf_meta_i64(a, "whatif_step_period", a->steps->step_period);
    wf_meta_dbl(a, "whatif_memcpy_gbps", cs__an_whatif_memcpy_gbps());
    wf_var v0 = { 0 };
    if (cs__wf_replay(&w, &v0) != 0) {
        /* the slowdown still runs where it needs no CPU replay: on the
         * GPU graph of a trace with GPU kernels (an_slowdown.c says why
         * there is none otherwise) */
        w.deadlocked = 1;
        if (after_replay && after_replay(&w, buf) != 0)
            goto oom;
        char gr[8] = "";
        cs_store_meta_get(a->ctx->st, "slowdown_graph", gr, sizeof gr);
        int on_gpu = strcmp(gr, "gpu") == 0;
        cs_store_meta_set(a->ctx->st, "whatif_note",
                          on_gpu ? "the replay deadlocked: the trace's dependencies are inconsistent "
                                   "(the slowdown is on the GPU graph)"
                                 : "the replay deadlocked: the trace's dependencies are inconsistent");
        cs__an_ctx_note(a->ctx, "what-if replay deadlocked (inconsistent dependencies): no estimates%s",
                        on_gpu ? "; the slowdown attribution on the GPU graph, which does not replay the CPU" : "");
        rc = 0;
        goto out_models;
    }
    int64_t replayed = cs__wf_step_median(&w, w.bp, buf);
    wf_meta_i64(a, "whatif_replay_ns", replayed);
    if (after_replay && after_replay(&w, buf) != 0)
        goto oom;
    wf_meta_dbl(a, "whatif_replay_error", measured > 0 ? fabs((double)(replayed - measured)) / (double)measured : 0);
    /* the models fitted to cell medians, then to cell means: keep the
     * ones whose replay reproduces the measured step time better */
    wf_var vm = { .model = 1 };
    int64_t modelled = -1;
    for (int use_mean = 0; use_mean < 2; use_mean++) {
        if (use_mean && wf_fit_models(&w, 1) != 0)
            goto oom;
        int64_t t = cs__wf_replay(&w, &vm) == 0 ? cs__wf_step_median(&w, w.bp, buf) : -1;
        if (use_mean && (t < 0 || (modelled >= 0 && llabs(modelled - measured) <= llabs(t - measured)))) {
            if (wf_fit_models(&w, 0) != 0) /* back to the medians */
                goto oom;
        } else if (t >= 0) {
            modelled = t;
        }
    }
    if (modelled < 0)
        goto out_ok;
    /* the modelled replay's own steps, to which every variant is paired */
    mstep = malloc((size_t)w.nsteps * sizeof *mstep);
    vstep = malloc((size_t)w.nsteps * sizeof *vstep);
    dscr = malloc((size_t)w.nsteps * sizeof *dscr);
    if (!mstep || !vstep || !dscr)
        goto oom;
    if (cs__wf_replay(&w, &vm) != 0)
        goto out_ok;
    wf_step_times(&w, w.bp, buf, mstep);
    wf_meta_i64(a, "whatif_model_ns", modelled);
    wf_meta_dbl(a, "whatif_model_error", measured > 0 ? fabs((double)(modelled - measured)) / (double)measured : 0);

    /* (a) stragglers on time */
    if (cs_store_stragglers(a->ctx->st, wf_strag_cb, &sv) != 0)
        goto oom;
    if (sv.n) {
        gap = wf_ontime_gaps(&w, &sv);
        if (!gap)
            goto oom;
        wf_var vo = { .gap = gap, .model = 1 };
        if (cs__wf_replay(&w, &vo) == 0) {
            int64_t ontime = cs__wf_step_median(&w, w.bp, buf);
            wf_meta_i64(a, "whatif_ontime_ns", ontime);
            wf_meta_i64(a, "whatif_ontime_gain_ns", modelled - ontime);
        }
    }

    /* (b) fusion */
    int ref_lane = -1, best_n = -1;
    for (int l = 0; l < w.nlanes; l++) {
        if (w.lane_rank[l] != a->ctx->ref_rank)
            continue;
        int n = 0;
        for (int i = w.lane_lo[l]; i < w.lane_hi[l]; i++)
            n += w.s[i].inst >= 0;
        if (n > best_n)
            best_n = n, ref_lane = l;
    }
    if (ref_lane >= 0 && wf_find_runs(&w, ref_lane, &cl) != 0)
        goto oom;
    ifg = malloc(((size_t)w.ninst + 1) * sizeof *ifg);
    flast = malloc(w.ns);
    if (!ifg || !flast)
        goto oom;
    char declined[2048] = "";
    for (int c = 0; c < cl.n && c < 8; c++) {
        wf_class *k = &cl.a[c];
        const wf_span *s0 = &w.s[k->runs[0]];
        int mi = w.in[s0->inst].model;
        const cs_model_row *mo = &w.models[mi];
        const cs_model_fit *mf = &w.mfit[mi];
        const char *opn = a->ctx->ops[k->op].name;
        char site[160], at[176], why[640] = "", basis[256], b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32],
                                 b8[32];
        /* the call site's label; none (not recorded, or not resolved) is ""
         * and the sentences leave it out: an internal id means nothing to
         * the reader (issue 36) */
        if (cs_store_callsite_label(a->ctx->st, s0->rank, s0->callsite, site, sizeof site) != 0)
            site[0] = '\0';
        snprintf(at, sizeof at, "%s%s", site[0] ? " at " : "", site);
        double calls_per_step = (double)k->calls / (double)w.nsteps;
        /* the steps must hold the runs (nearly) whole: a run split by step
         * boundaries into pieces of less than 90 % of its calls means the
         * steps found are not the program's (a boundary at another call of
         * the same pattern cuts a few calls off, which is fine) */
        size_t cut = 0;
        for (size_t r = 0; r < k->nruns; r++) {
            int f = k->runs[r * 2], len = k->runs[r * 2 + 1], piece = 0, most = 0;
            for (int q = f; q < f + len; q++) {
                piece = q > f && w.s[q].step == w.s[q - 1].step ? piece + 1 : 1;
                if (piece > most)
                    most = piece;
            }
            cut += most * 10 < len * 9;
        }
        double model_err = measured > 0 ? fabs((double)(modelled - measured)) / (double)measured : 0;
        /* fusion shortens communication calls only: no gain beyond their time */
        int64_t cap = comm_step >= 0 ? comm_step + (modelled > measured ? modelled - measured : 0) : -1;
        if (cut * 10 > k->nruns)
            snprintf(why, sizeof why,
                     "the steps found (%s) split %zu of %zu runs of back-to-back calls: the steps are not certain",
                     a->steps->step_source == 1 ? "markers" : "detected period", cut, k->nruns);
        else if (model_err > CS_WF_MAX_MODEL_ERROR)
            snprintf(
                why, sizeof why,
                "the replay with the cost models misses the measured median step by %.1f %% of it (> %.0f %%): the "
                "models do not reproduce the steps",
                100 * model_err, 100 * CS_WF_MAX_MODEL_ERROR);
        else if (mo->rel_resid > CS_MODEL_MAX_RESID)
            snprintf(why, sizeof why,
                     "its cost model explains the data poorly (%s; relative residual of the cells %.1f %% > %.0f %%)",
                     mo->note, 100 * mo->rel_resid, 100 * CS_MODEL_MAX_RESID);
        else if (!k->nb && !mf->separated && (double)wf_copy_ns(k->maxb) > CS_WF_ALPHA_ONLY_COPY * alpha_med[mi])
            snprintf(why, sizeof why,
                     "its cost model is alpha only (%s) and the calls are too large to take their bytes as free: "
                     "copying %s once at %.0f GB/s takes %.0f %% of the %.2f us a call (median)",
                     mo->note, cs_fmt_bytes(k->maxb, b1, sizeof b1), cs__an_whatif_memcpy_gbps(),
                     100 * (double)wf_copy_ns(k->maxb) / (alpha_med[mi] > 0 ? alpha_med[mi] : 1), alpha_med[mi] / 1e3);
        else if (k->nb && !mf->separated && !(mf->nmin == mf->nmax && mf->nmin > 1))
            snprintf(why, sizeof why,
                     "its cost model cannot tell how much each call completed together costs (%s, %lld points)",
                     mo->note, (long long)mo->points);
        if (mf->separated)
            snprintf(basis, sizeof basis, "fitted: R2 %.3f, relative residual %.1f %%, %lld points", mo->r2,
                     100 * mo->rel_resid, (long long)mo->points);
        else if (mf->nmin == mf->nmax && mf->nmin > 1)
            snprintf(basis, sizeof basis,
                     "%s; the %d calls of every completion are taken as overlapping, so the gain is the calls' "
                     "own start overhead only (relative residual %.1f %%, %lld points)",
                     mo->fitted ? "beta fitted, per-call cost not separable" : "alpha only", mf->nmin,
                     100 * mo->rel_resid, (long long)mo->points);
        else
            snprintf(basis, sizeof basis,
                     "alpha only (beta unknown: one size): each call saved counts one alpha, an upper bound where "
                     "bytes cost time (relative residual %.1f %%, %lld points)",
                     100 * mo->rel_resid, (long long)mo->points);
        int64_t th = wf_pow2_ceil(k->maxb);
        if (th < CS_WF_FUSE_THRESHOLD)
            th = CS_WF_FUSE_THRESHOLD;
        int64_t lo = wf_pow2_ceil(k->maxb), hi = wf_pow2_ceil(k->maxrun);
        if (lo < 1024)
            lo = 1024;
        if (hi < lo)
            hi = lo;
        char curve[1024] = "";
        int64_t best = INT64_MIN, bestS = 0;
        int64_t gains[64], gains2[64], sizes[64], glo[64], ghi[64], ghalf[64];
        double groups[64];
        int nsz = 0;
        for (int64_t S = lo; S <= hi && nsz < 64 && !why[0]; S *= 2) {
            int nvin = 0;
            double g = wf_fuse_variant(&w, k, S, th, ifg, &vin, &nvin, flast);
            if (g < 0)
                goto oom;
            wf_var vf = { .model = 1, .ifg = ifg, .vin = vin, .nvin = nvin, .flast = flast };
            if (nall < (size_t)w.ninst + (size_t)nvin)
                continue;
            if (cs__wf_replay(&w, &vf) != 0)
                continue;
            wf_step_times(&w, w.bp, buf, vstep);
            wf_gain pg = wf_paired_gain(mstep, vstep, w.nsteps - 1, dscr);
            gains[nsz] = pg.med;
            glo[nsz] = pg.lo;
            ghi[nsz] = pg.hi;
            ghalf[nsz] = pg.half[0] < pg.half[1] ? pg.half[0] : pg.half[1];
            sizes[nsz] = S;
            groups[nsz] = g;
            /* the same buckets made by the program itself: no member calls */
            vf.drop_members = 1;
            if (cs__wf_replay(&w, &vf) == 0) {
                wf_step_times(&w, w.bp, buf, vstep);
                gains2[nsz] = wf_paired_gain(mstep, vstep, w.nsteps - 1, dscr).med;
            } else {
                gains2[nsz] = pg.med;
            }
            if (gains[nsz] > best)
                best = gains[nsz], bestS = S;
            nsz++;
        }
        if (!why[0] && nsz == 0)
            snprintf(why, sizeof why, "no fused variant could be replayed");
        else if (!why[0] && cap >= 0 && (double)best > (1 + CS_MODEL_MAX_RESID) * (double)cap)
            snprintf(
                why, sizeof why,
                "the replay's best gain, %s per step, exceeds the time in communication calls per step (%s, "
                "plus the modelled replay's excess over the measured step) by more than %.0f %% of it: the models do "
                "not describe this run",
                cs_fmt_dns(best, 0, b1, sizeof b1), cs_fmt_ns(comm_step, b2, sizeof b2), 100 * CS_MODEL_MAX_RESID);
        else if (!why[0] && (double)best < CS_WF_MIN_GAIN / CS_WF_MARGIN * (double)measured)
            snprintf(why, sizeof why,
                     "the best estimated gain, %s per step (%.1f %% of the step, buckets of %s; %s), "
                     "is below %.0f %% of the step (%.1f %% of the step with the margin for reruns)",
                     cs_fmt_dns(best, 0, b1, sizeof b1), measured > 0 ? 100.0 * (double)best / (double)measured : 0.0,
                     cs_fmt_bytes(bestS, b2, sizeof b2), basis, 100 * CS_WF_MIN_GAIN,
                     100 * CS_WF_MIN_GAIN / CS_WF_MARGIN);
        int capped = cap >= 0 && best > cap;
        int pick = 0;
        if (!why[0]) {
            for (int q = 0; q < nsz; q++) {
                if (capped && gains[q] > cap)
                    gains[q] = cap;
                if (cap >= 0 && gains2[q] > cap)
                    gains2[q] = cap;
                if (cap >= 0 && glo[q] > cap)
                    glo[q] = cap;
                if (cap >= 0 && ghi[q] > cap)
                    ghi[q] = cap;
                if (cap >= 0 && ghalf[q] > cap)
                    ghalf[q] = cap;
            }
            if (capped)
                best = cap;
            /* the smallest bucket within 10 % of the best gain that still
             * gains the CS_WF_MIN_GAIN the proposal was let through on */
            while (pick < nsz && (gains[pick] * 10 < best * 9 ||
                                  (double)gains[pick] < CS_WF_MIN_GAIN * CS_WF_MARGIN * (double)measured))
                pick++;
            if (pick >= nsz) /* none (the best one was capped): the best */
                for (pick = 0; pick + 1 < nsz && gains[pick] < best;)
                    pick++;
            /* a gain near the threshold, whose interval over the steps
             * reaches below it, or that one half of the run does not show,
             * would come and go between reruns of the same program:
             * declined as too thin */
            if ((double)gains[pick] < CS_WF_MIN_GAIN * CS_WF_MARGIN * (double)measured ||
                (double)glo[pick] < CS_WF_MIN_GAIN * (double)measured ||
                (double)ghalf[pick] < CS_WF_MIN_GAIN * (double)measured)
                snprintf(why, sizeof why,
                         "the evidence is too thin: the estimated gain with buckets of %s, %s per step (%.1f %% of "
                         "the step; 95 %% interval over the steps %s to %s, %s in its weaker half; %s), is within "
                         "the margin around %.0f %% of the step (%.1f to %.1f %% of the step, each half and the "
                         "interval above %.0f %% of it) that reruns of the same program fall on either side of",
                         cs_fmt_bytes(sizes[pick], b2, sizeof b2), cs_fmt_dns(gains[pick], 0, b1, sizeof b1),
                         measured > 0 ? 100.0 * (double)gains[pick] / (double)measured : 0.0,
                         cs_fmt_dns(glo[pick], 0, b3, sizeof b3), cs_fmt_dns(ghi[pick], 0, b4, sizeof b4),
                         cs_fmt_dns(ghalf[pick], 0, b5, sizeof b5), basis, 100 * CS_WF_MIN_GAIN,
                         100 * CS_WF_MIN_GAIN / CS_WF_MARGIN, 100 * CS_WF_MIN_GAIN * CS_WF_MARGIN,
                         100 * CS_WF_MIN_GAIN);
        }
        if (why[0]) {
            size_t l = strlen(declined);
            char dname[CS_COMMS_DISPLAY_MAX];
            cs__an_ctx_commname(a->ctx, k->comm, dname, sizeof dname);
            snprintf(declined + l, sizeof declined - l, "%sno fusion of the %.0f %s%s per step%s on %s: %s",
                     l ? "\n" : "", calls_per_step, opn, calls_per_step >= 2 ? "s" : "", at, dname, why);
            continue;
        }
        for (int q = 0; q < nsz; q++) {
            size_t cl_ = strlen(curve);
            snprintf(curve + cl_, sizeof curve - cl_, "%s%lld:%.2f:%lld:%lld", cl_ ? "," : "", (long long)sizes[q],
                     groups[q], (long long)gains[q], (long long)gains2[q]);
        }
        cs_proposal p;
        memset(&p, 0, sizeof p);
        snprintf(p.kind, sizeof p.kind, "fusion");
        p.comm = k->comm;
        p.op = k->op;
        snprintf(p.callsite, sizeof p.callsite, "%s", site);
        p.calls_per_step = calls_per_step;
        p.min_bytes = k->minb;
        p.max_bytes = k->maxb;
        p.bytes_per_step = k->bytes / w.nsteps;
        p.bucket_bytes = sizes[pick];
        p.groups_per_step = groups[pick];
        p.gain_ns = gains[pick];
        p.step_ns = measured;
        snprintf(p.curve, sizeof p.curve, "%s", curve);
        wf_bytes_text(b1, sizeof b1, k->minb);
        wf_bytes_text(b2, sizeof b2, k->maxb);
        wf_bytes_text(b3, sizeof b3, p.bucket_bytes);
        cs_fmt_ns(p.gain_ns, b4, sizeof b4);
        cs_fmt_ns(best, b5, sizeof b5);
        wf_bytes_text(b6, sizeof b6, bestS);
        char beta_txt[48] = "unknown";
        if (mo->fitted)
            snprintf(beta_txt, sizeof beta_txt, "%.3f ns/KiB", mo->beta_ns_per_byte * 1024);
        char cname[CS_COMMS_DISPLAY_MAX];
        cs__an_ctx_commname(a->ctx, k->comm, cname, sizeof cname);
        snprintf(
            p.evidence, sizeof p.evidence,
            "%s issues %.0f %s%s of %s-%s per step on %s; buckets of %s save an estimated %s per "
            "step (%.1f %% of the step; 95 %% interval over the steps %s to %s), %.1f calls per step instead of %.0f (the "
            "smallest bucket within 10 %% of the best "
            "gain, %s with %s%s); model: alpha %.2f us, gamma %.2f us, beta %s; %s; pack+unpack at %.0f GB/s",
            p.callsite[0] ? p.callsite : "the job", p.calls_per_step, opn, p.calls_per_step >= 2 ? "s" : "", b1, b2,
            cname, b3, b4, measured > 0 ? 100.0 * (double)p.gain_ns / (double)measured : 0.0,
            cs_fmt_ns(glo[pick], b7, sizeof b7), cs_fmt_ns(ghi[pick], b8, sizeof b8), p.groups_per_step,
            p.calls_per_step, b5, b6, capped ? "; capped at the time in communication calls" : "", mo->alpha_ns / 1e3,
            mo->gamma_ns / 1e3, beta_txt, basis, cs__an_whatif_memcpy_gbps());
        int is_mpi_nb = k->nb && strncmp(opn, "MPI_", 4) == 0, is_nccl = strncmp(opn, "nccl", 4) == 0;
        if (is_mpi_nb || is_nccl) {
            snprintf(p.env, sizeof p.env, "COLLSCOPE_FUSE=1 COLLSCOPE_FUSE_THRESHOLD=%lld COLLSCOPE_FUSE_BUFFER=%lld",
                     (long long)th, (long long)p.bucket_bytes);
            if (is_nccl) {
                size_t l = strlen(p.evidence);
                snprintf(p.evidence + l, sizeof p.evidence - l,
                         "; apply mode fuses NCCL calls issued inside one ncclGroupStart/ncclGroupEnd");
            }
        } else {
            size_t l = strlen(p.evidence);
            snprintf(p.evidence + l, sizeof p.evidence - l,
                     "; blocking calls: apply mode fuses nonblocking MPI_Iallreduce only, so bucket them in the "
                     "program (or issue MPI_Iallreduce and one MPI_Waitall)");
        }
        if (cs_awriter_proposal(a->ctx->w, &p) != 0)
            goto werr;
    }

    cs_store_meta_set(a->ctx->st, "whatif_declined", declined);

    /* (c) overlap: exposed GPU communication */
    {
        wf_gpu g = { 0 };
        if (cs_store_gpu_overlap(a->ctx->st, wf_gpu_cb, &g) > 0 && g.ranks > 0 && g.exposed > 0) {
            int64_t exposed = g.exposed / g.ranks / w.nsteps;
            /* compute available per step: the replay's gaps on the reference lane */
            int64_t comp = 0;
            if (ref_lane >= 0)
                for (int i = w.lane_lo[ref_lane] + 1; i < w.lane_hi[ref_lane]; i++)
                    comp += w.s[i].b - w.s[i - 1].e > 0 ? w.s[i].b - w.s[i - 1].e : 0;
            comp /= w.nsteps;
            int64_t gain = exposed < comp ? exposed : comp;
            if (gain > 0 && gain * 200 >= measured) {
                cs_proposal p;
                memset(&p, 0, sizeof p);
                snprintf(p.kind, sizeof p.kind, "overlap");
                p.gain_ns = gain;
                p.step_ns = measured;
                char b1[32], b2[32], b3[32];
                snprintf(p.evidence, sizeof p.evidence,
                         "NCCL work not overlapped by compute on the GPU: %s per step and rank (of %s of GPU "
                         "communication); started earlier, next to independent compute (%s of host compute per "
                         "step), it would hide an estimated %s per step (%.1f %% of the step)",
                         cs_fmt_ns(exposed, b1, sizeof b1), cs_fmt_ns(g.comm / g.ranks / w.nsteps, b2, sizeof b2),
                         cs_fmt_ns(comp, b3, sizeof b3), cs_fmt_ns(gain, b1, sizeof b1),
                         measured > 0 ? 100.0 * (double)gain / (double)measured : 0.0);
                if (cs_awriter_proposal(a->ctx->w, &p) != 0)
                    goto werr;
            }
        }
    }
out_ok:
    rc = 0;
out_models:
    for (int m = 0; m < w.nmodels; m++)
        if (w.models[m].points > 0 && cs_awriter_model(a->ctx->w, &w.models[m]) != 0)
            goto werr;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
    goto out;
werr:
    snprintf(err, errlen, "%s: cannot write the analysis", cs_store_path(a->ctx->st));
out:
    for (int c = 0; c < cl.n; c++)
        free(cl.a[c].runs);
    free(cl.a);
    cs_vec_free(&sv);
    free(buf);
    free(gap);
    free(mstep);
    free(vstep);
    free(dscr);
    free(alpha_med);
    free(ifg);
    free(vin);
    free(flast);
    wf_free(&w);
    return rc;
}
