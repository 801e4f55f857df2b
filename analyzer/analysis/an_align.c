/* an_align.c: clock alignment from the collectives themselves.
 *
 * No rank leaves an N-to-N collective before the last one entered it:
 * for members i, j of one instance, exit_i + o_i >= entry_j + o_j, so
 * o_i - o_j >= entry_j - exit_i; and no receive ends before its send began:
 * o_dst - o_src >= send_begin - recv_end. Each ordered pair keeps its
 * tightest lower bound L[i][j] (upper bound: -L[j][i]), over all instances
 * and messages; chains through other ranks tighten them further (longest
 * paths; up to CS_PAIR_MAX_RANKS ranks, beyond that the older estimate:
 * interval middles).
 *
 * A bound is loose by the time its rank takes to leave once released, and
 * that time differs by rank (one that wakes late leaves every instance
 * late), so the middle of an interval is off by half the difference. The
 * offsets are the least-squares solution of o_i - o_j - d_i = L[i][j] over
 * all bounds, with a delay d_i per rank, against the reference rank (the
 * lowest), then kept inside the bounds. Measured on the 4-rank trainer
 * with injected offsets and CLOCK_MONOTONIC, 2 cores shared with two busy
 * loops: within 4 us with 600 allreduces and 2400 messages (the interval
 * middles: up to 8 us).
 *
 * For runs longer than CS_DRIFT_MIN_NS, offsets are estimated in windows
 * spread over the run, and a line through them gives the drift. The sample
 * is bounded (CS_ALIGN_BUDGET member pairs), so the cost does not grow
 * with the trace; the messages are all used (they are in memory anyway).
 *
 * Beyond CS_ALIGN_DENSE_MAX ranks no pair matrix is kept: the offsets are
 * the exit medians (every member leaves an N-to-N instance at about the
 * same time), then moved into the messages' one-way bounds; the budget
 * counts members instead of member pairs.
 *
 * Nothing is moved without evidence: the recorded clocks are kept unless
 * a bound breaks them (zero offsets put an exit before another member's
 * entry, or a receive's end before its send's start); ranks sharing a
 * clock never break one. An asynchronous collective (NCCL's; the c10d ops
 * of an imported NCCL trace) bounds the offsets only by its kernels' GPU
 * times, its call's span by nothing. Where most instances are such kernels
 * or the spans of an imported trace (the group's work, which all members
 * end together), the offsets are those that make the members end
 * together (cs_align_gpu_solve). An offset whose residual exceeds it is
 * refused: the rank keeps its clock, and a note names it. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "common/stats.h"
#include "libtrace/span.h"

#include <stdlib.h>
#include <string.h>

/* What this pass reads and writes (analysis.h). */
typedef struct cs_align_io {
    cs_an_ctx *ctx;
    const cs_an_msgs *msgs;
    cs_an_clocks *clocks;
} cs_align_io;

#define CS_ALIGN_WINDOWS 8
#define CS_ALIGN_BUDGET 60000000LL     /* member pairs visited in all */
#define CS_DRIFT_MIN_NS 120000000000LL /* 2 minutes */
#define CS_NOBOUND INT64_MIN
#define CS_PAIR_MAX_RANKS 256 /* pairwise estimates up to this many ranks */
/* Beyond this many ranks no pair matrix is kept (8 bytes a pair and
 * window: 4.8 GB at 8192 ranks, and an instance of n members visits n^2
 * pairs): offsets are the exit medians, kept inside the messages' bounds. */
#define CS_ALIGN_DENSE_MAX 1024
/* A bound broken by less than this is the clocks' read granularity, not
 * evidence of an offset. */
#define CS_ALIGN_SLACK_NS 1000

typedef struct cs_win {
    int64_t *L;         /* [n*n] lower bounds on o_i - o_j; NULL beyond CS_ALIGN_DENSE_MAX ranks */
    cs_vec *dexit;      /* [n] exit - instance median exit */
    int64_t t_sum, t_n; /* raw times, for the window's middle */
    int64_t inst;
} cs_win;

static int64_t cs_round(double x)
{
    return (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

typedef struct cs_member {
    int rank;
    int64_t b, e;
} cs_member;

static void cs_win_instance(cs_win *w, int n, const cs_member *m, int nm)
{
    if (nm < 2)
        return;
    for (int x = 0; x < nm && w->L; x++)
        for (int y = 0; y < nm; y++) {
            if (x == y)
                continue;
            int64_t *l = &w->L[(size_t)m[x].rank * (size_t)n + (size_t)m[y].rank];
            int64_t v = m[y].b - m[x].e;
            if (*l == CS_NOBOUND || v > *l)
                *l = v;
        }
    int64_t *ex = malloc((size_t)nm * sizeof *ex);
    if (!ex)
        return;
    for (int x = 0; x < nm; x++)
        ex[x] = m[x].e;
    int64_t med = cs_stats_median_i64(ex, (size_t)nm);
    free(ex);

    for (int x = 0; x < nm; x++)
        cs_vec_push(&w->dexit[m[x].rank], m[x].e - med);
    w->t_sum += m[0].b / 1000000; /* ms, no overflow */
    w->t_n++;
    w->inst++;
}

/* The windows index ranks by their dense index (cs__an_ctx_ix): the
 * matrices follow the number of ranks present, not the largest rank id.
 * The reference rank's index: */
static int al_ref(const cs_an_ctx *c)
{
    int d = cs__an_ctx_ix(c, c->ref_rank);
    return d >= 0 ? d : 0;
}

/* Offsets (relative to ref) from one window's bounds. */
static void cs_win_solve(const cs_align_io *a, cs_win *w, int64_t *o)
{
    int n = a->ctx->ndense, ref = al_ref(a->ctx);
    int64_t *crude = calloc((size_t)n, sizeof *crude);
    int64_t refmed = 0;
    if (!crude)
        return;
    for (int i = 0; i < n; i++)
        crude[i] = w->dexit[i].n ? cs__an_ctx_median(&w->dexit[i]) : 0;
    refmed = crude[ref];
    /* exit_i + o_i == common: o_i = -(dexit_i) relative */
    for (int i = 0; i < n; i++)
        o[i] = -(crude[i] - refmed);
    free(crude);
    if (!w->L)
        return;
    /* Each rank's bounds as a row, in the order of j: the pairs with both
     * bounds (their interval middles, computed once) and those with one.
     * The upper bound of (i, j) is row j's: read from L in the sweeps, by
     * column, nearly every load missed the cache at 1024 ranks (a third
     * of the analysis). The sums run over the same terms in the same
     * order as from L, so the offsets are the same to the nanosecond. */
    size_t nn = (size_t)n * (size_t)n;
    size_t *row2 = malloc(((size_t)n + 1) * sizeof *row2), *row1 = malloc(((size_t)n + 1) * sizeof *row1);
    size_t n2 = 0, n1 = 0;
    for (size_t x = 0; row2 && row1 && x < nn; x++) {
        size_t i = x / (size_t)n, j = x % (size_t)n;
        if (i == j)
            continue;
        int lo = w->L[x] != CS_NOBOUND, hi = w->L[j * (size_t)n + i] != CS_NOBOUND;
        n2 += lo && hi;
        n1 += lo != hi;
    }
    int *j2 = malloc((n2 ? n2 : 1) * sizeof *j2), *j1 = malloc((n1 ? n1 : 1) * sizeof *j1);
    double *mid = malloc((n2 ? n2 : 1) * sizeof *mid);
    int64_t *lo1 = malloc((n1 ? n1 : 1) * sizeof *lo1), *hi1 = malloc((n1 ? n1 : 1) * sizeof *hi1);
    if (!row2 || !row1 || !j2 || !j1 || !mid || !lo1 || !hi1)
        goto out; /* the exit medians alone */
    n2 = n1 = 0;
    for (int i = 0; i < n; i++) {
        row2[i] = n2;
        row1[i] = n1;
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            int64_t lo = w->L[(size_t)i * (size_t)n + (size_t)j], hi = w->L[(size_t)j * (size_t)n + (size_t)i];
            if (lo != CS_NOBOUND && hi != CS_NOBOUND) {
                j2[n2] = j;
                /* inconsistent bounds (-hi < lo): the middle anyway */
                mid[n2++] = ((double)lo + (double)-hi) / 2;
            } else if (lo != CS_NOBOUND || hi != CS_NOBOUND) {
                j1[n1] = j;
                lo1[n1] = lo;
                hi1[n1++] = hi;
            }
        }
    }
    row2[n] = n2;
    row1[n] = n1;
    /* Refine with interval middles (Gauss-Seidel on o_i - o_j = mid_ij). */
    for (int it = 0; it < 100; it++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            if (i == ref || row2[i] == row2[i + 1])
                continue;
            double sum = 0;
            for (size_t p = row2[i]; p < row2[i + 1]; p++)
                sum += (double)o[j2[p]] + mid[p];
            int64_t v = (int64_t)cs_round(sum / (double)(int)(row2[i + 1] - row2[i]));
            if (v != o[i])
                changed = 1;
            o[i] = v;
        }
        if (!changed)
            break;
    }
    /* Keep each offset inside the one-sided bounds it has. */
    for (int it = 0; it < 20; it++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            if (i == ref)
                continue;
            for (size_t p = row1[i]; p < row1[i + 1]; p++) {
                int64_t lo = lo1[p], hi = hi1[p], oj = o[j1[p]];
                if (lo != CS_NOBOUND && o[i] - oj < lo) {
                    o[i] = oj + lo;
                    changed = 1;
                }
                if (hi != CS_NOBOUND && o[i] - oj > -hi) {
                    o[i] = oj - hi;
                    changed = 1;
                }
            }
        }
        if (!changed)
            break;
    }
out:
    free(row2);
    free(row1);
    free(j2);
    free(j1);
    free(mid);
    free(lo1);
    free(hi1);
}

/* Offsets (relative to ref) from one window's bounds, by least squares
 * with a per-rank delay (see the top). 0, or
 * -1 when there are too many ranks or no memory (use cs_win_solve). */
static int cs_win_solve_pairs(const cs_align_io *a, const cs_win *w, int64_t *o)
{
    int n = a->ctx->ndense, ref = al_ref(a->ctx);
    if (n > CS_PAIR_MAX_RANKS || !w->L)
        return -1;
    size_t nn = (size_t)n * (size_t)n;
    int64_t *F = malloc(nn * sizeof *F);
    double *M = calloc(4 * nn, sizeof *M), *rhs = calloc(2 * (size_t)n, sizeof *rhs);
    if (!F || !M || !rhs) {
        free(F);
        free(M);
        free(rhs);
        return -1;
    }
    /* Tighten through chains of ranks; give up on that when the bounds
     * contradict each other (a positive cycle). */
    memcpy(F, w->L, nn * sizeof *F);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++) {
            int64_t fik = F[(size_t)i * (size_t)n + (size_t)k];
            if (fik == CS_NOBOUND)
                continue;
            for (int j = 0; j < n; j++) {
                int64_t fkj = F[(size_t)k * (size_t)n + (size_t)j], *fij = &F[(size_t)i * (size_t)n + (size_t)j];
                if (fkj != CS_NOBOUND && (*fij == CS_NOBOUND || fik + fkj > *fij))
                    *fij = fik + fkj;
            }
        }
    for (int i = 0; i < n; i++)
        if (F[(size_t)i * (size_t)n + (size_t)i] != CS_NOBOUND && F[(size_t)i * (size_t)n + (size_t)i] > 0) {
            memcpy(F, w->L, nn * sizeof *F);
            break;
        }
    /* Least squares over the bounds: a bound is as loose as the time its
     * rank takes to leave once released, which differs by rank (a rank that
     * wakes late leaves every instance late), so the lower bound on
     * o_i - o_j is o_i - o_j - d_i with a delay d_i >= 0 of rank i. Unknowns
     * o[0..n) and d[0..n); the interval middle would assume d_i == d_j. */
    int nv = 2 * n;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            int64_t f = F[(size_t)i * (size_t)n + (size_t)j];
            if (j == i || f == CS_NOBOUND)
                continue;
            int ix[3] = { i, j, n + i };
            double cf[3] = { 1, -1, -1 };
            for (int u = 0; u < 3; u++) {
                for (int v = 0; v < 3; v++)
                    M[(size_t)ix[u] * (size_t)nv + (size_t)ix[v]] += cf[u] * cf[v];
                rhs[ix[u]] += cf[u] * (double)f;
            }
        }
    }
    /* o_ref = 0 and absent ranks fixed; a tiny pull towards the exit
     * medians (o[] on entry) and towards no delay keeps ranks without
     * bounds determined. */
    for (int i = 0; i < nv; i++) {
        double *row = &M[(size_t)i * (size_t)nv];
        if (i == ref) {
            memset(row, 0, (size_t)nv * sizeof *row);
            row[i] = 1;
            rhs[i] = i < n && i != ref ? (double)o[i] : 0;
        } else {
            row[i] += 1e-9;
            rhs[i] += i < n ? 1e-9 * (double)o[i] : 0;
        }
    }
    /* Gaussian elimination with partial pivoting. */
    int ok = 1;
    for (int c = 0; c < nv && ok; c++) {
        int piv = c;
        for (int r = c + 1; r < nv; r++)
            if (__builtin_fabs(M[(size_t)r * (size_t)nv + (size_t)c]) >
                __builtin_fabs(M[(size_t)piv * (size_t)nv + (size_t)c]))
                piv = r;
        if (M[(size_t)piv * (size_t)nv + (size_t)c] == 0) {
            ok = 0;
            break;
        }
        if (piv != c) {
            for (int k = 0; k < nv; k++) {
                double t = M[(size_t)c * (size_t)nv + (size_t)k];
                M[(size_t)c * (size_t)nv + (size_t)k] = M[(size_t)piv * (size_t)nv + (size_t)k];
                M[(size_t)piv * (size_t)nv + (size_t)k] = t;
            }
            double t = rhs[c];
            rhs[c] = rhs[piv];
            rhs[piv] = t;
        }
        for (int r = c + 1; r < nv; r++) {
            double f = M[(size_t)r * (size_t)nv + (size_t)c] / M[(size_t)c * (size_t)nv + (size_t)c];
            if (f == 0)
                continue;
            for (int k = c; k < nv; k++)
                M[(size_t)r * (size_t)nv + (size_t)k] -= f * M[(size_t)c * (size_t)nv + (size_t)k];
            rhs[r] -= f * rhs[c];
        }
    }
    if (ok)
        for (int c = nv - 1; c >= 0; c--) {
            double v = rhs[c];
            for (int k = c + 1; k < nv; k++)
                v -= M[(size_t)c * (size_t)nv + (size_t)k] * rhs[k];
            rhs[c] = v / M[(size_t)c * (size_t)nv + (size_t)c];
        }
    if (ok)
        for (int i = 0; i < n; i++)
            o[i] = i == ref ? 0 : cs_round(rhs[i]);
    /* Keep every pair inside its (consistent) bounds. */
    for (int it = 0; ok && it < 20; it++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            if (i == ref)
                continue;
            for (int j = 0; j < n; j++) {
                if (j == i)
                    continue;
                int64_t lo = F[(size_t)i * (size_t)n + (size_t)j], nhi = F[(size_t)j * (size_t)n + (size_t)i];
                if (lo != CS_NOBOUND && nhi != CS_NOBOUND && lo > -nhi)
                    continue;
                if (lo != CS_NOBOUND && o[i] - o[j] < lo) {
                    o[i] = o[j] + lo;
                    changed = 1;
                }
                if (nhi != CS_NOBOUND && o[i] - o[j] > -nhi) {
                    o[i] = o[j] - nhi;
                    changed = 1;
                }
            }
        }
        if (!changed)
            break;
    }
    free(F);
    free(M);
    free(rhs);
    return ok ? 0 : -1;
}

/* Offsets of one window: the exit medians refined by interval middles,
 * then the pairwise least squares where the ranks are few enough. */
static void cs_solve(const cs_align_io *a, cs_win *w, int64_t *o)
{
    cs_win_solve(a, w, o);
    cs_win_solve_pairs(a, w, o);
}

/* Without a pair matrix: keep the offsets inside the messages' one-way
 * bounds (a receive ends after its send began), moving the receiver, or
 * the sender where the receiver is the reference; a few sweeps, as the
 * dense solution keeps its one-sided bounds. */
static int cs_align_msg_bounds(const cs_align_io *a, int ref, int64_t *o)
{
    for (int sweep = 0; sweep < 20; sweep++) {
        int changed = 0;
        cs_msg_iter it;
        if (cs__an_msgs_begin(a->msgs, &it) != 0)
            return -1;
        for (const cs_msg *msg; (msg = cs__an_msgs_next(&it));) {
            int ds = cs__an_ctx_ix(a->ctx, msg->src), dd = cs__an_ctx_ix(a->ctx, msg->dst);
            if (msg->re <= 0 || msg->src == msg->dst || ds < 0 || dd < 0)
                continue;
            int64_t v = msg->sb - msg->re; /* o_dd - o_ds >= v */
            if (o[dd] - o[ds] >= v)
                continue;
            if (dd != ref)
                o[dd] = o[ds] + v;
            else if (ds != ref)
                o[ds] = o[dd] - v;
            changed = 1;
        }
        if (cs__an_msgs_end(&it) != 0)
            return -1;
        if (!changed)
            break;
    }
    return 0;
}

int64_t cs__an_align_time(const cs_an_clocks *clocks, int rank, int64_t raw)
{
    int d = clocks->ctx ? cs__an_ctx_ix(clocks->ctx, rank) : -1;
    if (d < 0)
        return raw;
    const cs_an_clock *k = &clocks->clk[d];
    return raw + k->offset_ns + (int64_t)(k->drift_ppm * 1e-6 * (double)(raw - k->start_ns));
}

/* A nonblocking collective in which every member waits for all the others
 * (allreduce, barrier, allgather, alltoall, ...: not a scan). */
static int cs_align_nb_n2n(const cs_an_ctx *c, int op)
{
    if (op < 0 || op >= c->nops || !cs__an_ctx_kind_is(c, op, "coll"))
        return 0;
    return strstr(c->ops[op].name, "scan") == NULL && strstr(c->ops[op].name, "Scan") == NULL;
}

/* Instances whose members end together: the kernels of an NCCL
 * collective, and the collectives of an imported trace (each span is the
 * group's work, which ends when the last member's data is in). Instance i
 * has members m[first[i] .. first[i+1]) (first[ninst] = nm). */
typedef struct cs_gpu_inst {
    cs_member *m;
    size_t nm, capm;
    size_t *first;
    size_t ninst, capf;
} cs_gpu_inst;

static int cs_align_keep_gpu(cs_gpu_inst *g, const cs_member *m, size_t nm)
{
    if (CS_VEC_RESERVE(g->m, g->capm, g->nm + nm) != 0 || CS_VEC_RESERVE(g->first, g->capf, g->ninst + 2) != 0)
        return -1;
    g->first[g->ninst++] = g->nm;
    memcpy(g->m + g->nm, m, nm * sizeof *m);
    g->nm += nm;
    g->first[g->ninst] = g->nm;
    return 0;
}

/* Offsets from kernels that end together: every member of an instance
 * leaves its kernel at about the same moment (each waits for the last
 * one, then all finish one transfer), so e_i + o_i is the instance's end
 * c for every member i. Alternately each instance's c (the median of its
 * members' aligned ends; the mean of two) and each rank's offset (less the
 * median of its members' e_i + o_i - c), until no rank moves by a
 * nanosecond (30 rounds at most), ref fixed at 0: robust to a member whose
 * kernel ended late for its own reasons. resid[r]: the median of rank r's
 * |e_i + o_i - c| at the end, -1 for a rank in no instance. 0, or -1 out
 * of memory. */
static int cs_align_gpu_solve(const cs_gpu_inst *g, int n, int ref, int64_t *o, int64_t *resid)
{
    cs_vec *dev = calloc((size_t)n, sizeof *dev);
    int64_t *ends = malloc((g->nm ? g->nm : 1) * sizeof *ends);
    int rc = dev && ends ? 0 : -1;
    for (int r = 0; rc == 0 && r < n; r++)
        o[r] = 0;
    for (int round = 0; rc == 0 && round < 30; round++) {
        for (int r = 0; r < n; r++)
            dev[r].n = 0;
        for (size_t i = 0; rc == 0 && i < g->ninst; i++) {
            size_t a0 = g->first[i], k = g->first[i + 1] - a0;
            for (size_t x = 0; x < k; x++)
                ends[x] = g->m[a0 + x].e + o[g->m[a0 + x].rank];
            int64_t c = k == 2 ? ends[0] / 2 + ends[1] / 2 : cs_stats_median_i64(ends, k);
            for (size_t x = 0; rc == 0 && x < k; x++)
                rc = cs_vec_push(&dev[g->m[a0 + x].rank], g->m[a0 + x].e + o[g->m[a0 + x].rank] - c);
        }
        int64_t moved = 0;
        for (int r = 0; rc == 0 && r < n; r++) {
            int64_t d = dev[r].n ? cs__an_ctx_median(&dev[r]) : 0;
            o[r] -= d;
            moved += d < 0 ? -d : d;
        }
        for (int r = 0; rc == 0 && r < n; r++)
            if (r != ref)
                o[r] -= o[ref];
        if (rc == 0)
            o[ref] = 0;
        if (moved < n)
            break;
    }
    /* the residuals at the offsets found */
    for (int r = 0; rc == 0 && r < n; r++)
        dev[r].n = 0;
    for (size_t i = 0; rc == 0 && i < g->ninst; i++) {
        size_t a0 = g->first[i], k = g->first[i + 1] - a0;
        for (size_t x = 0; x < k; x++)
            ends[x] = g->m[a0 + x].e + o[g->m[a0 + x].rank];
        int64_t c = k == 2 ? ends[0] / 2 + ends[1] / 2 : cs_stats_median_i64(ends, k);
        for (size_t x = 0; rc == 0 && x < k; x++) {
            int64_t v = g->m[a0 + x].e + o[g->m[a0 + x].rank] - c;
            rc = cs_vec_push(&dev[g->m[a0 + x].rank], v < 0 ? -v : v);
        }
    }
    for (int r = 0; rc == 0 && r < n; r++)
        resid[r] = dev[r].n ? cs__an_ctx_median(&dev[r]) : -1;
    for (int r = 0; dev && r < n; r++)
        cs_vec_free(&dev[r]);
    free(dev);
    free(ends);
    return rc;
}

static int cs_align_done_cb(const cs_completion *c, void *arg)
{
    return cs_map_put(arg, cs__an_ctx_rank_key(c->rank, c->req), c->end_ns);
}

int cs__an_align(cs_an_ctx *ctx, const cs_an_msgs *msgs, cs_an_clocks *out, char *err, size_t errlen)
{
    cs_align_io io = { ctx, msgs, out }, *a = &io;
    int n = a->ctx->ndense, ref = al_ref(a->ctx);
    if (cs_store_clear_alignment(a->ctx->st) != 0) {
        snprintf(err, errlen, "%s: cannot reset the clock alignment", cs_store_path(a->ctx->st));
        return -1;
    }
    for (int r = 0; r < n; r++)
        a->clocks->clk[r].offset_ns = 0, a->clocks->clk[r].drift_ppm = 0, a->clocks->clk[r].residual_ns = -1;
    if (n == 0)
        return 0; /* no process: nothing to align */
    cs_comm_range *cr = NULL;
    int ncr = 0;
    if (cs_store_comm_ranges(a->ctx->st, &cr, &ncr) != 0) {
        snprintf(err, errlen, "%s: cannot list communicators", cs_store_path(a->ctx->st));
        return -1;
    }
    int nwin = CS_ALIGN_WINDOWS;
    cs_win win[CS_ALIGN_WINDOWS];
    memset(win, 0, sizeof win);
    int rc = -1;
    int64_t *o = NULL;
    cs_win all;
    memset(&all, 0, sizeof all);
    cs_map done; /* (rank, req) -> end of the completion call, raw */
    memset(&done, 0, sizeof done);
    int dense = n <= CS_ALIGN_DENSE_MAX;
    cs_gpu_inst gk = { 0 }; /* instances whose members end together */
    char imported[32] = "";
    cs_store_meta_get(a->ctx->st, "import_format", imported, sizeof imported);
    int64_t *gresid = NULL; /* [n]: the residuals of the offsets found from them */
    for (int k = 0; k < nwin; k++) {
        win[k].L = dense ? malloc((size_t)n * (size_t)n * sizeof *win[k].L) : NULL;
        win[k].dexit = calloc((size_t)n, sizeof *win[k].dexit);
        if ((dense && !win[k].L) || !win[k].dexit) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        for (size_t i = 0; dense && i < (size_t)n * (size_t)n; i++)
            win[k].L[i] = CS_NOBOUND;
    }
    /* A nonblocking N-to-N collective completes on no rank before every
     * member started it: its members' starts and the ends of the completion
     * calls that finished them bound the offsets as a blocking instance's
     * entries and exits do (a program whose collectives are all nonblocking
     * is aligned by them, not by its messages alone, whose one-way delays
     * would read as offsets). Run before the alignment: raw times. */
    if (cs_store_completions(a->ctx->st, cs_align_done_cb, &done) != 0) {
        snprintf(err, errlen, "%s: cannot read the completions", cs_store_path(a->ctx->st));
        goto out;
    }
    cs_member *m = malloc((size_t)(n > 0 ? n : 1) * 4 * sizeof *m);
    size_t mcap = (size_t)(n > 0 ? n : 1) * 4;
    if (!m) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int c = 0; c < ncr; c++) {
        int64_t lo = cr[c].seq_lo, hi = cr[c].seq_hi, total = hi - lo + 1;
        int size = cr[c].size > 1 ? cr[c].size : 2;
        /* the budget is of member pairs, or of members without a matrix */
        int64_t per = CS_ALIGN_BUDGET / ((int64_t)size * (dense ? size : 1) * nwin);
        if (per < 50)
            per = 50;
        for (int k = 0; k < nwin; k++) {
            int64_t a0, a1;
            if (total <= per * nwin) { /* all of it, split in windows */
                a0 = lo + total * k / nwin;
                a1 = lo + total * (k + 1) / nwin - 1;
            } else {
                int64_t start = lo + (total - per) * k / (nwin - 1);
                a0 = start;
                a1 = start + per - 1;
            }
            if (a1 < a0)
                continue;
            cs_span_iter *it = cs_store_spans_raw_seq(a->ctx->st, cr[c].comm, a0, a1, err, errlen);
            if (!it)
                goto outm;
            cs_span s;
            int64_t cur = INT64_MIN;
            size_t nm = 0;
            int ok = 1, r, gpu = imported[0] != 0;
            while ((r = cs_span_next(it, &s)) >= 0) {
                if (r == 0 || s.seq != cur) {
                    if (nm && ok) {
                        cs_win_instance(&win[k], n, m, (int)nm);
                        if (gpu && nm >= 2 && cs_align_keep_gpu(&gk, m, nm) != 0) {
                            snprintf(err, errlen, "out of memory");
                            cs_span_iter_free(it);
                            goto outm;
                        }
                    }
                    if (r == 0)
                        break;
                    nm = 0;
                    ok = 1;
                    gpu = imported[0] != 0;
                    cur = s.seq;
                }
                int d = cs__an_ctx_ix(a->ctx, s.rank);
                int nb = (s.flags & CS_F_NONBLOCKING) != 0;
                /* an asynchronous collective: its kernels' times or nothing */
                if (cs__an_ctx_is_async(a->ctx, s.op)) {
                    if (s.gpu_begin_ns > 0 && s.gpu_end_ns >= s.gpu_begin_ns) {
                        s.begin_ns = s.gpu_begin_ns;
                        s.end_ns = s.gpu_end_ns;
                        nb = 0; /* the kernel itself: complete when it ends */
                        gpu = 1;
                    } else {
                        ok = 0;
                    }
                }
                if (!(nb ? cs_align_nb_n2n(a->ctx, s.op) : cs__an_ctx_is_n2n(a->ctx, s.op)) || d < 0)
                    ok = 0;
                if (nb) {
                    int64_t de;
                    if (cs_map_get(&done, cs__an_ctx_rank_key(s.rank, s.req), &de) && de >= s.begin_ns)
                        s.end_ns = de;
                    else
                        ok = 0;
                }
                if (CS_VEC_RESERVE(m, mcap, nm + 1) != 0) {
                    ok = 0;
                    continue;
                }
                m[nm++] = (cs_member){ ok ? d : 0, s.begin_ns, s.end_ns };
            }
            cs_span_iter_free(it);
        }
    }
    /* Solve per window, then fit. */
    int64_t *ow = malloc((size_t)nwin * (size_t)n * sizeof *ow);
    double tmid[CS_ALIGN_WINDOWS];
    int used[CS_ALIGN_WINDOWS];
    int nused = 0;
    if (!ow) {
        snprintf(err, errlen, "out of memory");
        goto outm;
    }
    all.L = dense ? malloc((size_t)n * (size_t)n * sizeof *all.L) : NULL;
    all.dexit = calloc((size_t)n, sizeof *all.dexit);
    if ((dense && !all.L) || !all.dexit) {
        free(all.L);
        free(all.dexit);
        free(ow);
        snprintf(err, errlen, "out of memory");
        goto outm;
    }
    for (size_t i = 0; dense && i < (size_t)n * (size_t)n; i++)
        all.L[i] = CS_NOBOUND;
    for (int k = 0; k < nwin; k++) {
        if (!win[k].inst)
            continue;
        a->clocks->align_instances += win[k].inst;
        for (size_t i = 0; dense && i < (size_t)n * (size_t)n; i++)
            if (win[k].L[i] != CS_NOBOUND && (all.L[i] == CS_NOBOUND || win[k].L[i] > all.L[i]))
                all.L[i] = win[k].L[i];
        for (int r = 0; r < n; r++)
            for (size_t x = 0; x < win[k].dexit[r].n; x++)
                cs_vec_push(&all.dexit[r], win[k].dexit[r].a[x]);
        cs_solve(a, &win[k], ow + (size_t)k * (size_t)n);
        tmid[nused] = (double)win[k].t_sum / (double)win[k].t_n * 1e6;
        used[nused++] = k;
    }
    o = calloc((size_t)n, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        free(ow);
        goto outall;
    }
    /* Messages bound the whole run's offsets: a receive ends after its
     * send began. */
    cs_msg_iter it;
    int read = dense ? cs__an_msgs_begin(a->msgs, &it) : 0;
    for (const cs_msg *msg; read == 0 && dense && (msg = cs__an_msgs_next(&it));) {
        int ds = cs__an_ctx_ix(a->ctx, msg->src), dd = cs__an_ctx_ix(a->ctx, msg->dst);
        if (msg->re <= 0 || msg->src == msg->dst || ds < 0 || dd < 0)
            continue;
        int64_t v = msg->sb - msg->re, *l = &all.L[(size_t)dd * (size_t)n + (size_t)ds];
        if (*l == CS_NOBOUND || v > *l)
            *l = v;
    }
    if (read == 0 && dense)
        read = cs__an_msgs_end(&it);
    /* The recorded clocks are kept unless the bounds prove them wrong: a
     * bound that zero offsets break (a rank left a collective before
     * another entered it, a message arrived before it was sent, as the
     * times are recorded). Ranks that share a clock (one host, or clocks
     * kept in step) never break one, and an estimate there would only add
     * its own error. Without a pair matrix the estimate is always made. */
    int64_t worst = INT64_MIN; /* the largest bound at zero offsets */
    int nbroken = 0;
    for (size_t i = 0; read == 0 && dense && i < (size_t)n * (size_t)n; i++)
        if (all.L[i] != CS_NOBOUND) {
            if (all.L[i] > worst)
                worst = all.L[i];
            nbroken += all.L[i] > CS_ALIGN_SLACK_NS;
        }
    int keep = dense && nbroken == 0;
    if (read == 0 && !keep) {
        cs_solve(a, &all, o);
        if (!dense)
            read = cs_align_msg_bounds(a, ref, o);
        /* The kernels of one collective end together, as do the members of
         * an imported trace's collectives: where most instances are such,
         * the offsets are those that make them end together (the one-sided
         * bounds of members that began long before the last one hold them
         * only loosely). */
        if (read == 0 && 2 * (int64_t)gk.ninst > a->clocks->align_instances) {
            if (!(gresid = malloc((size_t)n * sizeof *gresid)) || cs_align_gpu_solve(&gk, n, ref, o, gresid) != 0)
                read = -1;
        }
    }
    if (read != 0) {
        snprintf(err, errlen, "the paired messages could not be read back whole");
        free(ow);
        goto outall;
    }
    double span_ns = nused > 1 && !keep && !gresid ? tmid[nused - 1] - tmid[0] : 0;
    for (int r = 0; r < n; r++) {
        cs_an_clock *k = &a->clocks->clk[r];
        k->offset_ns = o[r];
        k->drift_ppm = 0;
        if (span_ns >= (double)CS_DRIFT_MIN_NS && r != ref) {
            /* least squares line through the window offsets */
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (int u = 0; u < nused; u++) {
                double x = tmid[u] - tmid[0], y = (double)ow[(size_t)used[u] * (size_t)n + (size_t)r];
                sx += x, sy += y, sxx += x * x, sxy += x * y;
            }
            double den = nused * sxx - sx * sx;
            if (den > 0) {
                double slope = (nused * sxy - sx * sy) / den;
                double icpt = (sy - slope * sx) / nused;
                /* The store applies drift around the process start: fold the
                 * reference time into the offset there. */
                k->drift_ppm = slope * 1e6;
                k->offset_ns = (int64_t)cs_round(icpt + slope * ((double)k->start_ns - tmid[0]));
            }
        }
        int64_t b = 0;
        for (int j = 0; dense && j < n; j++)
            if (j != r)
                b += (all.L[(size_t)r * (size_t)n + (size_t)j] != CS_NOBOUND) +
                     (all.L[(size_t)j * (size_t)n + (size_t)r] != CS_NOBOUND);
        k->bounds = dense ? b : -1;
        /* residual: median |exit - median exit| after the shift */
        cs_vec d = { 0 };
        int64_t refm = all.dexit[ref].n ? cs__an_ctx_median(&all.dexit[ref]) : 0;
        for (size_t x = 0; x < all.dexit[r].n; x++) {
            int64_t v = all.dexit[r].a[x] - refm + (o[r] - o[ref]);
            cs_vec_push(&d, v < 0 ? -v : v);
        }
        k->residual_ns = d.n ? cs__an_ctx_median(&d) : -1;
        if (gresid)
            k->residual_ns = gresid[r];
        cs_vec_free(&d);
    }
    /* An offset is applied only where it explains more than it leaves
     * unexplained: one whose residual is larger than itself is refused
     * (the rank keeps its recorded clock), and said. */
    int moved = 0, refused = 0;
    int64_t most = 0;
    char refused_text[512] = "";
    for (int r = 0; r < n; r++) {
        cs_an_clock *k = &a->clocks->clk[r];
        int64_t rel = k->offset_ns - a->clocks->clk[ref].offset_ns, mag = rel < 0 ? -rel : rel;
        if (r != ref && mag > CS_ALIGN_SLACK_NS && k->residual_ns > mag && k->drift_ppm == 0) {
            size_t len = strlen(refused_text);
            if (refused++ < 8 && len < sizeof refused_text - 64)
                snprintf(refused_text + len, sizeof refused_text - len, "%s rank %d (%.3f ms, residual %.3f ms)",
                         len ? "," : "", a->ctx->rank_of[r], (double)rel / 1e6, (double)k->residual_ns / 1e6);
            k->offset_ns = a->clocks->clk[ref].offset_ns;
            k->residual_ns = -1;
            continue;
        }
        if (r != ref && (mag > CS_ALIGN_SLACK_NS || k->drift_ppm != 0)) {
            moved++;
            if (mag > most)
                most = mag;
        }
    }
    if (refused)
        cs__an_ctx_note(a->ctx, "clock offsets refused, larger unexplained than explained:%s%s", refused_text,
                        refused > 8 ? " ..." : "");
    if (keep && a->clocks->align_instances > 0)
        cs__an_ctx_note(a->ctx, "clocks kept as recorded: no collective or message contradicts them (closest: %.3f ms)",
                        worst == INT64_MIN ? 0.0 : (double)-worst / 1e6);
    else if (moved)
        cs__an_ctx_note(a->ctx,
                        "clocks of %d rank(s) moved (at most %.3f ms): %d bounds of collectives and messages "
                        "contradict the recorded times%s",
                        moved, (double)most / 1e6, nbroken,
                        gresid ? " (offsets from the collectives' common ends)" : "");
    if (a->clocks->align_instances == 0 && a->ctx->nproc > 1)
        cs__an_ctx_note(a->ctx, "no complete N-to-N collective to align clocks with: times are as recorded");
    for (int r = 0; r < n; r++)
        if (cs_store_set_alignment(a->ctx->st, a->ctx->rank_of[r], a->clocks->clk[r].offset_ns,
                                   a->clocks->clk[r].drift_ppm, a->clocks->clk[r].residual_ns) != 0) {
            snprintf(err, errlen, "%s: cannot store the clock alignment", cs_store_path(a->ctx->st));
            free(ow);
            goto outall;
        }
    free(ow);
    rc = 0;
outall:
    free(o);
    free(all.L);
    for (int r = 0; r < n; r++)
        cs_vec_free(&all.dexit[r]);
    free(all.dexit);

outm:
    free(m);
out:
    for (int k = 0; k < nwin; k++) {
        free(win[k].L);
        if (win[k].dexit)
            for (int r = 0; r < n; r++)
                cs_vec_free(&win[k].dexit[r]);
        free(win[k].dexit);
    }
    free(cr);
    cs_map_free(&done);
    free(gk.m);
    free(gk.first);
    free(gresid);
    return rc;
}
