/* failure.c: the diagnosis of a job that hung or failed, made from the
 * neutral model of failure.h whichever source filled it (the live logs,
 * an ingested trace). In this order:
 *   deadlock     a cycle of ranks waiting on each other (a receive or send
 *                waits on its peer, a collective on the members that have
 *                not entered it);
 *   mismatch     members of a communicator in different collectives (or
 *                with different roots) at the same sequence number, or a
 *                member that completed the sequence number the others wait
 *                in (the collective counts disagree);
 *   missing rank members that never entered a collective the others wait
 *                in: what each of them is doing (its call in flight, dead,
 *                exited, or outside any traced call since when);
 *   dead rank    a process gone without an exit record, and one that
 *                exited without MPI_Finalize while the others go on (post
 *                mortem: while they never finished);
 *   compute      a rank outside any traced call for longer than the limit
 *                while others wait.
 * A call counts as stuck once in flight for the limit. Ranks alike (the
 * same call, communicator, sequence number and call site) are printed as
 * one line with their ranks. */
#include "config.h"
#include "analyzer/status/failure.h"
#include "common/json.h"
#include "common/vec.h"
#include "libtrace/ops.gen.h"
#include "libtrace/span.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define FA_MAX_COMMS 65536         /* communicators of the job kept */
#define FA_MAX_COMM_SIZE (1 << 20) /* members of one */

cs_failure_rank *cs_failure_rank_add(cs_failure_model *m)
{
    if (CS_VEC_RESERVE(m->r, m->cap, m->n + 1) != 0)
        return NULL;
    cs_failure_rank *r = &m->r[m->n++];
    memset(r, 0, sizeof *r);
    r->fly.seq = r->last.seq = r->gpu.seq = -1;
    r->fly.peer = r->last.peer = r->gpu.peer = -1;
    return r;
}

cs_failure_comm *cs_failure_comm_find(const cs_failure_model *m, uint64_t id)
{
    for (size_t i = 0; i < m->nc; i++)
        if (m->c[i].id == id)
            return &m->c[i];
    return NULL;
}

cs_failure_comm *cs_failure_comm_get(cs_failure_model *m, uint64_t id, int size)
{
    cs_failure_comm *have = cs_failure_comm_find(m, id);
    if (have)
        return have;
    /* a damaged or planted source's sizes are no reason to run out of memory */
    if (size <= 0 || size > FA_MAX_COMM_SIZE || m->nc >= FA_MAX_COMMS || CS_VEC_RESERVE(m->c, m->capC, m->nc + 1) != 0)
        return NULL;
    cs_failure_comm *c = &m->c[m->nc];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->size = size;
    if (!(c->world = malloc((size_t)size * sizeof *c->world)))
        return NULL;
    for (int k = 0; k < size; k++)
        c->world[k] = -1;
    m->nc++;
    return c;
}

void cs_failure_comm_def(cs_failure_model *m, uint64_t id, int size, int how, int comm_rank, int world_rank)
{
    cs_failure_comm *c = cs_failure_comm_get(m, id, size);
    if (!c)
        return;
    if (how == CS_COMM_NCCL && !c->nth) { /* numbered as the trace's store numbers them (store_comms.c) */
        int k = 0;
        for (size_t i = 0; i < m->nc; i++)
            k += m->c[i].nth > 0;
        c->nth = k + 1;
    }
    c->how = how;
    if (comm_rank >= 0 && comm_rank < c->size)
        c->world[comm_rank] = world_rank;
}

void cs_failure_comm_named(cs_failure_model *m, uint64_t id, const char *text, size_t len)
{
    cs_failure_comm *c = cs_failure_comm_find(m, id);
    if (c)
        snprintf(c->name, sizeof c->name, "%.*s", (int)strnlen(text, len), text);
}

cs_failure_seq *cs_failure_seq_get(cs_failure_rank *r, uint64_t comm)
{
    for (size_t i = 0; i < r->nseq; i++)
        if (r->seq[i].comm == comm)
            return &r->seq[i];
    if (CS_VEC_RESERVE(r->seq, r->capSeq, r->nseq + 1) != 0)
        return NULL;
    r->seq[r->nseq] = (cs_failure_seq){ comm, -1, -1 };
    return &r->seq[r->nseq++];
}

static int fa_rank_cmp(const void *x, const void *y)
{
    const cs_failure_rank *a = x, *b = y;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

void cs_failure_sort(cs_failure_model *m)
{
    if (m->n > 1)
        qsort(m->r, m->n, sizeof *m->r, fa_rank_cmp);
}

void cs_failure_model_free(cs_failure_model *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->r[i].seq);
    free(m->r);
    for (size_t i = 0; i < m->nc; i++)
        free(m->c[i].world);
    free(m->c);
    memset(m, 0, sizeof *m);
}

cs_failure *cs_failure_add(cs_failure_list *l, const char *kind, const char *fmt, ...)
{
    if (CS_VEC_RESERVE(l->v, l->cap, l->n + 1) != 0)
        return NULL;
    cs_failure *x = &l->v[l->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->kind, sizeof x->kind, "%s", kind);
    x->seq = -1;
    x->for_s = -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->text, sizeof x->text, fmt, ap);
    va_end(ap);
    return x;
}

void cs_failure_list_free(cs_failure_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].culprits);
        free(l->v[i].waiting);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

int cs_failure_system_module(const char *mod)
{
    static const char *const skip[] = { "libc.so",    "libpthread", "libmpi",    "libcollscope",
                                        "collscope-", "libopen-",   "libpmix",   "libucp",
                                        "libuct",     "libucs",     "libfabric", "libpsm",
                                        "libhwloc",   "libevent",   "ld-linux",  NULL };
    for (int i = 0; skip[i]; i++)
        if (strstr(mod, skip[i]))
            return 1;
    return 0;
}

/* Copy n ranks into a finding's list. */
static void fa_set_ranks(int **dst, int *nd, const int *v, int n)
{
    free(*dst);
    *dst = NULL;
    *nd = 0;
    if (n <= 0 || !(*dst = malloc((size_t)n * sizeof **dst)))
        return;
    memcpy(*dst, v, (size_t)n * sizeof **dst);
    *nd = n;
}

static int fa_is_coll(int op)
{
    return op > 0 && op < CS_OP_COUNT && (cs_ops[op].kind == CS_KIND_COLL || cs_ops[op].kind == CS_KIND_ROOTED);
}

static int fa_is_p2p(int op)
{
    return op > 0 && op < CS_OP_COUNT &&
           (cs_ops[op].kind == CS_KIND_RECV || cs_ops[op].kind == CS_KIND_SEND || cs_ops[op].kind == CS_KIND_SENDRECV);
}

static const char *fa_op(int op)
{
    return op > 0 && op < CS_OP_COUNT ? cs_ops[op].name : "?";
}

const char *cs_failure_comm_name(const cs_failure_model *m, uint64_t id, char *buf, size_t len)
{
    const cs_failure_comm *c = cs_failure_comm_find(m, id);
    if (c && c->name[0])
        snprintf(buf, len, "%s", c->name);
    else if (c && c->how == CS_COMM_WORLD)
        snprintf(buf, len, "MPI_COMM_WORLD");
    else if (c && c->nth > 0)
        snprintf(buf, len, "nccl comm %d (%d ranks)", c->nth, c->size);
    else if (c)
        snprintf(buf, len, "comm:%llx (%d ranks)", (unsigned long long)id, c->size);
    else
        snprintf(buf, len, "comm:%llx", (unsigned long long)id);
    return buf;
}

static int fa_world_of(const cs_failure_model *m, uint64_t comm, int comm_rank)
{
    const cs_failure_comm *c = cs_failure_comm_find(m, comm);
    return c && comm_rank >= 0 && comm_rank < c->size ? c->world[comm_rank] : -1;
}

static double fa_since(const cs_failure_model *m, int64_t t)
{
    return (double)(m->now - t) / 1e9;
}

void cs_failure_doing(const cs_failure_model *m, const cs_failure_rank *r, char *buf, size_t len)
{
    char cn[96];
    if (r->alive == 0 && !r->closed) {
        /* gone without closing its log: killed (SIGKILL, a crash) */
        size_t n = (size_t)snprintf(buf, len, "died without an exit record (killed?)");
        if (r->has_fly && n < len)
            snprintf(buf + n, len - n, " in %s%s%s", fa_op(r->fly.op), r->fly.site[0] ? " at " : "", r->fly.site);
        else if (r->has_last && n < len)
            n += (size_t)snprintf(buf + n, len - n, "; its last call: %s%s%s", fa_op(r->last.op),
                                  r->last.site[0] ? " at " : "", r->last.site);
        if (!r->has_fly && r->sampled[0] && n < len)
            snprintf(buf + n, len - n, "; the watchdog sampled it in %s", r->sampled);
        return;
    }
    if (r->has_fly) {
        const cs_failure_call *f = &r->fly;
        int n = snprintf(buf, len, "in %s", fa_op(f->op));
        if (fa_is_p2p(f->op) && f->peer >= 0) {
            int w = f->comm ? fa_world_of(m, f->comm, f->peer) : -1;
            n += snprintf(buf + n, len - (size_t)n, " %s rank %d (tag %d)",
                          cs_ops[f->op].kind == CS_KIND_RECV ? "from" : "with", w >= 0 ? w : f->peer, f->tag);
        } else if (fa_is_coll(f->op) && f->comm) {
            n += snprintf(buf + n, len - (size_t)n, " seq %lld of %s", (long long)f->seq,
                          cs_failure_comm_name(m, f->comm, cn, sizeof cn));
        }
        n += snprintf(buf + n, len - (size_t)n, " since %.1f s", fa_since(m, f->t0));
        if (f->site[0])
            snprintf(buf + n, len - (size_t)n, " at %s", f->site);
        return;
    }
    if (r->closed) {
        snprintf(buf, len, r->finalized ? "finished" : "exited without MPI_Finalize");
        return;
    }
    int n;
    if (r->has_last)
        n = snprintf(buf, len, "outside any traced call since %.1f s (its last call: %s%s%s)", fa_since(m, r->last.t1),
                     fa_op(r->last.op), r->last.site[0] ? " at " : "", r->last.site);
    else
        n = snprintf(buf, len, "outside any traced call (none traced yet)");
    if (r->sampled[0] && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; the watchdog sampled it in %s", r->sampled);
}

void cs_failure_ranks_text(const int *v, int n, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && l + 24 < len;) {
        int k = i;
        while (k + 1 < n && v[k + 1] == v[k] + 1)
            k++;
        if (k > i + 1)
            l += (size_t)snprintf(buf + l, len - l, "%s%d-%d", l ? "," : "", v[i], v[k]);
        else if (k == i + 1)
            l += (size_t)snprintf(buf + l, len - l, "%s%d,%d", l ? "," : "", v[i], v[k]);
        else
            l += (size_t)snprintf(buf + l, len - l, "%s%d", l ? "," : "", v[i]);
        i = k + 1;
    }
}

static const cs_failure_rank *fa_find(const cs_failure_model *m, int rank)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->r[i].rank == rank)
            return &m->r[i];
    return NULL;
}

static int fa_stuck(const cs_failure_model *m, const cs_failure_rank *r, double after)
{
    return r->has_fly && fa_since(m, r->fly.t0) >= after;
}

/* " (root R)" for a rooted collective in flight, else "". */
static const char *fa_root(const cs_failure_rank *r, char *buf, size_t len)
{
    buf[0] = '\0';
    if (r->fly.op > 0 && r->fly.op < CS_OP_COUNT && cs_ops[r->fly.op].kind == CS_KIND_ROOTED)
        snprintf(buf, len, " (root %d)", r->fly.peer);
    return buf;
}

/* The call a finding is about: the op, communicator, seq and site of c. */
static void fa_set_call(const cs_failure_model *m, cs_failure *x, const cs_failure_call *c)
{
    if (!x || !c)
        return;
    snprintf(x->call, sizeof x->call, "%s", fa_op(c->op));
    if (c->comm)
        cs_failure_comm_name(m, c->comm, x->comm, sizeof x->comm);
    x->seq = fa_is_coll(c->op) ? c->seq : -1;
    snprintf(x->site, sizeof x->site, "%s", c->site);
}

/* What culprit r is in, and where, into x. */
static void fa_set_doing(cs_failure *x, const cs_failure_rank *r)
{
    if (!x || !r)
        return;
    if (r->has_fly) {
        snprintf(x->doing, sizeof x->doing, "%s", fa_op(r->fly.op));
        snprintf(x->site, sizeof x->site, "%s", r->fly.site);
    } else if (r->has_last) {
        snprintf(x->site, sizeof x->site, "%s", r->last.site);
    }
}

static int fa_member(const cs_failure_model *m, uint64_t comm, int rank)
{
    for (size_t c = 0; c < m->nc; c++)
        if (m->c[c].id == comm)
            for (int q = 0; q < m->c[c].size; q++)
                if (m->c[c].world[q] == rank)
                    return 1;
    return 0;
}

static int64_t fa_entered(const cs_failure_rank *r, uint64_t comm, int64_t *done)
{
    int64_t ent = -1, dn = -1;
    for (size_t q = 0; q < r->nseq; q++)
        if (r->seq[q].comm == comm)
            ent = r->seq[q].entered, dn = r->seq[q].completed;
    if (done)
        *done = dn;
    return ent;
}

void cs_failure_diagnose(const cs_failure_model *m, double after, cs_failure_list *o)
{
    int n = (int)m->n;
    char a[1024], b[1024], cn[96];
    size_t first_finding = o->n;
    int *v = malloc((size_t)(n ? n : 1) * sizeof *v), *w2 = malloc((size_t)(n ? n : 1) * sizeof *w2);
    int *next = malloc((size_t)(n ? n : 1) * sizeof *next);
    if (!v || !w2 || !next)
        goto out;
    /* the wait-for graph: one edge per stuck rank (the first it waits on) */
    for (int i = 0; i < n; i++) {
        next[i] = -1;
        const cs_failure_rank *r = &m->r[i];
        if (!fa_stuck(m, r, after))
            continue;
        if (fa_is_p2p(r->fly.op) && r->fly.peer >= 0) {
            int w = fa_world_of(m, r->fly.comm, r->fly.peer);
            for (int k = 0; k < n && w >= 0; k++)
                if (m->r[k].rank == w)
                    next[i] = k;
        } else if (fa_is_coll(r->fly.op) && r->fly.comm) {
            for (int k = 0; k < n && next[i] < 0; k++) {
                const cs_failure_rank *p = &m->r[k];
                if (k == i || !fa_member(m, r->fly.comm, p->rank))
                    continue;
                if (fa_entered(p, r->fly.comm, NULL) < r->fly.seq)
                    next[i] = k;
            }
        }
    }
    /* deadlock: a cycle in it */
    for (int s = 0; s < n; s++) {
        int slow = s, fast = s, steps = 0;
        while (steps++ <= n && fast >= 0 && next[fast] >= 0) {
            fast = next[next[fast]] >= 0 ? next[next[fast]] : -1;
            slow = next[slow];
            if (fast >= 0 && fast == slow)
                break;
        }
        if (fast < 0 || fast != slow || next[fast] < 0)
            continue;
        /* the cycle through slow, from its lowest rank */
        int lo = slow;
        for (int k = next[slow]; k != slow; k = next[k])
            if (m->r[k].rank < m->r[lo].rank)
                lo = k;
        size_t l = 0;
        int len = 0;
        int k = lo;
        double since = 0;
        do {
            cs_failure_doing(m, &m->r[k], b, sizeof b);
            l += (size_t)snprintf(a + l, sizeof a - l, "rank %d (%s) -> ", m->r[k].rank, b);
            v[len++] = m->r[k].rank;
            double s2 = fa_since(m, m->r[k].fly.t0);
            since = s2 > since ? s2 : since;
            k = next[k];
        } while (k != lo && l < sizeof a - 64);
        snprintf(a + l, sizeof a - l, "rank %d", m->r[lo].rank);
        cs_failure *x = cs_failure_add(o, "deadlock", "deadlock, a cycle of %d ranks: %s", len, a);
        if (x) {
            fa_set_ranks(&x->culprits, &x->nculprits, v, len);
            fa_set_call(m, x, &m->r[lo].fly);
            fa_set_doing(x, &m->r[lo]);
            x->for_s = since;
        }
        /* report each cycle once */
        int k2 = lo;
        do {
            int nx = next[k2];
            next[k2] = -1;
            k2 = nx;
        } while (k2 >= 0 && k2 != lo);
    }
    /* collectives: per (communicator, seq) of the stuck ranks */
    for (int i = 0; i < n; i++) {
        const cs_failure_rank *r = &m->r[i];
        if (!fa_stuck(m, r, after) || !fa_is_coll(r->fly.op) || !r->fly.comm)
            continue;
        int first = 1;
        for (int k = 0; k < i; k++) {
            const cs_failure_rank *p = &m->r[k];
            if (fa_stuck(m, p, after) && fa_is_coll(p->fly.op) && p->fly.comm == r->fly.comm &&
                p->fly.seq == r->fly.seq)
                first = 0;
        }
        if (!first)
            continue;
        uint64_t comm = r->fly.comm;
        int64_t seq = r->fly.seq;
        cs_failure_comm_name(m, comm, cn, sizeof cn);
        const cs_failure_comm *c = NULL;
        for (size_t q = 0; q < m->nc; q++)
            if (m->c[q].id == comm)
                c = &m->c[q];
        /* who waits in it, with which op and root */
        int nw = 0, nother = 0, nmiss = 0;
        int *miss = w2;
        double since = 0;
        for (int k = 0; k < n; k++) {
            const cs_failure_rank *p = &m->r[k];
            if (p->has_fly && fa_is_coll(p->fly.op) && p->fly.comm == comm && p->fly.seq == seq) {
                if (p->fly.op == r->fly.op && p->fly.peer == r->fly.peer) {
                    v[nw++] = p->rank;
                    double s2 = fa_since(m, p->fly.t0);
                    since = s2 > since ? s2 : since;
                } else {
                    miss[nother++] = k;
                }
            }
        }
        cs_failure_ranks_text(v, nw, a, sizeof a);
        if (nother) {
            size_t l = 0;
            char root[32];
            for (int q = 0; q < nother; q++) {
                const cs_failure_rank *p = &m->r[miss[q]];
                l += (size_t)snprintf(b + l, sizeof b - l, "%srank %d in %s%s", l ? ", " : "", p->rank,
                                      fa_op(p->fly.op), fa_root(p, root, sizeof root));
            }
            cs_failure *x =
                cs_failure_add(o, "mismatch", "mismatch at seq %lld of %s: rank%s %s in %s%s, but %s", (long long)seq,
                               cn, nw > 1 ? "s" : "", a, fa_op(r->fly.op), fa_root(r, root, sizeof root), b);
            if (x) {
                const cs_failure_rank *p0 = &m->r[miss[0]];
                for (int q = 0; q < nother; q++)
                    miss[q] = m->r[miss[q]].rank;
                fa_set_ranks(&x->culprits, &x->nculprits, miss, nother);
                fa_set_ranks(&x->waiting, &x->nwaiting, v, nw);
                fa_set_call(m, x, &p0->fly);
                fa_set_doing(x, p0);
                x->for_s = since;
            }
            continue;
        }
        for (int q = 0; c && q < c->size; q++) {
            int wr = c->world[q];
            const cs_failure_rank *p = wr >= 0 ? fa_find(m, wr) : NULL;
            int64_t done = -1, ent = p ? fa_entered(p, comm, &done) : -1;
            if (p && ent >= seq && done < seq)
                continue; /* in it */
            if (p && done >= seq) {
                cs_failure *x = cs_failure_add(o, "mismatch",
                                               "seq %lld of %s: rank %d completed it while ranks %s wait in it (%s): "
                                               "the collective counts disagree",
                                               (long long)seq, cn, wr, a, fa_op(r->fly.op));
                if (x) {
                    fa_set_ranks(&x->culprits, &x->nculprits, &wr, 1);
                    fa_set_ranks(&x->waiting, &x->nwaiting, v, nw);
                    fa_set_call(m, x, &r->fly);
                    x->site[0] = '\0';
                    fa_set_doing(x, p);
                    x->for_s = since;
                }
                continue;
            }
            miss[nmiss++] = wr;
        }
        if (!nmiss)
            continue;
        size_t l = 0;
        for (int q = 0; q < nmiss && l < sizeof b - 200; q++) {
            const cs_failure_rank *p = fa_find(m, miss[q]);
            char d[600];
            if (p)
                cs_failure_doing(m, p, d, sizeof d);
            else
                snprintf(d, sizeof d, "no log of it");
            int is = strncmp(d, "in ", 3) == 0 || strncmp(d, "outside", 7) == 0;
            l += (size_t)snprintf(b + l, sizeof b - l, "%srank %d never entered: it %s%s", q ? "; " : "", miss[q],
                                  is ? "is " : "", d);
        }
        cs_failure *x = cs_failure_add(o, "missing_rank", "seq %lld of %s (%s, %llu B): rank%s %s waiting %.1f s; %s",
                                       (long long)seq, cn, fa_op(r->fly.op), (unsigned long long)r->fly.bytes,
                                       nw > 1 ? "s" : "", a, since, b);
        if (x) {
            fa_set_ranks(&x->culprits, &x->nculprits, miss, nmiss);
            fa_set_ranks(&x->waiting, &x->nwaiting, v, nw);
            fa_set_call(m, x, &r->fly);
            x->site[0] = '\0';
            fa_set_doing(x, fa_find(m, miss[0]));
            x->for_s = since;
        }
    }
    /* dead and exited ranks while the job goes on */
    int running = 0, unfinished = 0;
    for (int i = 0; i < n; i++) {
        running += !m->r[i].closed && m->r[i].alive != 0;
        unfinished += !m->r[i].closed;
    }
    for (int i = 0; i < n; i++) {
        const cs_failure_rank *r = &m->r[i];
        cs_failure *x = NULL;
        if (!r->closed && r->alive == 0) {
            cs_failure_doing(m, r, b, sizeof b);
            x = cs_failure_add(o, "dead_rank", "rank %d (pid %d on %s) %s", r->rank, r->pid, r->host, b);
        } else if (r->closed && !r->finalized && running) {
            x = cs_failure_add(o, "dead_rank",
                               "rank %d (pid %d on %s) exited without MPI_Finalize while %d rank(s) go on", r->rank,
                               r->pid, r->host, running);
        } else if (r->closed && !r->finalized && unfinished) {
            /* post mortem: the others never finished */
            x = cs_failure_add(o, "dead_rank",
                               "rank %d (pid %d on %s) exited without MPI_Finalize; %d other rank(s) never "
                               "finished",
                               r->rank, r->pid, r->host, unfinished);
        }
        if (x) {
            fa_set_ranks(&x->culprits, &x->nculprits, &r->rank, 1);
            if (r->has_fly || r->has_last)
                fa_set_call(m, x, r->has_fly ? &r->fly : &r->last);
            fa_set_doing(x, r);
        }
    }
    /* compute: outside any call for long while others are stuck */
    int nstuck = 0;
    for (int i = 0; i < n; i++)
        nstuck += fa_stuck(m, &m->r[i], after);
    for (int i = 0; i < n && nstuck; i++) {
        const cs_failure_rank *r = &m->r[i];
        if (r->has_fly || r->closed || r->alive == 0 || !r->has_last)
            continue;
        double since = fa_since(m, r->last.t1);
        if (since < after)
            continue;
        /* named once already as a missing rank? then only when no collective names it */
        int named = 0;
        char tag[32];
        snprintf(tag, sizeof tag, "rank %d never entered", r->rank);
        for (size_t d = first_finding; d < o->n; d++)
            named |= strstr(o->v[d].text, tag) != NULL;
        if (named)
            continue;
        cs_failure_doing(m, r, b, sizeof b);
        cs_failure *x = cs_failure_add(o, "compute", "rank %d is %s while %d rank(s) wait", r->rank, b, nstuck);
        if (x) {
            fa_set_ranks(&x->culprits, &x->nculprits, &r->rank, 1);
            fa_set_call(m, x, &r->last);
            x->for_s = since;
        }
    }
    /* nccl_stall: an NCCL collective whose GPU work never completed; the
     * members whose work never started on the GPU hold the others (whose
     * work started and waits for theirs) */
    for (int i = 0; i < n; i++) {
        const cs_failure_rank *r = &m->r[i];
        int first = r->has_gpu;
        for (int k = 0; k < i && first; k++)
            first = !(m->r[k].has_gpu && m->r[k].gpu.comm == r->gpu.comm && m->r[k].gpu.seq == r->gpu.seq);
        if (!first)
            continue;
        int nc = 0, nw = 0;
        double since = fa_since(m, r->gpu.t0);
        for (int k = 0; k < n; k++) {
            const cs_failure_rank *p = &m->r[k];
            if (!p->has_gpu || p->gpu.comm != r->gpu.comm || p->gpu.seq != r->gpu.seq)
                continue;
            if (p->gpu_begun)
                w2[nw++] = p->rank;
            else
                v[nc++] = p->rank;
        }
        if (since < after)
            continue;
        char cr[512], wr[512];
        cs_failure_ranks_text(v, nc, cr, sizeof cr);
        cs_failure_ranks_text(w2, nw, wr, sizeof wr);
        cs_failure_comm_name(m, r->gpu.comm, cn, sizeof cn);
        snprintf(a, sizeof a, "seq %lld of %s (%s, %llu B): ", (long long)r->gpu.seq, cn, fa_op(r->gpu.op),
                 (unsigned long long)r->gpu.bytes);
        cs_failure *x;
        if (nc && nw)
            x = cs_failure_add(o, "nccl_stall",
                               "%s%s %s stalled: GPU work never started (the stream is stuck before it), in flight "
                               "%.1f s; %s %s waiting: GPU work started",
                               a, nc > 1 ? "ranks" : "rank", cr, since, nw > 1 ? "ranks" : "rank", wr);
        else if (nc)
            x = cs_failure_add(o, "nccl_stall",
                               "%s%s %s stalled: GPU work never started (the stream is stuck before it), in flight "
                               "%.1f s",
                               a, nc > 1 ? "ranks" : "rank", cr, since);
        else
            x = cs_failure_add(o, "nccl_stall",
                               "%s%s %s: GPU work started and never finished (a kernel stuck inside the "
                               "collective), in flight %.1f s",
                               a, nw > 1 ? "ranks" : "rank", wr, since);
        if (x) {
            fa_set_ranks(&x->culprits, &x->nculprits, nc ? v : w2, nc ? nc : nw);
            if (nc)
                fa_set_ranks(&x->waiting, &x->nwaiting, w2, nw);
            fa_set_call(m, x, &r->gpu);
            x->for_s = since;
        }
    }
out:
    free(v);
    free(w2);
    free(next);
}

void cs_failure_print_ranks(const cs_failure_model *m, FILE *f)
{
    int n = (int)m->n;
    char(*line)[700] = malloc((size_t)(n ? n : 1) * sizeof *line);
    int *done = calloc((size_t)(n ? n : 1), sizeof *done), *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    double *since = malloc((size_t)(n ? n : 1) * sizeof *since);
    if (!line || !done || !v || !since)
        goto out;
    for (int i = 0; i < n; i++) {
        cs_failure_doing(m, &m->r[i], line[i], sizeof line[i]);
        /* alike: the same words once the time ("since 4.6 s") is left out */
        since[i] = -1;
        char *p = strstr(line[i], " since ");
        if (p) {
            char *q = p + 7, *e;
            since[i] = strtod(q, &e);
            if (strncmp(e, " s", 2) == 0)
                e += 2;
            memmove(p, e, strlen(e) + 1);
        }
    }
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        int nv = 0;
        double lo = 1e300, hi = -1;
        for (int k = i; k < n; k++)
            if (!done[k] && strcmp(line[k], line[i]) == 0) {
                done[k] = 1;
                v[nv++] = m->r[k].rank;
                if (since[k] >= 0) {
                    lo = since[k] < lo ? since[k] : lo;
                    hi = since[k] > hi ? since[k] : hi;
                }
            }
        char rt[512], when[64] = "";
        cs_failure_ranks_text(v, nv, rt, sizeof rt);
        if (hi >= 0 && hi - lo >= 0.05)
            snprintf(when, sizeof when, " (for %.1f-%.1f s)", lo, hi);
        else if (hi >= 0)
            snprintf(when, sizeof when, " (for %.1f s)", hi);
        fprintf(f, "  rank%s %s: %s%s\n", nv > 1 ? "s" : "", rt, line[i], when);
    }
    /* what other sources add: a sampled stack, a GPU operation in flight */
    for (int i = 0; i < n; i++) {
        const cs_failure_rank *r = &m->r[i];
        char cn[96];
        if (r->has_gpu)
            fprintf(f, "  rank %d: GPU %s seq %lld of %s enqueued %.1f s ago, not finished\n", r->rank,
                    fa_op(r->gpu.op), (long long)r->gpu.seq, cs_failure_comm_name(m, r->gpu.comm, cn, sizeof cn),
                    fa_since(m, r->gpu.t0));
        if (r->nframes > 0) {
            fprintf(f, "  rank %d: stack (%d frame%s, sampled %.1f s ago):\n", r->rank, r->nframes,
                    r->nframes > 1 ? "s" : "", fa_since(m, r->stack_t));
            const char *p = r->stack;
            while (*p) {
                size_t l = strcspn(p, "\n");
                fprintf(f, "    %.*s\n", (int)l, p);
                p += l;
                if (*p)
                    p++;
            }
        }
    }
out:
    free(since);
    free(line);
    free(done);
    free(v);
}

static void fa_json_ranks(FILE *f, const int *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fputc(']', f);
}

void cs_failure_json(FILE *f, const cs_failure_list *l)
{
    fputc('[', f);
    for (size_t i = 0; i < l->n; i++) {
        const cs_failure *x = &l->v[i];
        fprintf(f, "%s\n  {\"kind\": ", i ? "," : "");
        cs_json_str(f, x->kind);
        fprintf(f, ", \"culprits\": ");
        fa_json_ranks(f, x->culprits, x->nculprits);
        fprintf(f, ", \"call\": ");
        cs_json_str(f, x->call);
        fprintf(f, ", \"comm\": ");
        cs_json_str(f, x->comm);
        fprintf(f, ", \"seq\": %lld, \"site\": ", (long long)x->seq);
        cs_json_str(f, x->site);
        fprintf(f, ", \"culprit_in\": ");
        cs_json_str(f, x->doing);
        fprintf(f, ", \"waiting\": ");
        fa_json_ranks(f, x->waiting, x->nwaiting);
        fprintf(f, ", \"for_s\": %.3f, \"text\": ", x->for_s);
        cs_json_str(f, x->text);
        fputc('}', f);
    }
    fputc(']', f);
}

int cs_failure_pid_alive(int pid)
{
    if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM))
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}
