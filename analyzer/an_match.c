/* an_match.c: steps, and the matching of collective instances with their
 * wait states.
 *
 * Steps come from MPI_Pcontrol markers (each marker starts a step on its
 * rank); without markers, from the period of the reference rank's sequence
 * of collectives. Instances come from one pass over the collective spans
 * ordered by (comm, seq): when the group of an instance ends, it is
 * complete, and its row, its members' waits, the lateness of its last rank
 * and the step it belongs to are known. */
#include "config.h"
#include "analyzer/analysis.h"
#include "libtrace/span.h"

#include <stdlib.h>
#include <string.h>

/* What this pass reads and writes (analysis.h). */
typedef struct cs_match_io {
    cs_an_ctx *ctx;
    const cs_an_clocks *clocks;
    cs_an_steps *steps;
    cs_an_coll *coll;
} cs_match_io;

/* ---- steps ---- */

static int cs_i64_order(const void *x, const void *y)
{
    int64_t p = *(const int64_t *)x, q = *(const int64_t *)y;
    return (p > q) - (p < q);
}

/* The smallest period p of sig[] (>= 90 % of sig[i] == sig[i+p]). */
static int cs_find_period(const uint64_t *sig, size_t n)
{
    size_t pmax = n / 3 < 4096 ? n / 3 : 4096;
    for (size_t p = 1; p <= pmax; p++) {
        size_t lim = n - p < 20000 ? n - p : 20000, same = 0;
        for (size_t i = 0; i < lim; i++)
            same += sig[i] == sig[i + p];
        if (lim && same * 10 >= lim * 9)
            return (int)p;
    }
    return 0;
}

int cs__an_match_steps(cs_an_ctx *ctx, const cs_an_clocks *clocks, cs_an_steps *out, char *err, size_t errlen)
{
    cs_match_io io = { ctx, clocks, out, NULL }, *a = &io;
    /* The markers came raw with the point-to-point scan: align, order. */
    for (int r = 0; r < a->ctx->ndense; r++) {
        cs_vec *v = &a->steps->marks[r];
        for (size_t i = 0; i < v->n; i++)
            v->a[i] = cs__an_align_time(a->clocks, a->ctx->rank_of[r], v->a[i]);
        if (v->n)
            qsort(v->a, v->n, sizeof *v->a, cs_i64_order);
    }
    int64_t nmax = 0;
    for (int r = 0; r < a->ctx->ndense; r++)
        if ((int64_t)a->steps->marks[r].n > nmax)
            nmax = (int64_t)a->steps->marks[r].n;
    if (nmax > 0) {
        a->steps->step_source = 1;
    } else if (a->ctx->ndense > 0) {
        /* No markers: the period of the reference rank's collectives. */
        cs_span_query q = { .order = CS_ORDER_RANK_TIME, .rank = a->ctx->ref_rank };
        cs_span_iter *it = cs_store_spans(a->ctx->st, &q, err, errlen);
        if (!it)
            return -1;
        uint64_t *sig = NULL;
        int64_t *beg = NULL;
        size_t n = 0, capSig = 0, capBeg = 0;
        cs_span s;
        int r;
        while ((r = cs_span_next(it, &s)) > 0) {
            if (s.seq < 0 || s.comm == 0)
                continue;
            if (CS_VEC_RESERVE(sig, capSig, n + 1) != 0 || CS_VEC_RESERVE(beg, capBeg, n + 1) != 0) {
                free(sig);
                free(beg);
                cs_span_iter_free(it);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            sig[n] = (uint64_t)s.op * 1000003u ^ (uint64_t)s.comm * 31u ^ (uint64_t)cs_bytes_bucket(s.bytes) << 48;
            beg[n++] = s.begin_ns;
        }
        cs_span_iter_free(it);
        int p = n >= 6 ? cs_find_period(sig, n) : 0;
        if (p > 0) {
            a->steps->step_source = 2;
            a->steps->step_period = p;
            for (size_t i = 0; i < n; i += (size_t)p)
                cs_vec_push(&a->steps->marks[cs__an_ctx_ix(a->ctx, a->ctx->ref_rank)], beg[i]);
            nmax = (int64_t)a->steps->marks[cs__an_ctx_ix(a->ctx, a->ctx->ref_rank)].n;
        }
        free(sig);
        free(beg);
        if (p == 0)
            cs__an_ctx_note(a->ctx, "no step markers (MPI_Pcontrol) and no periodic pattern: no per-step figures");
    }
    a->steps->nsteps = nmax;
    if (nmax > 0) {
        a->steps->late = calloc((size_t)nmax * (size_t)(a->ctx->ndense + 1), sizeof *a->steps->late);
        a->steps->late2 = calloc((size_t)nmax * (size_t)(a->ctx->ndense + 1), sizeof *a->steps->late2);
        a->steps->nblate = calloc((size_t)nmax * (size_t)(a->ctx->ndense + 1), sizeof *a->steps->nblate);
        a->steps->xgap = calloc((size_t)nmax * (size_t)(a->ctx->ndense + 1), sizeof *a->steps->xgap);
        a->steps->step_last_exit = calloc((size_t)nmax, sizeof *a->steps->step_last_exit);
        a->steps->step_begin = calloc((size_t)nmax, sizeof *a->steps->step_begin);
        a->steps->step_end = calloc((size_t)nmax, sizeof *a->steps->step_end);
        a->steps->step_time = calloc((size_t)nmax, sizeof *a->steps->step_time);
        if (!a->steps->late || !a->steps->late2 || !a->steps->nblate || !a->steps->xgap || !a->steps->step_last_exit ||
            !a->steps->step_begin || !a->steps->step_end || !a->steps->step_time) {
            snprintf(err, errlen, "out of memory (%lld steps x %d ranks)", (long long)nmax, a->ctx->ndense);
            return -1;
        }
    }
    return 0;
}

/* The step rank's time t falls in (-1: before the first). */
static int64_t cs_step_of(const cs_match_io *a, int rank, int64_t t)
{
    if (a->steps->nsteps == 0)
        return -1;
    int d = cs__an_ctx_ix(a->ctx, rank);
    const cs_vec *v = d >= 0 && a->steps->marks[d].n ? &a->steps->marks[d]
                                                     : &a->steps->marks[cs__an_ctx_ix(a->ctx, a->ctx->ref_rank)];
    if (!v->n) {
        for (int r = 0; r < a->ctx->ndense && !v->n; r++)
            v = &a->steps->marks[r];
        if (!v->n)
            return -1;
    }
    size_t lo = 0, hi = v->n;
    if (t < v->a[0])
        return -1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (v->a[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return (int64_t)lo;
}

/* ---- instances ---- */

typedef struct cs_mem {
    int64_t span;
    int rank;
    int op;
    int64_t b, e, bytes, callsite;
} cs_mem;

typedef struct cs_labels {
    cs_map idx;
    char **s;
    size_t n, cap;
} cs_labels;

static int cs_label_cb(int rank, int64_t id, const char *label, void *arg)
{
    cs_labels *l = arg;
    if (!label)
        return 0;
    if (CS_VEC_RESERVE(l->s, l->cap, l->n + 1) != 0)
        return -1;
    l->s[l->n] = strdup(label);
    if (!l->s[l->n])
        return -1;
    cs_map_put(&l->idx, cs__an_ctx_rank_key(rank, id), (int64_t)l->n);
    l->n++;
    return 0;
}

static int cs_comm_cb(const cs_comm_member *m, void *arg)
{
    cs_map *sizes = arg;
    return cs_map_put(sizes, (uint64_t)m->comm, m->size);
}

static int cs_done_cb(const cs_completion *c, void *arg)
{
    cs_map *done = arg;
    return cs_map_put(done, cs__an_ctx_rank_key(c->rank, c->req), c->end_ns);
}

typedef struct cs_matcher {
    cs_match_io *a;
    cs_map sizes, done;
    cs_map prev, prevb; /* (rank, comm) -> exit, entry of its previous instance */
    cs_labels labels;
    cs_mem *m;
    size_t nm, cap;
} cs_matcher;

static int cs_instance_done(cs_matcher *x, int64_t comm, int64_t seq)
{
    cs_match_io *a = x->a;
    if (x->nm == 0)
        return 0;
    cs_instance in;
    memset(&in, 0, sizeof in);
    in.comm = comm;
    in.seq = seq;
    in.op = x->m[0].op;
    in.nranks = (int)x->nm;
    int64_t size = 0;
    in.expected = cs_map_get(&x->sizes, (uint64_t)comm, &size) && size > 0 ? (int)size : (int)x->nm;
    if (in.expected < in.nranks)
        in.expected = in.nranks;
    in.bytes = x->m[0].bytes;
    int64_t first = INT64_MAX, last = INT64_MIN, second = INT64_MIN, lexit = INT64_MIN;
    int last_rank = -1;
    for (size_t i = 0; i < x->nm; i++) {
        cs_mem *m = &x->m[i];
        if (m->b < first)
            first = m->b;
        if (m->b > last) {
            second = last;
            last = m->b;
            last_rank = m->rank;
        } else if (m->b > second) {
            second = m->b;
        }
        if (m->e > lexit)
            lexit = m->e;
    }
    in.first_entry_ns = first;
    in.last_entry_ns = last;
    in.last_rank = x->nm > 1 ? last_rank : -1;
    in.last_exit_ns = lexit;
    in.skew_ns = last - first;
    in.transfer_ns = lexit > last ? lexit - last : 0;
    in.step = cs_step_of(a, x->m[0].rank, x->m[0].b);
    int64_t li;
    if (x->m[0].callsite && cs_map_get(&x->labels.idx, cs__an_ctx_rank_key(x->m[0].rank, x->m[0].callsite), &li))
        snprintf(in.callsite, sizeof in.callsite, "%s", x->labels.s[li]);
    a->coll->instances++;
    int complete = in.nranks >= in.expected;
    if (!complete)
        a->coll->incomplete++;
    if (cs_awriter_instance(a->ctx->w, &in) != 0)
        return -1;
    int64_t imposed = 0;
    for (size_t i = 0; i < x->nm; i++) {
        cs_mem *m = &x->m[i];
        cs_wait w = { m->span, m->rank, comm, seq, last - m->b };
        imposed += w.wait_ns;
        if (m->e < last && cs__an_ctx_is_n2n(a->ctx, m->op))
            a->coll->exit_before_entry++;
        if (cs_awriter_wait(a->ctx->w, &w) != 0)
            return -1;
    }
    if (in.step >= 0 && in.step < a->steps->nsteps && lexit > a->steps->step_last_exit[in.step])
        a->steps->step_last_exit[in.step] = lexit;
    if (complete && x->nm > 1 && in.step >= 0 && in.step < a->steps->nsteps && a->coll->cstep_xfer) {
        /* per communicator and step, for the slow-collective verdicts */
        int64_t ci = -1;
        if (!cs_map_get(&a->coll->comm_idx, (uint64_t)comm, &ci) && a->coll->ncomms < CS_AN_MAX_COMMS &&
            cs_map_put(&a->coll->comm_idx, (uint64_t)comm, a->coll->ncomms) == 0) {
            ci = a->coll->ncomms++;
            a->coll->comm_ids[ci] = comm;
            a->coll->cstep_op[ci] = in.op;
        }
        if (ci >= 0) {
            size_t k = (size_t)ci * (size_t)a->steps->nsteps + (size_t)in.step;
            a->coll->cstep_xfer[k] += in.transfer_ns;
            a->coll->cstep_skew[k] += in.skew_ns;
        }
    }
    /* Own time: each member's entry minus its exit from its previous
     * instance on this communicator (minus its entry into it when that one,
     * nonblocking, was still open). The rank with the longest one held the
     * others up by its excess over the next longest, whatever the order in
     * which the previous instance released them (on an oversubscribed node
     * those exits are spread by whole scheduler slices). */
    if (complete && x->nm > 1) {
        int64_t g1 = INT64_MIN, g2 = INT64_MIN;
        int gr = -1, known = 1;
        for (size_t i = 0; i < x->nm; i++) {
            cs_mem *m = &x->m[i];
            uint64_t key = ((uint64_t)comm * 0x9E3779B97F4A7C15ULL ^ (uint64_t)m->rank) & ~(1ULL << 63);
            int64_t pe, pb;
            if (known && cs_map_get(&x->prev, key, &pe) && cs_map_get(&x->prevb, key, &pb)) {
                /* a nonblocking instance still open: from its start */
                int64_t g = m->b - (pe <= m->b ? pe : pb);
                if (g > g1) {
                    g2 = g1;
                    g1 = g;
                    gr = m->rank;
                } else if (g > g2) {
                    g2 = g;
                }
            } else {
                known = 0;
            }
            if (cs_map_put(&x->prev, key, m->e) != 0 || cs_map_put(&x->prevb, key, m->b) != 0)
                return -1;
        }
        if (known && cs__an_ctx_ix(a->ctx, gr) >= 0 && g2 != INT64_MIN && g1 > g2 && in.step >= 0 &&
            in.step < a->steps->nsteps)
            a->steps->xgap[cs__an_ctx_sr(a->ctx, in.step, gr)] += g1 - g2;
    }
    int lix = cs__an_ctx_ix(a->ctx, last_rank);
    if (complete && x->nm > 1 && lix >= 0) {
        int64_t lateness = last - second;
        /* for the verdicts: lateness against the median entry of the
         * others, so one other noisy rank does not hide the straggler */
        int64_t *ob = malloc((x->nm - 1) * sizeof *ob);
        int64_t vl = lateness;
        if (ob) {
            size_t k = 0, skipped = 0;
            for (size_t i = 0; i < x->nm; i++) {
                if (!skipped && x->m[i].b == last && x->m[i].rank == last_rank) {
                    skipped = 1;
                    continue;
                }
                ob[k++] = x->m[i].b;
            }
            cs_vec tmp = { ob, k, k };
            vl = last - cs__an_ctx_median(&tmp);
            free(ob);
        }
        a->coll->times_last[lix]++;
        a->coll->imposed[lix] += imposed;
        cs_vec_push(&a->coll->lateness[lix], lateness);
        if (in.step >= 0 && in.step < a->steps->nsteps) {
            size_t k = cs__an_ctx_sr(a->ctx, in.step, last_rank);
            a->steps->late[k] += vl;
            /* Blocking collectives wait one after the other, so their
             * lateness adds up; nonblocking ones started in a burst wait
             * together at the completion: a rank late by L in all of them
             * delays the step by L, not by L per call. */
            if (in.op >= 0 && in.op < a->ctx->nops && a->ctx->ops[in.op].nonblocking) {
                if (lateness > a->steps->nblate[k]) {
                    a->steps->late2[k] += lateness - a->steps->nblate[k];
                    a->steps->nblate[k] = lateness;
                }
            } else {
                a->steps->late2[k] += lateness;
            }
        }
    }
    return 0;
}

int cs__an_match(cs_an_ctx *ctx, const cs_an_clocks *clocks, cs_an_steps *steps, cs_an_coll *out, char *err,
                 size_t errlen)
{
    cs_match_io io = { ctx, clocks, steps, out }, *a = &io;
    int64_t nmax = steps->nsteps;
    if (nmax > 0) {
        out->comm_ids = calloc(CS_AN_MAX_COMMS, sizeof *out->comm_ids);
        out->cstep_op = calloc(CS_AN_MAX_COMMS, sizeof *out->cstep_op);
        out->cstep_xfer = calloc((size_t)nmax * CS_AN_MAX_COMMS, sizeof *out->cstep_xfer);
        out->cstep_skew = calloc((size_t)nmax * CS_AN_MAX_COMMS, sizeof *out->cstep_skew);
        if (!out->comm_ids || !out->cstep_op || !out->cstep_xfer || !out->cstep_skew) {
            snprintf(err, errlen, "out of memory (%lld steps x %d ranks)", (long long)nmax, ctx->ndense);
            return -1;
        }
    }
    cs_matcher x;
    memset(&x, 0, sizeof x);
    x.a = a;
    int rc = -1;
    if (cs_store_comm_members(a->ctx->st, cs_comm_cb, &x.sizes) != 0 ||
        cs_store_completions(a->ctx->st, cs_done_cb, &x.done) != 0 ||
        cs_store_callsite_labels(a->ctx->st, cs_label_cb, &x.labels) != 0) {
        snprintf(err, errlen, "%s: cannot read communicators, completions or call sites", cs_store_path(a->ctx->st));
        goto out;
    }
    cs_span_query q = { .order = CS_ORDER_COMM_SEQ, .rank = -1 };
    cs_span_iter *it = cs_store_spans(a->ctx->st, &q, err, errlen);
    if (!it)
        goto out;
    cs_span s;
    int r;
    int64_t ccomm = 0, cseq = INT64_MIN;
    while ((r = cs_span_next(it, &s)) > 0) {
        if (s.comm == 0 || s.seq < 0)
            continue;
        if (s.comm != ccomm || s.seq != cseq) {
            if (cs_instance_done(&x, ccomm, cseq) != 0) {
                cs_span_iter_free(it);
                snprintf(err, errlen, "%s: cannot write the analysis", cs_store_path(a->ctx->st));
                goto out;
            }
            x.nm = 0;
            ccomm = s.comm;
            cseq = s.seq;
        }
        a->coll->coll_spans++;
        if (CS_VEC_RESERVE(x.m, x.cap, x.nm + 1) != 0) {
            cs_span_iter_free(it);
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        int64_t e = s.end_ns;
        if (s.req && (s.flags & CS_F_NONBLOCKING)) {
            int64_t d;
            if (cs_map_get(&x.done, cs__an_ctx_rank_key(s.rank, s.req), &d))
                e = d;
            else
                a->coll->uncompleted++;
        }
        x.m[x.nm++] = (cs_mem){ s.id, s.rank, s.op, s.begin_ns, e, s.bytes, s.callsite };
    }
    cs_span_iter_free(it);
    if (r < 0) {
        snprintf(err, errlen, "%s: cannot read the spans (corrupt?)", cs_store_path(a->ctx->st));
        goto out;
    }
    if (cs_instance_done(&x, ccomm, cseq) != 0) {
        snprintf(err, errlen, "%s: cannot write the analysis", cs_store_path(a->ctx->st));
        goto out;
    }
    /* Step bounds: the first marker of the step across ranks, to the first
     * marker of the next one (the last step ends at its last exit). */
    for (int64_t k = 0; k < a->steps->nsteps; k++) {
        int64_t b = INT64_MAX, e = INT64_MAX;
        for (int rr = 0; rr < a->ctx->ndense; rr++) {
            const cs_vec *v = &a->steps->marks[rr];
            if ((int64_t)v->n > k && v->a[k] < b)
                b = v->a[k];
            if ((int64_t)v->n > k + 1 && v->a[k + 1] < e)
                e = v->a[k + 1];
        }
        if (e == INT64_MAX)
            e = a->steps->step_last_exit[k] > b ? a->steps->step_last_exit[k] : b;
        a->steps->step_begin[k] = b == INT64_MAX ? 0 : b;
        a->steps->step_end[k] = e;
        a->steps->step_time[k] = e > b ? e - b : 0;
    }
    if (a->coll->incomplete)
        cs__an_ctx_note(a->ctx, "%lld collective instances are incomplete (a member rank is missing or stopped early)",
                        (long long)a->coll->incomplete);
    if (a->coll->uncompleted)
        cs__an_ctx_note(a->ctx, "%lld nonblocking collectives have no completion (Wait/Test) in the trace",
                        (long long)a->coll->uncompleted);
    rc = 0;
out:
    cs_map_free(&x.sizes);
    cs_map_free(&x.done);
    cs_map_free(&x.prev);
    cs_map_free(&x.prevb);
    cs_map_free(&x.labels.idx);
    for (size_t i = 0; i < x.labels.n; i++)
        free(x.labels.s[i]);
    free(x.labels.s);
    free(x.m);
    return rc;
}
