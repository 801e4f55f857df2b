/* an_match.c: steps, and the matching of collective instances with their
 * wait states.
 *
 * Steps come from MPI_Pcontrol markers (each marker starts a step on its
 * rank); without markers, from the period of each rank's call sequence (op
 * and call site of every call the program made: apply mode's own fused
 * calls are left out), confirmed across ranks. Instances come from one pass over the collective spans
 * ordered by (comm, seq): when the group of an instance ends, it is
 * complete, and its row, its members' waits, the lateness of its last rank
 * and the step it belongs to are known. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "common/stats.h"
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

/* The step search looks at the first CS_STEP_WINDOW positions of each
 * rank's call sequence, for periods of up to CS_STEP_PMAX calls, on up to
 * CS_STEP_SAMPLE ranks (the others are checked against the period found). A
 * period is certain when it matches at least CS_STEP_MIN_MATCH of the
 * positions and at least half of the ranks searched agree. */
#define CS_STEP_WINDOW 20000
#define CS_STEP_PMAX 4096
#define CS_STEP_SAMPLE 8
#define CS_STEP_MIN_MATCH 0.9
#define CS_STEP_KEEP_CALLS 2000000 /* a searched rank's calls kept for the marks */
#define CS_STEP_BRIDGE_NS 1000     /* communication calls this close are one stretch */
#define CS_STEP_IDLE_RATIO 10      /* a call after this many times the median idle time ... */
#define CS_STEP_IDLE_MIN_NS 200000 /* ... and at least this long is a symbol of its own, */
#define CS_STEP_ONE_SYMBOL 0.9     /* where one symbol makes this much of the sequence */

/* One rank's calls: the symbols of its call sequence (op and call site; a
 * run of one polling call, MPI_Test* or MPI_Iprobe, is one symbol) with the
 * begin of each symbol's first call, and the interval of every
 * communication call (a polling run: from its first call's begin to its
 * last call's end). */
typedef struct cs_rseq {
    int32_t *tok;
    int32_t *btok; /* where a call after a long idle time is a symbol of its own: each call's symbol without
                      that (the call alone); NULL where tok is that */
    int64_t *at;
    size_t n, capTok, capAt, capBtok;
    int64_t *cb, *ce;
    size_t nc, capCb, capCe;
    uint64_t *sy; /* while reading: each symbol, and the idle time before it */
    int64_t *gap;
    size_t capSy, capGap;
} cs_rseq;

static void cs_rseq_free(cs_rseq *q)
{
    free(q->sy);
    free(q->gap);
    free(q->tok);
    free(q->btok);
    free(q->at);
    free(q->cb);
    free(q->ce);
}

static int cs_op_in_pattern(const cs_an_ctx *c, int op)
{
    return !cs__an_ctx_kind_is(c, op, "init") && !cs__an_ctx_kind_is(c, op, "finalize") &&
           !cs__an_ctx_kind_is(c, op, "marker") && !cs__an_ctx_kind_is(c, op, "compute");
}

static int cs_op_is_comm(const cs_an_ctx *c, int op)
{
    static const char *const not_comm[] = {
        "init", "finalize", "marker", "launch", "memcpy", "sync", "alloc", "compute"
    };
    for (size_t i = 0; i < sizeof not_comm / sizeof not_comm[0]; i++)
        if (cs__an_ctx_kind_is(c, op, not_comm[i]))
            return 0;
    return op >= 0 && op < c->nops;
}

static int cs_op_is_polling(const cs_an_ctx *c, int op)
{
    if (op < 0 || op >= c->nops)
        return 0;
    const char *nm = c->ops[op].name;
    return (cs__an_ctx_kind_is(c, op, "complete") && strstr(nm, "Test") != NULL) ||
           (cs__an_ctx_kind_is(c, op, "probe") && (strstr(nm, "Iprobe") != NULL || strstr(nm, "Improbe") != NULL));
}

static int cs_u64_order(const void *x, const void *y)
{
    uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
    return (p > q) - (p < q);
}

/* Whether one symbol makes CS_STEP_ONE_SYMBOL of the sequence: then the
 * calls alone repeat with period 1 and only the idle times can tell the
 * step. Otherwise they are left out: the calls' own pattern is the step,
 * and idle times near the threshold would only blur it. */
static int cs_rseq_one_symbol(const cs_rseq *q)
{
    uint64_t *v = malloc(q->n * sizeof *v);
    if (!v)
        return 0;
    memcpy(v, q->sy, q->n * sizeof *v);
    qsort(v, q->n, sizeof *v, cs_u64_order);
    size_t best = 0;
    for (size_t i = 0, j; i < q->n; i = j) {
        for (j = i; j < q->n && v[j] == v[i]; j++)
            ;
        if (j - i > best)
            best = j - i;
    }
    free(v);
    return (double)best >= CS_STEP_ONE_SYMBOL * (double)q->n;
}

static int cs_rseq_oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Read one rank's calls into q (symbol ids from ids, *nids of them), their
 * times on the aligned time line (as the markers' are). comm_only: only
 * the communication calls' times (q->cb, q->ce), no symbols. */
static int cs_rseq_read(cs_an_ctx *ctx, const cs_an_clocks *k, int rank, cs_map *ids, int64_t *nids, cs_rseq *q,
                        int comm_only, char *err, size_t errlen)
{
    q->n = q->nc = 0;
    /* the ops the pattern leaves out are left out in the query too: an
     * imported trace is mostly compute spans */
    int skip[256], nskip = 0;
    for (int op = 0; op < ctx->nops && nskip < (int)(sizeof skip / sizeof skip[0]); op++)
        if (!cs_op_in_pattern(ctx, op))
            skip[nskip++] = op;
    cs_span_query sq = { .order = CS_ORDER_RANK_TIME, .rank = rank, .skip_ops = skip, .nskip = nskip };
    cs_span_iter *it = cs_store_spans(ctx->st, &sq, err, errlen);
    if (!it)
        return -1;
    cs_span s;
    int r;
    uint64_t last = UINT64_MAX;
    int64_t prev_end = INT64_MIN;
    while ((r = cs_span_next(it, &s)) > 0) {
        /* the program's calls only: a call apply mode issued itself
         * (CS_F_FUSED, nested in the program's call that started it) is
         * none of the program's steps, while the calls it fused keep
         * their place (CS_F_FUSE_MEMBER), so a fused run repeats with the
         * period of its unfused twin */
        if (!cs_op_in_pattern(ctx, s.op) || (s.flags & CS_F_FUSED))
            continue;
        s.begin_ns = cs__an_align_time(k, rank, s.begin_ns);
        s.end_ns = cs__an_align_time(k, rank, s.end_ns);
        uint64_t sym = ((uint64_t)(uint32_t)s.op << 44 ^ (uint64_t)s.callsite * 0x9E3779B97F4A7C15ULL) >> 1;
        int polling = sym == last && cs_op_is_polling(ctx, s.op);
        if (polling && q->nc) {
            /* a polling loop is one wait, from its first call to its last */
            if (s.end_ns > q->ce[q->nc - 1])
                q->ce[q->nc - 1] = s.end_ns;
            continue;
        }
        if (cs_op_is_comm(ctx, s.op)) {
            if (CS_VEC_RESERVE(q->cb, q->capCb, q->nc + 1) != 0 || CS_VEC_RESERVE(q->ce, q->capCe, q->nc + 1) != 0)
                goto oom;
            q->cb[q->nc] = s.begin_ns;
            q->ce[q->nc++] = s.end_ns > s.begin_ns ? s.end_ns : s.begin_ns;
        }
        int64_t idle = prev_end > INT64_MIN && s.begin_ns > prev_end ? s.begin_ns - prev_end : 0;
        if (s.end_ns > prev_end)
            prev_end = s.end_ns;
        if (polling)
            continue;
        last = sym;
        if (comm_only)
            continue;
        if (CS_VEC_RESERVE(q->sy, q->capSy, q->n + 1) != 0 || CS_VEC_RESERVE(q->gap, q->capGap, q->n + 1) != 0 ||
            CS_VEC_RESERVE(q->at, q->capAt, q->n + 1) != 0)
            goto oom;
        q->sy[q->n] = sym;
        q->gap[q->n] = idle;
        q->at[q->n++] = s.begin_ns;
    }
    cs_span_iter_free(it);
    if (r < 0) {
        snprintf(err, errlen, "%s: cannot read the spans of rank %d (corrupt?)", cs_store_path(ctx->st), rank);
        return -1;
    }
    /* Where one call makes nearly the whole sequence (identical blocking
     * buckets, one call site issuing them all), a call after a long idle
     * time (the compute of a step: far longer than the rank's typical time
     * between calls, and rare) is a symbol of its own, so that the step has
     * the period of its buckets and not of one call. Where long idle times
     * are common (a compute between every call) the threshold rises above
     * them and nothing changes. */
    int64_t thr = INT64_MAX;
    if (q->n >= 6 && cs_rseq_one_symbol(q)) {
        int64_t *g = malloc(q->n * sizeof *g);
        if (!g)
            return cs_rseq_oom(err, errlen);
        memcpy(g, q->gap, q->n * sizeof *g);
        int64_t med = cs_stats_median_i64(g, q->n);
        free(g);
        thr = med > CS_STEP_IDLE_MIN_NS / CS_STEP_IDLE_RATIO ? med * CS_STEP_IDLE_RATIO : CS_STEP_IDLE_MIN_NS;
    }
    if (CS_VEC_RESERVE(q->tok, q->capTok, q->n) != 0)
        return cs_rseq_oom(err, errlen);
    int split = 0;
    for (size_t i = 0; i < q->n; i++) {
        uint64_t sym = q->sy[i] ^ (q->gap[i] >= thr ? 1ULL << 63 : 0);
        int64_t id;
        if (!cs_map_get(ids, sym, &id)) {
            id = (*nids)++;
            if (cs_map_put(ids, sym, id) != 0)
                return cs_rseq_oom(err, errlen);
        }
        q->tok[i] = (int32_t)id;
        split |= sym != q->sy[i];
    }
    /* The calls alone as well, for the marks: a rank that lost its core
     * for a while (a loaded node) makes a long idle time inside a step or
     * where a step's compute is not, and the repetition there is still
     * the same calls. */
    if (split) {
        if (CS_VEC_RESERVE(q->btok, q->capBtok, q->n) != 0)
            return cs_rseq_oom(err, errlen);
        for (size_t i = 0; i < q->n; i++) {
            int64_t id;
            if (!cs_map_get(ids, q->sy[i], &id)) {
                id = (*nids)++;
                if (cs_map_put(ids, q->sy[i], id) != 0)
                    return cs_rseq_oom(err, errlen);
            }
            q->btok[i] = (int32_t)id;
        }
    } else {
        free(q->btok);
        q->btok = NULL;
        q->capBtok = 0;
    }
    free(q->sy);
    free(q->gap);
    q->sy = NULL;
    q->gap = NULL;
    q->capSy = q->capGap = 0;
    return 0;
oom:
    cs_span_iter_free(it);
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* The fraction of the first CS_STEP_WINDOW positions i with t[i] == t[i+p]. */
static double cs_period_match(const int32_t *t, size_t n, size_t p)
{
    if (p >= n)
        return 0;
    size_t lim = n - p < CS_STEP_WINDOW ? n - p : CS_STEP_WINDOW, same = 0;
    for (size_t i = 0; i < lim; i++)
        same += t[i] == t[i + p];
    return lim ? (double)same / (double)lim : 0;
}

/* Whether every symbol that recurs through the sequence (3 times or more,
 * at least once in 500 positions, spread over half of the window) comes
 * back p positions later at least half of the time: a shorter pattern
 * inside the step (64 buckets, then one Waitall) is not the step. sc holds
 * 4 * nids values. */
static int cs_period_symbols_ok(const int32_t *t, size_t n, size_t p, int64_t nids, int64_t *sc)
{
    size_t lim = n - p < CS_STEP_WINDOW ? n - p : CS_STEP_WINDOW;
    int64_t *cnt = sc, *first = sc + nids, *last = sc + 2 * nids, *same = sc + 3 * nids;
    for (int64_t k = 0; k < nids; k++)
        cnt[k] = same[k] = 0, first[k] = -1, last[k] = -1;
    for (size_t i = 0; i < lim; i++) {
        int32_t k = t[i];
        if (cnt[k]++ == 0)
            first[k] = (int64_t)i;
        last[k] = (int64_t)i;
        same[k] += t[i] == t[i + p];
    }
    for (int64_t k = 0; k < nids; k++)
        if (cnt[k] >= 3 && (size_t)cnt[k] * 500 >= lim && (size_t)(last[k] - first[k]) * 2 >= lim &&
            same[k] * 2 < cnt[k])
            return 0;
    return 1;
}

/* The step period of one rank's sequence: the smallest p that matches at
 * least CS_STEP_MIN_MATCH of the positions, nearly as well as the best
 * period (within half a position per best period), and in which every
 * recurring symbol comes back. 0 when there is none; *match is the
 * fraction of positions it matches (of the best period when none);
 * *varying is set when the best period fails only because a recurring
 * symbol does not come back in step (a varying number of calls per step). */
static int cs_rseq_period(const cs_rseq *q, int64_t nids, double *match, int *varying)
{
    *match = 0;
    *varying = 0;
    if (q->n < 6 || nids <= 0)
        return 0;
    size_t pmax = q->n / 3 < CS_STEP_PMAX ? q->n / 3 : CS_STEP_PMAX;
    double *m = malloc((pmax + 1) * sizeof *m);
    int64_t *sc = malloc(4 * (size_t)nids * sizeof *sc);
    int found = 0;
    if (!m || !sc)
        goto out;
    double best = -1;
    size_t qbest = 0;
    for (size_t p = 1; p <= pmax; p++) {
        m[p] = cs_period_match(q->tok, q->n, p);
        if (m[p] > best + 1e-12) {
            best = m[p];
            qbest = p;
        }
    }
    *match = best > 0 ? best : 0;
    if (best < CS_STEP_MIN_MATCH)
        goto out;
    for (size_t p = 1; p <= pmax && !found; p++) {
        if (m[p] < CS_STEP_MIN_MATCH || m[p] < best - 0.5 / (double)qbest)
            continue;
        if (!cs_period_symbols_ok(q->tok, q->n, p, nids, sc)) {
            if (p == qbest)
                *varying = 1;
            continue;
        }
        found = (int)p;
        *match = m[p];
    }
    if (found)
        *varying = 0;
out:
    free(m);
    free(sc);
    return found;
}

/* The step marks of a rank whose sequence repeats with period p: the
 * first call of each repetition, from the first position where one
 * repetition follows another exactly, at the phase whose boundary (the
 * pair of calls across it) comes once a period; a repetition starts where
 * expected when its boundary is the same pair of calls, by symbol or, where
 * long idle times split a call's symbol (q->btok), by the calls alone (a
 * rank that lost its core for a while is late, not out of step); one that
 * does not is looked for up to two periods further. */
static int cs_rseq_marks(const cs_rseq *q, size_t p, cs_vec *out)
{
    size_t n = q->n, i0 = 0;
    if (p == 0 || n < 2 * p)
        return 0;
    for (size_t i = 0; i + 2 * p <= n; i++) {
        size_t j = 0;
        while (j < p && q->tok[i + j] == q->tok[i + j + p])
            j++;
        if (j == p) {
            i0 = i;
            break;
        }
    }
    /* the phase: a boundary whose pair of calls (the last of a period,
     * the first of the next) comes once a period, so that the marks find
     * it again: in 128 identical buckets and a Waitall the boundary is
     * Waitall -> bucket, never bucket -> bucket */
    size_t r0 = 0;
    for (size_t r = 0; r < p; r++) {
        int32_t a = q->tok[i0 + (r + p - 1) % p], b = q->tok[i0 + r];
        size_t cnt = 0;
        for (size_t t = 0; t < p && cnt < 2; t++)
            cnt += q->tok[i0 + (t + p - 1) % p] == a && q->tok[i0 + t] == b;
        if (cnt == 1) {
            r0 = r;
            break;
        }
    }
    i0 += r0;
    if (i0 + p > n)
        return 0;
    int32_t head = q->tok[i0], tail = q->tok[i0 + p - 1];
    const int32_t *bt = q->btok ? q->btok : q->tok;
    int32_t bhead = bt[i0], btail = bt[i0 + p - 1];
    size_t pos = i0;
    for (;;) {
        if (cs_vec_push(out, q->at[pos]) != 0)
            return -1;
        size_t next = pos + p;
        if (next >= n ||
            ((q->tok[next] != head || q->tok[next - 1] != tail) && (bt[next] != bhead || bt[next - 1] != btail))) {
            size_t j = pos + 1;
            while (j < n && j <= pos + 2 * p && !(q->tok[j] == head && q->tok[j - 1] == tail))
                j++;
            if (j >= n || j > pos + 2 * p)
                break;
            next = j;
        }
        pos = next;
    }
    return 0;
}

/* The median of v[0..n) (sorted in place; an even count gives the mean of
 * the middle two, as the programs' own timers count it). */
static int64_t cs_mid_median(int64_t *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cs_i64_order);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* The median over the steps between consecutive marks mk[0..nm) of the
 * time covered by the rank's communication calls (their union, calls less
 * than CS_STEP_BRIDGE_NS apart as one stretch); -1 when there is no whole
 * step. */
static int64_t cs_rseq_comm_median(const cs_rseq *q, const int64_t *mk, size_t nm)
{
    if (nm < 2)
        return -1;
    int64_t *per = calloc(nm - 1, sizeof *per);
    if (!per)
        return -1;
    size_t k = 0, i = 0;
    int64_t ue = INT64_MIN;
    while (i < q->nc && q->cb[i] < mk[0])
        i++;
    for (; i < q->nc; i++) {
        int64_t b = q->cb[i], e = q->ce[i];
        while (k + 1 < nm && b >= mk[k + 1]) {
            k++;
            ue = INT64_MIN;
        }
        if (k + 1 >= nm)
            break;
        if (e > mk[k + 1])
            e = mk[k + 1];
        /* a call issued within CS_STEP_BRIDGE_NS of the previous one's end:
         * the gap is their own entry and exit (the loop issuing them, the
         * tracer), which the program counts as time in the calls */
        if (ue != INT64_MIN && b > ue && b - ue <= CS_STEP_BRIDGE_NS)
            b = ue;
        if (b < ue)
            b = ue;
        if (e > b)
            per[k] += e - b;
        if (e > ue)
            ue = e;
    }
    int64_t med = cs_mid_median(per, nm - 1);
    free(per);
    return med;
}

/* Steps without markers: the period of each searched rank's call sequence,
 * the period most of them agree on, then every rank's marks with it. Also
 * the communication per step (markers or period). */
static int cs_steps_from_calls(cs_match_io *a, char *err, size_t errlen)
{
    cs_an_ctx *c = a->ctx;
    cs_an_steps *st = a->steps;
    int markers = st->step_source == 1;
    cs_map ids;
    memset(&ids, 0, sizeof ids);
    int64_t nids = 0;
    cs_rseq q;
    memset(&q, 0, sizeof q);
    int rc = -1, nd = c->ndense;
    /* the searched ranks' sequences, kept for the second pass when small */
    cs_rseq *kept = calloc(CS_STEP_SAMPLE, sizeof *kept);
    int *kept_d = calloc(CS_STEP_SAMPLE, sizeof *kept_d);
    int nkept = 0;
    int *per = calloc((size_t)(nd > 0 ? nd : 1), sizeof *per); /* the period each searched rank found */
    double *mat = calloc((size_t)(nd > 0 ? nd : 1), sizeof *mat);
    int *vary = calloc((size_t)(nd > 0 ? nd : 1), sizeof *vary);
    char *searched = calloc((size_t)(nd > 0 ? nd : 1), 1);
    int64_t *comm = calloc((size_t)(nd > 0 ? nd : 1), sizeof *comm);
    size_t ncomm = 0;
    if (!per || !mat || !vary || !searched || !comm || !kept || !kept_d) {
        snprintf(err, errlen, "out of memory (%d ranks)", nd);
        goto out;
    }
    int P = 0;
    if (!markers) {
        int ns = nd < CS_STEP_SAMPLE ? nd : CS_STEP_SAMPLE, nwith = 0;
        for (int i = 0; i < ns; i++) {
            int d = ns == nd ? i : (int)((int64_t)i * nd / ns);
            searched[d] = 1;
            if (cs_rseq_read(c, a->clocks, c->rank_of[d], &ids, &nids, &q, 0, err, errlen) != 0)
                goto out;
            if (q.n == 0)
                continue;
            nwith++;
            per[d] = cs_rseq_period(&q, nids, &mat[d], &vary[d]);
            if (q.nc <= CS_STEP_KEEP_CALLS && nkept < CS_STEP_SAMPLE) {
                kept_d[nkept] = d;
                kept[nkept++] = q;
                memset(&q, 0, sizeof q);
            }
        }
        /* the period most searched ranks found */
        int best = 0, bestn = 0;
        for (int d = 0; d < nd; d++) {
            if (!searched[d] || per[d] <= 0)
                continue;
            int k = 0;
            for (int e = 0; e < nd; e++)
                k += searched[e] && per[e] == per[d];
            if (k > bestn || (k == bestn && per[d] < best))
                best = per[d], bestn = k;
        }
        st->step_ranks_checked = nwith;
        if (best > 0 && bestn * 2 >= nwith)
            P = best;
        if (!P && nwith > 0) {
            int nvary = 0, d0 = -1;
            double bm = 0;
            for (int d = 0; d < nd; d++)
                if (searched[d]) {
                    nvary += vary[d];
                    if (d0 < 0 || mat[d] > bm)
                        d0 = d, bm = mat[d];
                }
            if (best > 0)
                cs__an_ctx_note(c,
                                "no step markers (MPI_Pcontrol), and the ranks searched disagree on the period of "
                                "their calls (%d calls per step on %d of %d): steps unknown, no per-step figures",
                                best, bestn, nwith);
            else if (nvary)
                cs__an_ctx_note(c,
                                "no step markers (MPI_Pcontrol), and the calls repeat with a varying number of calls "
                                "per step (on %d of %d ranks searched), which is not a period: steps unknown, no "
                                "per-step figures",
                                nvary, nwith);
            else
                cs__an_ctx_note(c,
                                "no step markers (MPI_Pcontrol) and no certain period in the call sequence (the best "
                                "matches %.0f %% of the positions on rank %d, %.0f %% needed): steps unknown, no "
                                "per-step figures",
                                100 * bm, d0 >= 0 ? c->rank_of[d0] : 0, 100 * CS_STEP_MIN_MATCH);
        }
    }
    /* every rank: its marks with the period, and its communication per
     * step. With markers only the communication is wanted, and a median
     * over ranks of a median over steps needs no more than the ranks a
     * period search samples: reading every rank's calls again cost as much
     * as the rest of the analysis. */
    int agree = 0;
    double msum = 0;
    char dis[256] = "";
    int nsm = nd < CS_STEP_SAMPLE ? nd : CS_STEP_SAMPLE;
    for (int i = 0; i < (markers ? nsm : nd) && (markers || P); i++) {
        int d = markers && nsm < nd ? (int)((int64_t)i * nd / nsm) : i;
        int r = c->rank_of[d];
        int ki = -1;
        for (int i = 0; i < nkept && ki < 0; i++)
            if (kept_d[i] == d)
                ki = i;
        if (ki >= 0) {
            cs_rseq_free(&q);
            q = kept[ki];
            memset(&kept[ki], 0, sizeof kept[ki]);
        } else if (cs_rseq_read(c, a->clocks, r, &ids, &nids, &q, markers, err, errlen) != 0) {
            goto out;
        }
        if (!markers) {
            double m = cs_period_match(q.tok, q.n, (size_t)P);
            int64_t *sc = malloc(4 * (size_t)(nids > 0 ? nids : 1) * sizeof *sc);
            int ok = sc && q.n >= 2 * (size_t)P && m >= CS_STEP_MIN_MATCH &&
                     cs_period_symbols_ok(q.tok, q.n, (size_t)P, nids, sc);
            free(sc);
            if (searched[d] && per[d] != P)
                ok = 0;
            if (!ok) {
                if (q.n) {
                    size_t l = strlen(dis);
                    if (l < sizeof dis - 16)
                        snprintf(dis + l, sizeof dis - l, "%s%d", l ? "," : "", r);
                }
                continue;
            }
            agree++;
            msum += m;
            if (cs_rseq_marks(&q, (size_t)P, &st->marks[d]) != 0) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
        }
        int64_t cm = cs_rseq_comm_median(&q, st->marks[d].a, st->marks[d].n);
        if (cm >= 0)
            comm[ncomm++] = cm;
    }
    if (P) {
        st->step_source = 2;
        st->step_period = P;
        st->step_ranks_agreeing = agree;
        st->step_confidence = agree ? msum / agree : 0;
        if (dis[0])
            cs__an_ctx_note(c, "steps from the period of the calls (%d per step); ranks %s do not repeat with it", P,
                            dis);
    }
    if (ncomm)
        st->step_comm_ns = cs_mid_median(comm, ncomm);
    rc = 0;
out:
    cs_map_free(&ids);
    cs_rseq_free(&q);
    for (int i = 0; kept && i < nkept; i++)
        cs_rseq_free(&kept[i]);
    free(kept);
    free(kept_d);
    free(per);
    free(mat);
    free(vary);
    free(searched);
    free(comm);
    return rc;
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
    a->steps->step_comm_ns = -1;
    if (nmax > 0)
        a->steps->step_source = 1;
    if (a->ctx->nproc > 0) {
        /* Markers win; without them, the period of the call sequence. */
        if (cs_steps_from_calls(a, err, errlen) != 0)
            return -1;
        for (int d = 0; d < a->ctx->ndense; d++)
            if ((int64_t)a->steps->marks[d].n > nmax)
                nmax = (int64_t)a->steps->marks[d].n;
    }
    return cs__an_steps_alloc(a->ctx, a->steps, nmax, err, errlen);
}

int cs__an_steps_alloc(const cs_an_ctx *ctx, cs_an_steps *steps, int64_t nmax, char *err, size_t errlen)
{
    steps->nsteps = nmax;
    if (nmax > 0) {
        size_t nsr = (size_t)nmax * (size_t)(ctx->ndense + 1);
        steps->late = calloc(nsr, sizeof *steps->late);
        steps->late2 = calloc(nsr, sizeof *steps->late2);
        steps->nblate = calloc(nsr, sizeof *steps->nblate);
        steps->xgap = calloc(nsr, sizeof *steps->xgap);
        steps->step_last_exit = calloc((size_t)nmax, sizeof *steps->step_last_exit);
        steps->step_begin = calloc((size_t)nmax, sizeof *steps->step_begin);
        steps->step_end = calloc((size_t)nmax, sizeof *steps->step_end);
        steps->step_time = calloc((size_t)nmax, sizeof *steps->step_time);
        if (!steps->late || !steps->late2 || !steps->nblate || !steps->xgap || !steps->step_last_exit ||
            !steps->step_begin || !steps->step_end || !steps->step_time) {
            snprintf(err, errlen, "out of memory (%lld steps x %d ranks)", (long long)nmax, ctx->ndense);
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
    int64_t waitmax; /* the most it can have waited: its time inside the call, or (nonblocking) its share of
                        the completion call that finished it */
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

typedef struct cs_matcher {
    cs_match_io *a;
    cs_map sizes, done;
    cs_map donespan;    /* (rank, req) -> the completion call's span */
    cs_map share;       /* completion span -> its time per collective it finished */
    cs_map prev, prevb; /* (rank, comm) -> exit, entry of its previous instance */
    cs_labels labels;
    cs_mem *m;
    size_t nm, cap;
} cs_matcher;

static int cs_done_cb(const cs_completion *c, void *arg)
{
    cs_matcher *x = arg;
    uint64_t key = cs__an_ctx_rank_key(c->rank, c->req);
    return cs_map_put(&x->done, key, c->end_ns) != 0 || cs_map_put(&x->donespan, key, c->span) != 0 ? -1 : 0;
}

static int cs_share_cb(int rank, int64_t span, int64_t dur_ns, int64_t ncoll, void *arg)
{
    (void)rank;
    cs_matcher *x = arg;
    return cs_map_put(&x->share, (uint64_t)span, ncoll > 0 ? dur_ns / ncoll : dur_ns);
}

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
        /* waiting is bounded by the time the member spent in its calls */
        int64_t wt = last - m->b;
        if (wt > m->waitmax)
            wt = m->waitmax;
        if (wt < 0)
            wt = 0;
        cs_wait w = { m->span, m->rank, comm, seq, wt };
        imposed += w.wait_ns;
        if (m->e < last && cs__an_ctx_is_n2n(a->ctx, m->op) && !cs__an_ctx_is_async(a->ctx, m->op))
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
            a->coll->comm_seq[ci] = seq;
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

/* One collective span as a member of its instance: its entry, its exit
 * (a nonblocking one's: the end of the completion call that finished it)
 * and the most it can have waited. */
static int cs_match_member(cs_matcher *x, const cs_span *s, cs_mem *out)
{
    int64_t e = s->end_ns, wmax = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
    int completed = 1;
    if (s->req && (s->flags & CS_F_NONBLOCKING)) {
        int64_t d, cspan, sh;
        uint64_t key = cs__an_ctx_rank_key(s->rank, s->req);
        if (cs_map_get(&x->done, key, &d)) {
            e = d;
            if (cs_map_get(&x->donespan, key, &cspan) && cs_map_get(&x->share, (uint64_t)cspan, &sh))
                wmax += sh;
        } else {
            completed = 0;
        }
    }
    *out = (cs_mem){ s->id, s->rank, s->op, s->begin_ns, e, s->bytes, s->callsite, wmax };
    return completed;
}

/* The instances of one ordered read of collective spans. */
static int cs_match_read(cs_matcher *x, cs_span_iter *it, char *err, size_t errlen)
{
    cs_match_io *a = x->a;
    cs_span s;
    int r;
    int64_t ccomm = 0, cseq = INT64_MIN;
    x->nm = 0;
    while ((r = cs_span_next(it, &s)) > 0) {
        if (s.comm == 0 || s.seq < 0)
            continue;
        if (s.comm != ccomm || s.seq != cseq) {
            if (cs_instance_done(x, ccomm, cseq) != 0) {
                snprintf(err, errlen, "%s: cannot write the analysis", cs_store_path(a->ctx->st));
                return -1;
            }
            x->nm = 0;
            ccomm = s.comm;
            cseq = s.seq;
        }
        a->coll->coll_spans++;
        if (CS_VEC_RESERVE(x->m, x->cap, x->nm + 1) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (!cs_match_member(x, &s, &x->m[x->nm++]))
            a->coll->uncompleted++;
    }
    if (r < 0) {
        snprintf(err, errlen, "%s: cannot read the spans (corrupt?)", cs_store_path(a->ctx->st));
        return -1;
    }
    if (cs_instance_done(x, ccomm, cseq) != 0) {
        snprintf(err, errlen, "%s: cannot write the analysis", cs_store_path(a->ctx->st));
        return -1;
    }
    x->nm = 0;
    return 0;
}

/* The instances of the collective spans q selects. */
static int cs_match_query(cs_matcher *x, const cs_span_query *q, char *err, size_t errlen)
{
    cs_span_iter *it = cs_store_spans(x->a->ctx->st, q, err, errlen);
    if (!it)
        return -1;
    int r = cs_match_read(x, it, err, errlen);
    cs_span_iter_free(it);
    return r;
}

/* Before a share that starts inside a communicator: what the instances
 * before it leave for the own-time gaps, each member's exit and entry of
 * its latest complete instance of more than one member, read back one
 * instance at a time until every member of the communicator has one. */
static int cs_match_warm(cs_matcher *x, const cs_an_piece *pc, int64_t first_seq, char *err, size_t errlen)
{
    cs_match_io *a = x->a;
    int64_t size = 0;
    cs_map_get(&x->sizes, (uint64_t)pc->comm, &size);
    cs_map seen;
    memset(&seen, 0, sizeof seen);
    int64_t nseen = 0;
    int rc = 0;
    for (int64_t q = pc->seq_lo - 1; rc == 0 && q >= first_seq && (size <= 0 || nseen < size); q--) {
        cs_span_query sq = { .order = CS_ORDER_COMM_SEQ, .rank = -1, .comm = pc->comm, .seq_lo = q, .seq_n = 1 };
        cs_span_iter *it = cs_store_spans(a->ctx->st, &sq, err, errlen);
        if (!it)
            return -1;
        cs_span s;
        int r;
        x->nm = 0;
        while ((r = cs_span_next(it, &s)) > 0) {
            if (s.comm == 0 || s.seq < 0)
                continue;
            if (CS_VEC_RESERVE(x->m, x->cap, x->nm + 1) != 0) {
                r = -1;
                break;
            }
            cs_match_member(x, &s, &x->m[x->nm++]);
        }
        cs_span_iter_free(it);
        if (r < 0) {
            snprintf(err, errlen, "%s: cannot read the spans (corrupt?)", cs_store_path(a->ctx->st));
            rc = -1;
            break;
        }
        int expected = size > 0 ? (int)size : (int)x->nm;
        if (x->nm < 2 || (int)x->nm < expected)
            continue;
        for (size_t i = 0; i < x->nm && rc == 0; i++) {
            cs_mem *m = &x->m[i];
            uint64_t key = ((uint64_t)pc->comm * 0x9E3779B97F4A7C15ULL ^ (uint64_t)m->rank) & ~(1ULL << 63);
            int64_t v;
            if (cs_map_get(&seen, key, &v))
                continue;
            /* the last member of a rank in an instance is the one kept */
            for (size_t j = i + 1; j < x->nm; j++)
                if (x->m[j].rank == m->rank)
                    m = &x->m[j];
            if (cs_map_put(&seen, key, 1) != 0 || cs_map_put(&x->prev, key, m->e) != 0 ||
                cs_map_put(&x->prevb, key, m->b) != 0)
                rc = -1;
            nseen++;
        }
        if (rc != 0)
            snprintf(err, errlen, "out of memory");
    }
    x->nm = 0;
    cs_map_free(&seen);
    return rc;
}

int cs__an_match(cs_an_ctx *ctx, const cs_an_clocks *clocks, cs_an_steps *steps, cs_an_coll *out,
                 const cs_an_piece *pieces, size_t npieces, char *err, size_t errlen)
{
    cs_match_io io = { ctx, clocks, steps, out }, *a = &io;
    int64_t nmax = steps->nsteps;
    if (nmax > 0) {
        out->comm_ids = calloc(CS_AN_MAX_COMMS, sizeof *out->comm_ids);
        out->comm_seq = calloc(CS_AN_MAX_COMMS, sizeof *out->comm_seq);
        out->cstep_op = calloc(CS_AN_MAX_COMMS, sizeof *out->cstep_op);
        out->cstep_xfer = calloc((size_t)nmax * CS_AN_MAX_COMMS, sizeof *out->cstep_xfer);
        out->cstep_skew = calloc((size_t)nmax * CS_AN_MAX_COMMS, sizeof *out->cstep_skew);
        if (!out->comm_ids || !out->comm_seq || !out->cstep_op || !out->cstep_xfer || !out->cstep_skew) {
            snprintf(err, errlen, "out of memory (%lld steps x %d ranks)", (long long)nmax, ctx->ndense);
            return -1;
        }
    }
    cs_matcher x;
    memset(&x, 0, sizeof x);
    x.a = a;
    int rc = -1;
    if (cs_store_comm_members(a->ctx->st, cs_comm_cb, &x.sizes) != 0 ||
        cs_store_completions(a->ctx->st, cs_done_cb, &x) != 0 ||
        cs_store_completion_calls(a->ctx->st, cs_share_cb, &x) != 0 ||
        cs_store_callsite_labels(a->ctx->st, cs_label_cb, &x.labels) != 0) {
        snprintf(err, errlen, "%s: cannot read communicators, completions or call sites", cs_store_path(a->ctx->st));
        goto out;
    }
    if (!pieces) {
        cs_span_query q = { .order = CS_ORDER_COMM_SEQ, .rank = -1 };
        if (cs_match_query(&x, &q, err, errlen) != 0)
            goto out;
    }
    for (size_t i = 0; pieces && i < npieces; i++) {
        const cs_an_piece *pc = &pieces[i];
        if (pc->seq_lo > pc->first_seq && cs_match_warm(&x, pc, pc->first_seq, err, errlen) != 0)
            goto out;
        cs_span_query q = {
            .order = CS_ORDER_COMM_SEQ, .rank = -1, .comm = pc->comm, .seq_lo = pc->seq_lo, .seq_n = pc->seq_n
        };
        if (cs_match_query(&x, &q, err, errlen) != 0)
            goto out;
    }
    rc = 0;
out:
    cs_map_free(&x.sizes);
    cs_map_free(&x.done);
    cs_map_free(&x.donespan);
    cs_map_free(&x.share);
    cs_map_free(&x.prev);
    cs_map_free(&x.prevb);
    cs_map_free(&x.labels.idx);
    for (size_t i = 0; i < x.labels.n; i++)
        free(x.labels.s[i]);
    free(x.labels.s);
    free(x.m);
    return rc;
}

void cs__an_match_finish(cs_an_ctx *ctx, cs_an_steps *steps, cs_an_coll *coll)
{
    /* Step bounds: the first marker of the step across ranks, to the first
     * marker of the next one (the last step ends at its last exit). */
    for (int64_t k = 0; k < steps->nsteps; k++) {
        int64_t b = INT64_MAX, e = INT64_MAX;
        for (int rr = 0; rr < ctx->ndense; rr++) {
            const cs_vec *v = &steps->marks[rr];
            if ((int64_t)v->n > k && v->a[k] < b)
                b = v->a[k];
            if ((int64_t)v->n > k + 1 && v->a[k + 1] < e)
                e = v->a[k + 1];
        }
        if (e == INT64_MAX)
            e = steps->step_last_exit[k] > b ? steps->step_last_exit[k] : b;
        steps->step_begin[k] = b == INT64_MAX ? 0 : b;
        steps->step_end[k] = e;
        steps->step_time[k] = e > b ? e - b : 0;
    }
    if (coll->incomplete)
        cs__an_ctx_note(ctx, "%lld collective instances are incomplete (a member rank is missing or stopped early)",
                        (long long)coll->incomplete);
    if (coll->uncompleted)
        cs__an_ctx_note(ctx, "%lld nonblocking collectives have no completion (Wait/Test) in the trace",
                        (long long)coll->uncompleted);
}
