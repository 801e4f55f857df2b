/* an_gpu_graph.c: the GPU graph of a job and its replay, for the slowdown
 * attribution (an_slowdown.c) of traces whose time lives on GPU streams
 * (docs/analysis.md, "Slowdown on the GPU").
 *
 * The graph: every operation that ran on a GPU (an imported kernel, copy
 * or set; an NCCL call's kernel; a traced CUDA launch's kernel), on a lane
 * per (rank, stream), in stream order. Each op waits for:
 *   - the op before it on its stream;
 *   - the op of another stream of its rank it waited for (dep): the
 *     latest end on the rank's other streams at or before its begin, when
 *     later than its stream predecessor's end (a stream-wait-event: a
 *     gradient collective waiting for the backward kernels, the optimizer
 *     waiting for the allreduce, a forward waiting for its receive; or
 *     the host's synchronisation before a launch);
 *   - for an imported compute kernel whose launch the trace has (its CUDA
 *     runtime call, table span_launch), the receive its rank's CPU
 *     launched after the previous compute kernel of its stream and before
 *     it (gg_launch_deps): the program waited for it, then launched the
 *     compute that reads it, whether or not the wait binds in the trace;
 *   - the dependencies learnt where they bind: one seen tight (within
 *     CS_GG_DEP_NS) twice or more between the same two ops (by identity:
 *     key and occurrence in the rank's step) holds wherever both ops are
 *     and the times agree (gg_edges);
 *   - the op's measured lateness beyond both (slack): the CPU launched it
 *     late (a host-bound gap, a synchronisation), kept as it was;
 *   - for communication, every member of its collective (matched across
 *     ranks by communicator and sequence number) or its p2p partner (the
 *     analysis's message pairs): it ends its transfer (its measured end
 *     after the last member began; the time before is waiting) after the
 *     last member began.
 * The replay with the measured durations, slacks and transfers gives the
 * measured times back (a first op of a lane with no dependency starts at
 * its measured begin). The ideal: each op's duration (transfer) the
 * smaller of its own and the typical one, the lower quartile
 * (CS_GG_TYPICAL_Q) of the same op over ranks and steps (its identity:
 * the same kernel name, or NCCL op, bytes and stream, at the same
 * occurrence in the rank's step); the replay is a max-plus system, so
 * the ideal is never later than the actual.
 *
 * Memory: about 335 bytes an op at the peak of the build (the op as read,
 * 112; the identities' map, about 32; the learnt pairs, edges and sort
 * keys, about 40; the launch-order edges, 4; 16 more while they are found,
 * before the peak), 140 after (gg_op 56, six int64 arrays, the identity,
 * five int arrays). */
#include "config.h"
#include "analyzer/analysis/gpu_graph.h"
#include "common/map.h"
#include "common/stats.h"
#include "common/vec.h"
#include "libtrace/ops.gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An op as read, with what only the build needs. */
typedef struct gg_ld {
    gg_op o;
    int64_t stream, launch, id, comm, seq, bytes;
    int opid, p2p;
} gg_ld;

typedef struct gg_read {
    gg *g;
    int64_t cut; /* ops launched from here on are past the replayed steps */
    gg_ld *ld;
    size_t n, cap;
    int fail;
} gg_read;

static int gg_read_cb(const cs_gpu_op_row *r, void *arg)
{
    gg_read *rd = arg;
    const cs_an_ctx *ctx = rd->g->ctx;
    int d = cs__an_ctx_ix(ctx, r->rank);
    if (d < 0)
        return 0;
    if (CS_VEC_RESERVE(rd->ld, rd->cap, rd->n + 1) != 0)
        return rd->fail = 1;
    gg_ld *x = &rd->ld[rd->n];
    memset(x, 0, sizeof *x);
    x->o.d = d;
    x->o.dep = x->o.inst = -1;
    x->o.step = -1;
    x->id = r->id;
    x->opid = r->op;
    x->comm = r->comm;
    x->seq = r->seq;
    x->bytes = r->bytes;
    if (r->op == CS_OP_compute_gpu || r->op == CS_OP_memory_gpu) {
        /* imported: its own span is the GPU's, on thread 1000 + stream */
        x->o.kind = r->op == CS_OP_compute_gpu ? GG_COMPUTE : GG_MEMORY;
        x->o.b = r->b;
        x->o.e = r->e;
        x->stream = r->tid >= 1000 ? r->tid - 1000 : r->tid;
        x->launch = r->launch; /* its CUDA runtime call's begin, where the trace has it */
        x->o.key = r->name ? r->name : (int64_t)r->op << 40 ^ r->callsite;
    } else {
        const char *kind = r->op >= 0 && r->op < ctx->nops ? ctx->ops[r->op].kind : "";
        const char *name = r->op >= 0 && r->op < ctx->nops ? ctx->ops[r->op].name : "";
        int coll = !strcmp(kind, "coll") || !strcmp(kind, "rooted");
        x->p2p = !strcmp(kind, "send") || !strcmp(kind, "recv");
        x->o.kind = coll || x->p2p                                                              ? GG_COMM
                    : !strcmp(kind, "memcpy") || strstr(name, "emcpy") || strstr(name, "emset") ? GG_MEMORY
                                                                                                : GG_COMPUTE;
        x->o.b = r->gb;
        x->o.e = r->ge;
        x->stream = r->stream;
        x->launch = r->b;
        /* communication: the op, its size and its stream (a pipeline's
         * forward and backward receives are alike but for their streams) */
        x->o.key = x->o.kind == GG_COMM ? ((int64_t)r->op << 40) ^ r->bytes ^ (r->stream * 0x9E3779B1LL)
                                        : ((int64_t)r->op << 40) ^ r->callsite;
        if (!coll)
            x->seq = -1;
    }
    x->o.key = (x->o.key << 2) ^ x->o.kind;
    if ((x->launch != INT64_MIN ? x->launch : x->o.b) >= rd->cut)
        return 0;
    if (x->o.e < x->o.b)
        x->o.e = x->o.b;
    rd->n++;
    return 0;
}

/* The CPU threads of a trace without GPU activity (an imported PyTorch
 * job on gloo: the main thread computes and enqueues, gloo's worker
 * threads run the collectives): whether some rank communicates on a lane
 * that holds none of its step markers. The CPU's graph keeps such lanes'
 * times as measured (only each rank's first lane gets ideal durations)
 * and ties them to the main thread by nothing, so it replays the slow
 * rank's compute as is and finds S 1.000 (issue 31). */
static int gg_threaded(const wf *w)
{
    if (w->a->steps->step_source != 1 || w->nb == 0)
        return 0;
    for (int l = 0; l < w->nlanes; l++) {
        if (w->lane_nmark[l])
            continue;
        int marked = 0; /* the rank has a lane with markers */
        for (int m = 0; m < w->nlanes && !marked; m++)
            marked = w->lane_rank[m] == w->lane_rank[l] && w->lane_nmark[m];
        if (!marked)
            continue;
        for (int i = w->lane_lo[l]; i < w->lane_hi[l]; i++)
            if (w->s[i].cls == WF_COLL || w->s[i].cls == WF_NBCOLL)
                return 1;
    }
    return 0;
}

/* The ops of the CPU threads (gg_threaded): every span of the what-if
 * graph but the markers, on a lane per (rank, thread); a collective's or a
 * message's span is communication (its key: op, bytes, communicator, not
 * the thread: gloo's workers take the collectives in turn), any other
 * span compute (op and call site). 0, or -1 out of memory. */
static int gg_read_cpu(const wf *w, gg_read *rd)
{
    const cs_an_ctx *ctx = rd->g->ctx;
    for (size_t i = 0; i < w->ns; i++) {
        const wf_span *s = &w->s[i];
        int d = cs__an_ctx_ix(ctx, s->rank);
        if (d < 0 || s->cls == WF_MARK || s->b >= rd->cut)
            continue;
        if (CS_VEC_RESERVE(rd->ld, rd->cap, rd->n + 1) != 0)
            return -1;
        gg_ld *x = &rd->ld[rd->n++];
        memset(x, 0, sizeof *x);
        const char *kind = s->op >= 0 && s->op < ctx->nops ? ctx->ops[s->op].kind : "";
        int coll = !strcmp(kind, "coll") || !strcmp(kind, "rooted");
        x->p2p = !strcmp(kind, "send") || !strcmp(kind, "recv");
        x->o.d = d;
        x->o.dep = x->o.inst = -1;
        x->o.step = -1;
        x->o.b = s->b;
        x->o.e = s->e > s->b ? s->e : s->b;
        x->o.kind = coll || x->p2p ? GG_COMM : GG_COMPUTE;
        x->id = s->id;
        x->opid = s->op;
        x->comm = s->comm;
        x->seq = coll ? s->seq : -1;
        x->bytes = s->bytes;
        x->stream = s->tid;
        x->launch = INT64_MIN;
        x->o.key = x->o.kind == GG_COMM ? ((int64_t)s->op << 40) ^ s->bytes ^ (s->comm * 0x9E3779B1LL)
                                        : ((int64_t)s->op << 40) ^ s->callsite;
        x->o.key = (x->o.key << 2) ^ x->o.kind;
    }
    return 0;
}

static int gg_ld_cmp(const void *p, const void *q)
{
    const gg_ld *a = p, *b = q;
    if (a->o.d != b->o.d)
        return a->o.d < b->o.d ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->o.b != b->o.b)
        return a->o.b < b->o.b ? -1 : 1;
    return a->o.e < b->o.e ? -1 : a->o.e > b->o.e;
}

/* An op by its end, within its rank. */
typedef struct gg_end {
    int64_t e;
    int i;
} gg_end;

static int gg_end_cmp(const void *p, const void *q)
{
    const gg_end *a = p, *b = q;
    return a->e < b->e ? -1 : a->e > b->e ? 1 : a->i - b->i;
}

void cs__gg_free(gg *g)
{
    free(g->op);
    free(g->xa);
    free(g->xi);
    free(g->xv);
    free(g->si);
    free(g->nw);
    free(g->bp);
    free(g->ep);
    free(g->ready);
    free(g->need);
    free(g->indeg);
    free(g->ident);
    free(g->succ_lo);
    free(g->succ);
    free(g->stack);
    free(g->ilo);
    free(g->imem);
    free(g->ibeg);
    free(g->iL);
    free(g->excess);
    free(g->owner);
    free(g->sexc);
    memset(g, 0, sizeof *g);
}

/* Each rank's step begins (mk[d * nsteps + k], INT64_MAX unknown): the
 * earliest of its boundary spans in the what-if graph. */
static int64_t *gg_marks(const wf *w, int n)
{
    int64_t *mk = malloc((size_t)n * (size_t)w->nsteps * sizeof *mk);
    if (!mk)
        return NULL;
    for (size_t i = 0; i < (size_t)n * (size_t)w->nsteps; i++)
        mk[i] = INT64_MAX;
    for (size_t j = 0; j < w->nb; j++) {
        const wf_span *x = &w->s[w->bspan[j]];
        int d = cs__an_ctx_ix(w->a->ctx, x->rank);
        if (d < 0 || w->bstep[j] >= w->nsteps)
            continue;
        int64_t *m = &mk[(size_t)d * (size_t)w->nsteps + (size_t)w->bstep[j]];
        if (x->b < *m)
            *m = x->b;
    }
    return mk;
}

/* The step of time t on rank row mk: the last begin at or before it. */
static int gg_step_of(const int64_t *mk, int nsteps, int64_t t)
{
    int k = -1;
    for (int lo = 0, hi = nsteps; lo < hi;) {
        int mid = lo + (hi - lo) / 2;
        if (mk[mid] != INT64_MAX && mk[mid] <= t) {
            k = mid;
            lo = mid + 1;
        } else
            hi = mid;
    }
    return k;
}

/* Collectives by (comm, seq); p2p pairs by the analysis's messages. */
static int gg_instances(gg *g, gg_ld *ld, const cs_an_msgs *msgs)
{
    cs_map coll = { 0 }, p2p = { 0 };
    int *inst = malloc((g->n + 1) * sizeof *inst);
    int rc = -1, ni = 0;
    if (!inst)
        goto out;
    for (size_t i = 0; i < g->n; i++) {
        inst[i] = -1;
        const gg_ld *x = &ld[i];
        if (x->o.kind != GG_COMM)
            continue;
        if (x->p2p) {
            if (cs_map_put(&p2p, (uint64_t)x->id, (int64_t)i) != 0)
                goto out;
            continue;
        }
        if (x->seq < 0 || x->comm == 0)
            continue;
        uint64_t key = ((uint64_t)x->comm * 0x100000001B3ULL) ^ (uint64_t)x->seq;
        int64_t k;
        if (!cs_map_get(&coll, key, &k)) {
            k = ni++;
            if (cs_map_put(&coll, key, k) != 0)
                goto out;
        }
        inst[i] = (int)k;
    }
    if (p2p.n && msgs) {
        cs_msg_iter it;
        if (cs__an_msgs_begin(msgs, &it) != 0)
            goto out;
        for (const cs_msg *m; (m = cs__an_msgs_next(&it));) {
            int64_t s, r;
            if (cs_map_get(&p2p, (uint64_t)m->send_span, &s) && cs_map_get(&p2p, (uint64_t)m->recv_span, &r) &&
                inst[s] < 0 && inst[r] < 0 && s != r) {
                inst[s] = inst[r] = ni++;
            }
        }
        if (cs__an_msgs_end(&it) != 0)
            goto out;
    }
    /* members (CSR) */
    g->ilo = calloc((size_t)ni + 1, sizeof *g->ilo);
    g->imem = malloc((g->n + 1) * sizeof *g->imem);
    g->ibeg = calloc((size_t)ni + 1, sizeof *g->ibeg);
    g->iL = malloc(((size_t)ni + 1) * sizeof *g->iL);
    if (!g->ilo || !g->imem || !g->ibeg || !g->iL)
        goto out;
    for (size_t i = 0; i < g->n; i++)
        if (inst[i] >= 0)
            g->ilo[inst[i] + 1]++;
    for (int k = 0; k < ni; k++)
        g->ilo[k + 1] += g->ilo[k];
    for (size_t i = 0; i < g->n; i++)
        if (inst[i] >= 0)
            g->imem[g->ilo[inst[i]] + g->ibeg[inst[i]]++] = (int)i;
    /* the transfer: after the last member began; an instance with one
     * member, or one that ended before its last member began (it did not
     * wait for it), is local */
    for (int k = 0; k < ni; k++) {
        int lo = g->ilo[k], hi = g->ilo[k + 1];
        int64_t L = INT64_MIN;
        for (int q = lo; q < hi; q++)
            L = ld[g->imem[q]].o.b > L ? ld[g->imem[q]].o.b : L;
        int ok = hi - lo >= 2;
        for (int q = lo; q < hi && ok; q++)
            ok = ld[g->imem[q]].o.e >= L || (g->nw && g->nw[g->imem[q]]);
        for (int q = lo; q < hi; q++) {
            int i = g->imem[q];
            g->op[i].inst = ok ? k : -1;
            g->xa[i] = ok && !(g->nw && g->nw[i]) ? ld[i].o.e - L : ld[i].o.e - ld[i].o.b;
        }
    }
    for (size_t i = 0; i < g->n; i++)
        g->ncomm += g->op[i].inst >= 0;
    g->ninst = ni;
    rc = 0;
out:
    free(inst);
    cs_map_free(&coll);
    cs_map_free(&p2p);
    return rc;
}

/* Each op's dependency across streams from the times: the latest end on
 * its rank's other streams at or before its begin, later than its stream
 * predecessor's end. */
static int gg_deps(gg *g)
{
    gg_end *byend = malloc((g->n + 1) * sizeof *byend);
    if (!byend)
        return -1;
    for (size_t a = 0; a < g->n;) {
        size_t z = a;
        while (z < g->n && g->op[z].d == g->op[a].d)
            z++;
        for (size_t i = a; i < z; i++)
            byend[i] = (gg_end){ g->op[i].e, (int)i };
        qsort(byend + a, z - a, sizeof *byend, gg_end_cmp);
        for (size_t i = a; i < z; i++) {
            gg_op *x = &g->op[i];
            int first = i == a || g->op[i - 1].lane != x->lane;
            /* the last end at or before x's begin */
            size_t lo = a, hi = z;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (byend[mid].e <= x->b)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            int64_t r = first ? INT64_MIN : g->op[i - 1].e;
            for (size_t q = lo; q > a && lo - q < 16; q--) {
                const gg_op *y = &g->op[byend[q - 1].i];
                if (y->e <= r)
                    break;
                if (y->lane != x->lane) {
                    x->dep = byend[q - 1].i;
                    g->ndeps++;
                    g->ntight += x->b - y->e <= CS_GG_DEP_NS;
                    break;
                }
            }
        }
        a = z;
    }
    free(byend);
    return 0;
}

/* Each op's identity: its key and its occurrence among the ops of that
 * key in its rank's step (0: no step). */
typedef struct gg_id {
    int64_t key, b;
    int d, step, i;
} gg_id;

static int gg_id_cmp(const void *p, const void *q)
{
    const gg_id *a = p, *b = q;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

static uint64_t gg_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static int gg_idents(gg *g)
{
    gg_id *k = malloc((g->n + 1) * sizeof *k);
    if (!k)
        return -1;
    size_t nk = 0;
    for (size_t i = 0; i < g->n; i++) {
        g->ident[i] = 0;
        if (g->op[i].step >= 0)
            k[nk++] = (gg_id){ g->op[i].key, g->op[i].b, g->op[i].d, g->op[i].step, (int)i };
    }
    qsort(k, nk, sizeof *k, gg_id_cmp);
    int occ = 0;
    for (size_t j = 0; j < nk; j++) {
        occ = j && k[j - 1].key == k[j].key && k[j - 1].d == k[j].d && k[j - 1].step == k[j].step ? occ + 1 : 0;
        uint64_t h = gg_mix(gg_mix(0x51ed27, (uint64_t)k[j].key), (uint64_t)occ);
        g->ident[k[j].i] = h ? h : 1;
    }
    free(k);
    return 0;
}

/* A dependency learnt from where it binds: (the op's identity, its
 * dependency's). */
typedef struct gg_pair {
    uint64_t a, b;
} gg_pair;

static int gg_pair_cmp(const void *p, const void *q)
{
    const gg_pair *x = p, *y = q;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

/* Room for edge ne in (ef, et). 0, or -1 out of memory. */
static int gg_edge_room(int **ef, int **et, size_t *cap, size_t ne)
{
    if (ne < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 1024;
    int *f = realloc(*ef, c * sizeof *f);
    if (!f)
        return -1;
    *ef = f;
    int *t = realloc(*et, c * sizeof *t);
    if (!t)
        return -1;
    *et = t;
    *cap = c;
    return 0;
}

static uint64_t gg_slot(int d, int step, uint64_t ident)
{
    return gg_mix(gg_mix(ident, (uint64_t)(uint32_t)d), (uint64_t)(uint32_t)step);
}

/* The edges across streams: each op's own dependency, and those that
 * bind elsewhere: a dependency seen tight (its op began within
 * CS_GG_DEP_NS of its end) at least twice, between the same two ops (by
 * identity) of a rank's step, holds on every rank and step that has both
 * ops, where it is consistent with the times (the dependency ended before
 * the op began). A slow stage's backward never waits for its receive (the
 * gradient is there long before): without the others' dependency the
 * ideal lets it run before its gradient came. Then each op's slack and
 * the successors (CSR). */
static int gg_edges(gg *g, const int *ldep)
{
    int rc = -1;
    size_t np = 0, ne = 0, cape = 0;
    gg_pair *pr = malloc(((size_t)g->ndeps + 1) * sizeof *pr);
    int *ef = NULL, *et = NULL, *fill = NULL;
    cs_map slot = { 0 };
    if (!pr)
        goto out;
    for (size_t i = 0; i < g->n; i++) {
        const gg_op *x = &g->op[i];
        if (x->dep >= 0 && x->b - g->op[x->dep].e <= CS_GG_DEP_NS && g->ident[i] && g->ident[x->dep] &&
            g->op[x->dep].step == x->step)
            pr[np++] = (gg_pair){ g->ident[i], g->ident[x->dep] };
    }
    qsort(pr, np, sizeof *pr, gg_pair_cmp);
    size_t nk = 0; /* those seen twice or more, once each */
    for (size_t j = 0; j < np;) {
        size_t z = j + 1;
        while (z < np && pr[z].a == pr[j].a && pr[z].b == pr[j].b)
            z++;
        if (z - j >= 2)
            pr[nk++] = pr[j];
        j = z;
    }
    for (size_t i = 0; i < g->n; i++)
        if (g->ident[i] && cs_map_put(&slot, gg_slot(g->op[i].d, g->op[i].step, g->ident[i]), (int64_t)i) != 0)
            goto out;
    for (size_t i = 0; i < g->n; i++) {
        const gg_op *x = &g->op[i];
        if (x->dep >= 0) {
            if (gg_edge_room(&ef, &et, &cape, ne) != 0)
                goto out;
            ef[ne] = x->dep;
            et[ne++] = (int)i;
        }
        if (ldep && ldep[i] >= 0 && ldep[i] != x->dep) {
            if (gg_edge_room(&ef, &et, &cape, ne) != 0)
                goto out;
            ef[ne] = ldep[i];
            et[ne++] = (int)i;
        }
        if (!g->ident[i] || !nk)
            continue;
        size_t lo = 0, hi = nk;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (pr[mid].a < g->ident[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t q = lo; q < nk && pr[q].a == g->ident[i]; q++) {
            int64_t j;
            if (!cs_map_get(&slot, gg_slot(x->d, x->step, pr[q].b), &j) || j == x->dep || (size_t)j == i)
                continue;
            const gg_op *y = &g->op[j];
            if (g->ident[j] != pr[q].b || y->d != x->d || y->step != x->step || y->lane == x->lane || y->e > x->b)
                continue;
            if (gg_edge_room(&ef, &et, &cape, ne) != 0)
                goto out;
            ef[ne] = (int)j;
            et[ne++] = (int)i;
            g->nlearnt++;
        }
    }
    /* slack: the begin after the latest of the stream predecessor's and
     * the dependencies' ends */
    for (size_t i = 0; i < g->n; i++) {
        int first = i == 0 || g->op[i - 1].lane != g->op[i].lane;
        g->ready[i] = first ? INT64_MIN : g->op[i - 1].e;
        g->indeg[i] = 0;
    }
    for (size_t q = 0; q < ne; q++) {
        if (g->op[ef[q]].e > g->ready[et[q]])
            g->ready[et[q]] = g->op[ef[q]].e;
        g->indeg[et[q]]++;
    }
    for (size_t i = 0; i < g->n; i++) {
        int64_t r = g->ready[i];
        g->op[i].slack = r == INT64_MIN || g->op[i].b < r ? 0 : g->op[i].b - r;
    }
    g->succ_lo = calloc(g->n + 2, sizeof *g->succ_lo);
    g->succ = malloc((ne + 1) * sizeof *g->succ);
    fill = calloc(g->n + 1, sizeof *fill);
    if (!g->succ_lo || !g->succ || !fill)
        goto out;
    for (size_t q = 0; q < ne; q++)
        g->succ_lo[ef[q] + 1]++;
    for (size_t i = 0; i < g->n; i++)
        g->succ_lo[i + 1] += g->succ_lo[i];
    for (size_t q = 0; q < ne; q++)
        g->succ[g->succ_lo[ef[q]] + fill[ef[q]]++] = et[q];
    rc = 0;
out:
    free(pr);
    free(ef);
    free(et);
    free(fill);
    cs_map_free(&slot);
    return rc;
}

/* A receive's launch order (where the trace has the launches: an
 * imported kernel's CUDA runtime call, an NCCL call's CPU begin): a
 * compute kernel waits for the receive launched on its rank's CPU after
 * the previous compute kernel of its stream and before it (the program
 * waited for the receive, then launched the compute that reads it), the
 * latest one to end, where the times agree (it ended before the kernel
 * began). A dependency that never binds in the trace (a slow first
 * stage's backward has its gradient long before it runs) still holds in
 * the ideal. Into ldep[n] (-1 none); 0, or -1 out of memory. */
static int gg_launch_deps(gg *g, const gg_ld *ld, int *ldep)
{
    gg_end *rv = malloc((g->n + 1) * sizeof *rv); /* the receives by launch, within their rank */
    if (!rv)
        return -1;
    const cs_an_ctx *ctx = g->ctx;
    for (size_t a = 0; a < g->n;) {
        size_t z = a, nr = 0;
        while (z < g->n && g->op[z].d == g->op[a].d)
            z++;
        for (size_t i = a; i < z; i++) {
            ldep[i] = -1;
            int op = ld[i].opid;
            if (ld[i].p2p && ld[i].launch != INT64_MIN && op >= 0 && op < ctx->nops &&
                !strcmp(ctx->ops[op].kind, "recv"))
                rv[nr++] = (gg_end){ ld[i].launch, (int)i };
        }
        qsort(rv, nr, sizeof *rv, gg_end_cmp);
        int64_t prev = INT64_MIN; /* the launch of the previous compute kernel on the lane */
        for (size_t i = a; i < z; i++) {
            const gg_op *x = &g->op[i];
            if (i == a || g->op[i - 1].lane != x->lane)
                prev = INT64_MIN;
            if (x->kind != GG_COMPUTE || ld[i].launch == INT64_MIN || ld[i].opid != CS_OP_compute_gpu)
                continue;
            size_t lo = 0, hi = nr; /* the first receive launched after prev */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (rv[mid].e <= prev)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            int best = -1;
            for (size_t q = lo; q < nr && rv[q].e < ld[i].launch; q++) {
                const gg_op *y = &g->op[rv[q].i];
                if (y->e <= x->b && (best < 0 || y->e > g->op[best].e))
                    best = rv[q].i;
            }
            ldep[i] = best;
            g->nlaunch += best >= 0;
            prev = ld[i].launch;
        }
        a = z;
    }
    free(rv);
    return 0;
}

/* The ideal: the typical value of each set of ops of one identity (two
 * ops or more), never above the op's own; each rank's own excess, in all
 * and per step. */
static int gg_ideal(gg *g)
{
    gg_pair *k = malloc((g->n + 1) * sizeof *k);
    int64_t *med = malloc((g->n + 1) * sizeof *med);
    if (!k || !med) {
        free(k);
        free(med);
        return -1;
    }
    size_t nk = 0;
    for (size_t i = 0; i < g->n; i++) {
        g->xi[i] = g->xa[i];
        if (g->si)
            g->si[i] = g->op[i].slack;
        /* on the CPU threads a transfer keeps its own: gloo's is CPU work
         * whose length moves with the ranks' turns on shared cores (their
         * median made a clean job's ideal step 35 % shorter than its own) */
        if (g->ident[i] && !(g->cpu && g->op[i].kind == GG_COMM))
            k[nk++] = (gg_pair){ g->ident[i], i };
    }
    qsort(k, nk, sizeof *k, gg_pair_cmp);
    for (size_t a = 0; a < nk;) {
        size_t z = a + 1;
        while (z < nk && k[z].a == k[a].a)
            z++;
        if (z - a >= 2) {
            for (size_t q = a; q < z; q++)
                med[q - a] = g->xa[k[q].b];
            qsort(med, z - a, sizeof *med, cs_stats_cmp_i64);
            int64_t m = cs_stats_quantile(med, z - a, g->cpu ? CS_GG_CPU_Q : CS_GG_TYPICAL_Q);
            for (size_t q = a; q < z; q++)
                if (m < g->xa[k[q].b] || g->cpu)
                    g->xi[k[q].b] = m;
        }
        a = z;
    }
    /* the CPU threads: the slack is the host's compute between traced
     * ops (a sleep outside any op, the framework's own work), which the
     * CPU's graph makes ideal as the gap before a call */
    if (g->si) {
        for (size_t a = 0; a < nk;) {
            size_t z = a + 1;
            while (z < nk && k[z].a == k[a].a)
                z++;
            int64_t m = INT64_MAX;
            if (z - a >= 2) {
                for (size_t q = a; q < z; q++)
                    med[q - a] = g->op[k[q].b].slack;
                qsort(med, z - a, sizeof *med, cs_stats_cmp_i64);
                m = cs_stats_quantile(med, z - a, CS_GG_CPU_Q);
            }
            for (size_t q = a; q < z; q++)
                g->si[k[q].b] = m != INT64_MAX ? m : g->op[k[q].b].slack;
            a = z;
        }
    }
    free(k);
    free(med);
    /* a transfer's excess is its instance's: its owner is the member
     * whose transfers are slow the most in all (a slow link: the rank on
     * every slow collective and pair), the lowest rank on a tie */
    int n = g->ctx->ndense;
    int64_t *score = calloc((size_t)n, sizeof *score);
    if (!score)
        return -1;
    for (size_t i = 0; i < g->n; i++)
        if (g->op[i].inst >= 0)
            score[g->op[i].d] += g->xa[i] - g->xi[i];
    for (int q = 0; q < g->ninst; q++) {
        int own = -1;
        for (int m = g->ilo[q]; m < g->ilo[q + 1]; m++) {
            int d = g->op[g->imem[m]].d;
            if (own < 0 || score[d] > score[own] || (score[d] == score[own] && d < own))
                own = d;
        }
        for (int m = g->ilo[q]; m < g->ilo[q + 1]; m++)
            g->owner[g->imem[m]] = own;
    }
    free(score);
    for (size_t i = 0; i < g->n; i++) {
        int64_t ex = g->xa[i] - g->xi[i];
        const gg_op *x = &g->op[i];
        int d = g->owner[i];
        g->excess[d] += ex;
        if (x->step >= 0 && ex > 0)
            g->sexc[(size_t)d * (size_t)g->nsteps + (size_t)x->step] += ex;
        int64_t es = g->si ? x->slack - g->si[i] : 0; /* the op's own rank's compute */
        g->excess[x->d] += es;
        if (x->step >= 0 && es > 0)
            g->sexc[(size_t)x->d * (size_t)g->nsteps + (size_t)x->step] += es;
    }
    return 0;
}

int cs__gg_build(wf *w, gg *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->ctx = w->a->ctx;
    g->nsteps = w->nsteps;
    int n = g->ctx->ndense;
    if (g->nsteps < 3 || n < 2)
        return 0;
    /* a large trace: the steps the what-if graph holds (CS_WF_BUDGET_SPANS) */
    const cs_an_steps *st = w->a->steps;
    gg_read rd = { g, INT64_MAX, NULL, 0, 0, 0 };
    if (w->maxsteps > 0 && st->step_begin && w->maxsteps < st->nsteps)
        rd.cut = st->step_begin[w->maxsteps];
    if (cs_store_gpu_ops(g->ctx->st, CS_OP_compute_gpu, CS_OP_memory_gpu, gg_read_cb, &rd) != 0 || rd.fail) {
        free(rd.ld);
        snprintf(err, errlen, "%s: cannot read the GPU spans%s", cs_store_path(g->ctx->st),
                 rd.fail ? " (out of memory)" : "");
        return -1;
    }
    size_t nkern = 0;
    for (size_t i = 0; i < rd.n; i++)
        nkern += rd.ld[i].o.kind != GG_COMM;
    if (rd.n == 0 && gg_threaded(w)) { /* no GPU at all, communication on threads: theirs */
        g->cpu = 1;
        if (gg_read_cpu(w, &rd) != 0) {
            free(rd.ld);
            snprintf(err, errlen, "out of memory (the graph of the CPU threads)");
            return -1;
        }
        nkern = rd.n;
    }
    if (nkern == 0 || rd.n < 2) { /* no kernels: the CPU's graph */
        free(rd.ld);
        g->cpu = 0;
        return 0;
    }
    qsort(rd.ld, rd.n, sizeof *rd.ld, gg_ld_cmp);
    /* a CPU thread's spans overlap where an op's annotation outlives the
     * next op's begin (gloo's send, open while the receive begins): the
     * earlier one ends where the next begins, so that the thread's ops
     * replay in turn and the replay gives the measured times back */
    for (size_t i = 0; g->cpu && i + 1 < rd.n; i++)
        if (rd.ld[i].o.d == rd.ld[i + 1].o.d && rd.ld[i].stream == rd.ld[i + 1].stream &&
            rd.ld[i].o.e > rd.ld[i + 1].o.b)
            rd.ld[i].o.e = rd.ld[i + 1].o.b > rd.ld[i].o.b ? rd.ld[i + 1].o.b : rd.ld[i].o.b;
    g->n = rd.n;
    size_t N = g->n + 1;
    g->op = malloc(N * sizeof *g->op);
    g->xa = malloc(N * sizeof *g->xa);
    g->xi = malloc(N * sizeof *g->xi);
    g->xv = malloc(N * sizeof *g->xv);
    g->si = g->cpu ? malloc(N * sizeof *g->si) : NULL;
    g->nw = g->cpu ? malloc(N * sizeof *g->nw) : NULL;
    g->bp = malloc(N * sizeof *g->bp);
    g->ep = malloc(N * sizeof *g->ep);
    g->ready = malloc(N * sizeof *g->ready);
    g->need = malloc(N * sizeof *g->need);
    g->indeg = malloc(N * sizeof *g->indeg);
    g->ident = malloc(N * sizeof *g->ident);
    g->stack = malloc(N * sizeof *g->stack);
    g->excess = calloc((size_t)n, sizeof *g->excess);
    g->owner = malloc(N * sizeof *g->owner);
    g->sexc = calloc((size_t)n * (size_t)g->nsteps, sizeof *g->sexc);
    int64_t *mk = gg_marks(w, n);
    int *ldep = NULL;
    int rc = -1;
    if (!g->op || !g->xa || !g->xi || !g->xv || !g->bp || !g->ep || !g->ready || !g->need || !g->indeg || !g->ident ||
        !g->stack || !g->excess || !g->sexc || !g->owner || !mk || (g->cpu && (!g->si || !g->nw)))
        goto oom;
    /* lanes, steps (the launch's where known; never before the previous
     * op's on the stream) */
    int lane = -1;
    for (size_t i = 0; i < g->n; i++) {
        gg_ld *x = &rd.ld[i];
        int newlane = i == 0 || x->o.d != rd.ld[i - 1].o.d || x->stream != rd.ld[i - 1].stream;
        lane += newlane;
        x->o.lane = lane;
        int64_t t = x->launch != INT64_MIN ? x->launch : x->o.b;
        x->o.step = gg_step_of(&mk[(size_t)x->o.d * (size_t)g->nsteps], g->nsteps, t);
        if (!newlane && x->o.step < rd.ld[i - 1].o.step)
            x->o.step = rd.ld[i - 1].o.step;
        g->op[i] = x->o;
        g->xa[i] = x->o.e - x->o.b;
        g->owner[i] = x->o.d;
        if (g->nw) /* a CPU thread's send (gloo's isend) returns at once; its receive waits for it */
            g->nw[i] = x->p2p && x->opid >= 0 && x->opid < g->ctx->nops && !strcmp(g->ctx->ops[x->opid].kind, "send");
    }
    ldep = malloc(N * sizeof *ldep);
    if (!ldep || gg_instances(g, rd.ld, w->a->msgs) != 0 || gg_idents(g) != 0 || gg_deps(g) != 0 ||
        gg_launch_deps(g, rd.ld, ldep) != 0 || gg_edges(g, ldep) != 0 || gg_ideal(g) != 0)
        goto oom;
    g->nlocal = (int)(g->n - (size_t)g->ncomm);
    rc = 1;
oom:
    free(mk);
    free(ldep);
    free(rd.ld);
    if (rc < 0) {
        cs__gg_free(g);
        snprintf(err, errlen, "out of memory (the GPU graph of %zu ops)", rd.n);
    }
    return rc;
}

/* Op i ended at ep[i]: its successors may begin. */
static void gg_done(gg *g, int i, int *top)
{
    int64_t e = g->ep[i];
    if ((size_t)i + 1 < g->n && g->op[i + 1].lane == g->op[i].lane) {
        int s = i + 1;
        if (e > g->ready[s])
            g->ready[s] = e;
        if (--g->need[s] == 0)
            g->stack[(*top)++] = s;
    }
    for (int q = g->succ_lo[i]; q < g->succ_lo[i + 1]; q++) {
        int s = g->succ[q];
        if (e > g->ready[s])
            g->ready[s] = e;
        if (--g->need[s] == 0)
            g->stack[(*top)++] = s;
    }
}

/* Each step's begin: the first step's earliest op begin; a later one's,
 * the previous step's latest op end (the step ends when its last rank's
 * GPU work does, as a step ends when the last rank returns from its
 * synchronisation; the earliest begin made a step after a slow one look
 * long: the ranks that did not wait for the slow one began early).
 * INT64_MAX: none. */
static void gg_step_begins(const gg *g, const int64_t *b, const int64_t *e, int64_t *stepb)
{
    for (int k = 0; k < g->nsteps; k++)
        stepb[k] = k ? INT64_MIN : INT64_MAX;
    for (size_t i = 0; i < g->n; i++) {
        int k = g->op[i].step;
        if (k == 0 && b[i] < stepb[0])
            stepb[0] = b[i];
        if (k >= 0 && k + 1 < g->nsteps && e[i] > stepb[k + 1])
            stepb[k + 1] = e[i];
    }
    for (int k = 1; k < g->nsteps; k++)
        if (stepb[k] == INT64_MIN)
            stepb[k] = INT64_MAX;
}

/* The median step: between consecutive steps' begins, and the last step
 * up to the latest end of its ops (e: the ends; the CPU's graph leaves
 * the last step out, which moves the median of a few steps where two are
 * slow: the simulator's transient fault) */
static int64_t gg_median(const gg *g, const int64_t *stepb, const int64_t *e, int64_t *buf)
{
    size_t m = 0;
    for (int k = 0; k + 1 < g->nsteps; k++)
        if (stepb[k] != INT64_MAX && stepb[k + 1] != INT64_MAX)
            buf[m++] = stepb[k + 1] - stepb[k];
    int64_t last = INT64_MIN;
    for (size_t i = 0; i < g->n; i++)
        if (g->op[i].step == g->nsteps - 1 && e[i] > last)
            last = e[i];
    if (g->nsteps > 0 && stepb[g->nsteps - 1] != INT64_MAX && last > stepb[g->nsteps - 1])
        buf[m++] = last - stepb[g->nsteps - 1];
    return m ? cs_stats_median_i64(buf, m) : -1;
}

int64_t cs__gg_measured(gg *g, int64_t *buf)
{
    for (size_t i = 0; i < g->n; i++) {
        g->bp[i] = g->op[i].b;
        g->ep[i] = g->op[i].e;
    }
    gg_step_begins(g, g->bp, g->ep, buf);
    int64_t *tmp = malloc(((size_t)g->nsteps + 1) * sizeof *tmp);
    if (!tmp)
        return -1;
    int64_t t = gg_median(g, buf, g->ep, tmp);
    free(tmp);
    return t;
}

int64_t cs__gg_replay(gg *g, const unsigned char *on, int comp, int comm, int64_t *stepb, int64_t *buf)
{
    size_t n = g->n;
    int top = 0;
    for (size_t i = 0; i < n; i++) {
        const gg_op *x = &g->op[i];
        int act = on[g->owner[i]] && (x->inst >= 0 || x->kind == GG_COMM ? comm : comp);
        g->xv[i] = act ? g->xa[i] : g->xi[i];
        int first = i == 0 || g->op[i - 1].lane != x->lane;
        g->need[i] = !first + g->indeg[i];
        g->ready[i] = first && !g->indeg[i] ? x->b : INT64_MIN;
        if (!g->need[i])
            g->stack[top++] = (int)i;
    }
    for (int k = 0; k < g->ninst; k++) {
        g->ibeg[k] = 0;
        g->iL[k] = INT64_MIN;
    }
    size_t done = 0;
    while (top > 0) {
        int i = g->stack[--top];
        const gg_op *x = &g->op[i];
        g->bp[i] = g->ready[i] + (g->si && !(on[x->d] && comp) ? g->si[i] : x->slack);
        done++;
        if (x->inst < 0) {
            g->ep[i] = g->bp[i] + g->xv[i];
            gg_done(g, i, &top);
            continue;
        }
        int k = x->inst;
        if (g->bp[i] > g->iL[k])
            g->iL[k] = g->bp[i];
        if (g->nw && g->nw[i]) { /* a send: its receive waits for its begin, it for nothing */
            g->ep[i] = g->bp[i] + g->xv[i];
            gg_done(g, i, &top);
        }
        if (++g->ibeg[k] < g->ilo[k + 1] - g->ilo[k])
            continue;
        for (int q = g->ilo[k]; q < g->ilo[k + 1]; q++) {
            int m = g->imem[q];
            if (!(g->nw && g->nw[m]))
                g->ep[m] = g->iL[k] + g->xv[m];
        }
        for (int q = g->ilo[k]; q < g->ilo[k + 1]; q++)
            if (!(g->nw && g->nw[g->imem[q]]))
                gg_done(g, g->imem[q], &top);
    }
    if (done != n)
        return -1; /* a deadlock: an inconsistent trace */
    gg_step_begins(g, g->bp, g->ep, stepb);
    return gg_median(g, stepb, g->ep, buf);
}
