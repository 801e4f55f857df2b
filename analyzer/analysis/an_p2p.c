/* an_p2p.c: point-to-point messages paired by communicator, source,
 * destination, tag and order (MPI's non-overtaking rule), with their wait
 * states: late sender (the receive waited for the send to start), late
 * receiver (the send waited for the receive), and transfer (the time the
 * message took once both sides were there, as the receive side saw it; for
 * a receive completed by a Wait*, bounded by the sender's time in its call,
 * so a Waitall that also waited for other messages is not charged for
 * them).
 *
 * The operations come from one scan of the store in storage order (no SQL
 * sort), which also collects the step markers (raw times; cs__an_match_steps
 * aligns and orders them); they are paired once, before the clock alignment, which uses the
 * pairs as constraints (a receive ends after its send began), and written
 * after it with the aligned times. Memory: one small record per message. */
#include "config.h"
#include "analyzer/analysis/analysis.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* What this pass reads and writes (analysis.h). */
typedef struct cs_p2p_io {
    cs_an_ctx *ctx;
    const cs_an_clocks *clocks;
    const cs_an_steps *steps;
    const cs_an_msgs *msgs;
    cs_an_links *links;
} cs_p2p_io;

/* One end of a message, while collecting. */
typedef struct cs_end {
    int64_t comm;
    int src, dst, tag, side; /* side 0 send, 1 receive */
    int nonblocking;
    int64_t span, b, e;
} cs_end;

/* Communicator members: (comm, comm_rank) -> world rank, sorted. */
typedef struct cs_member_ix {
    int64_t comm;
    int comm_rank, rank;
} cs_member_ix;

/* The ends of the messages to one share of the ranks, while collecting. */
typedef struct cs_ends {
    cs_end *a;
    size_t n, cap;
} cs_ends;

/* A raw step marker of the rank of index d. */
typedef struct cs_mark {
    int64_t d, t;
} cs_mark;

typedef struct cs_collect {
    cs_p2p_io *a;
    cs_an_steps *marks; /* the raw step markers of each rank go here, */
    cs_mark *mk;        /* or, when marks is NULL, here */
    size_t nmk, capmk;
    cs_member_ix *mem;
    size_t nmem, capmem;
    int nshares; /* ends[nshares]: by the run of ranks of their destination */
    cs_ends *ends;
    int fail;
} cs_collect;

static int cs_member_cmp(const void *x, const void *y)
{
    const cs_member_ix *p = x, *q = y;
    if (p->comm != q->comm)
        return p->comm < q->comm ? -1 : 1;
    return (p->comm_rank > q->comm_rank) - (p->comm_rank < q->comm_rank);
}

static int cs_member_cb(const cs_comm_member *m, void *arg)
{
    cs_collect *c = arg;
    if (CS_VEC_RESERVE(c->mem, c->capmem, c->nmem + 1) != 0)
        return c->fail = 1;
    c->mem[c->nmem++] = (cs_member_ix){ m->comm, m->comm_rank, m->rank };
    return 0;
}

/* World rank of comm_rank in comm; -1 when unknown. */
static int cs_world_rank(const cs_collect *c, int64_t comm, int comm_rank)
{
    if (comm_rank < 0 || c->nmem == 0) /* no member known (bsearch takes no NULL array) */
        return -1;
    cs_member_ix key = { comm, comm_rank, 0 };
    const cs_member_ix *m = bsearch(&key, c->mem, c->nmem, sizeof *c->mem, cs_member_cmp);
    return m ? m->rank : -1;
}

/* The share of the ranks (of c->nshares runs of the ranks present) that
 * pairs the messages to rank dst; ranks not present: the first. */
static int cs_end_owner(const cs_collect *c, int dst)
{
    int d = c->nshares > 1 ? cs__an_ctx_ix(c->a->ctx, dst) : -1;
    return d < 0 ? 0 : (int)((int64_t)d * c->nshares / c->a->ctx->ndense);
}

static int cs_push_end(cs_collect *c, const cs_end *e)
{
    cs_ends *v = &c->ends[cs_end_owner(c, e->dst)];
    if (CS_VEC_RESERVE(v->a, v->cap, v->n + 1) != 0)
        return -1;
    v->a[v->n++] = *e;
    return 0;
}

static int cs_op_cb(const cs_p2p_op *op, void *arg)
{
    cs_collect *c = arg;
    if (op->kind == 3) { /* a step marker, raw: aligned by cs__an_match_steps */
        int d = cs__an_ctx_ix(c->a->ctx, op->rank);
        if (d < 0)
            return 0;
        if (c->marks && cs_vec_push(&c->marks->marks[d], op->begin_ns) != 0)
            return c->fail = 1;
        if (!c->marks) {
            if (CS_VEC_RESERVE(c->mk, c->capmk, c->nmk + 1) != 0)
                return c->fail = 1;
            c->mk[c->nmk++] = (cs_mark){ d, op->begin_ns };
        }
        return 0;
    }
    cs_end e = { op->comm, 0, 0, op->tag, 0, op->nonblocking, op->span, op->begin_ns, op->end_ns };
    if (op->kind == 0 || op->kind == 2) { /* the send (of a sendrecv: to peer) */
        e.src = op->rank;
        e.dst = cs_world_rank(c, op->comm, op->peer);
        e.side = 0;
        if (e.dst >= 0 && cs_push_end(c, &e) != 0)
            return c->fail = 1;
    }
    if (op->kind == 1 || op->kind == 2) { /* the receive (of a sendrecv: from peer2) */
        int from = op->kind == 2 ? op->peer2 : op->peer >= 0 ? op->peer : op->source;
        e.src = cs_world_rank(c, op->comm, from);
        e.dst = op->rank;
        e.side = 1;
        if (e.src >= 0 && cs_push_end(c, &e) != 0)
            return c->fail = 1;
    }
    return 0;
}

static int cs_end_cmp(const void *x, const void *y)
{
    const cs_end *p = x, *q = y;
    if (p->comm != q->comm)
        return p->comm < q->comm ? -1 : 1;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    if (p->dst != q->dst)
        return p->dst < q->dst ? -1 : 1;
    if (p->tag != q->tag)
        return p->tag < q->tag ? -1 : 1;
    if (p->side != q->side)
        return p->side < q->side ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return (p->span > q->span) - (p->span < q->span);
}

int64_t cs__an_links_pair(cs_an_links *l, int ndense, int ds, int dd)
{
    uint64_t key = (uint64_t)ds * (uint64_t)ndense + (uint64_t)dd;
    int64_t k;
    if (cs_map_get(&l->pair_ix, key, &k))
        return k;
    if (CS_VEC_RESERVE(l->pair, l->cap_pairs, l->npairs + 1) != 0)
        return -1;
    k = (int64_t)l->npairs;
    if (cs_map_put(&l->pair_ix, key, k) != 0)
        return -1;
    l->pair[k] = (cs_an_pair){ .src = ds, .dst = dd };
    l->npairs++;
    return k;
}

void cs__an_links_free(cs_an_links *l)
{
    for (size_t i = 0; i < l->npairs; i++) {
        cs_vec_free(&l->pair[i].xfer);
        cs_vec_free(&l->pair[i].late);
    }
    free(l->pair);
    cs_map_free(&l->pair_ix);
    memset(l, 0, sizeof *l);
}

/* The ends of the point-to-point operations of st (part: of that part
 * only; -1: all), into c->ends by the share of their destination, and
 * the step markers. */
static int cs_collect_scan(cs_collect *c, int part, char *err, size_t errlen)
{
    cs_store *st = c->a->ctx->st;
    c->ends = calloc((size_t)c->nshares, sizeof *c->ends);
    if (!c->ends) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (cs_store_comm_members(st, cs_member_cb, c) != 0 || c->fail) {
        snprintf(err, errlen, "%s: cannot read the communicators", cs_store_path(st));
        return -1;
    }
    if (c->nmem)
        qsort(c->mem, c->nmem, sizeof *c->mem, cs_member_cmp);
    if (cs_store_p2p_markers_raw(st, part, cs_op_cb, c) != 0 || c->fail) {
        snprintf(err, errlen, "%s: cannot read the point-to-point operations and step markers", cs_store_path(st));
        return -1;
    }
    free(c->mem);
    c->mem = NULL;
    return 0;
}

static void cs_collect_free(cs_collect *c)
{
    for (int i = 0; c->ends && i < c->nshares; i++)
        free(c->ends[i].a);
    free(c->ends);
    free(c->mem);
    free(c->mk);
    memset(c, 0, sizeof *c);
}

/* The messages of ends (all ends of their (comm, src, dst, tag) groups,
 * in any order; sorted here) into out. */
static int cs_pair_ends(cs_ends *e, cs_an_msgs *out, char *err, size_t errlen)
{
    /* Sends of one (comm, src, dst, tag) in order of their begin, then its
     * receives: the k-th send pairs with the k-th receive. */
    if (e->n) /* (qsort of a NULL array is undefined, even of none) */
        qsort(e->a, e->n, sizeof *e->a, cs_end_cmp);
    size_t cap = 0;
    for (size_t g = 0; g < e->n;) {
        size_t h = g;
        while (h < e->n && e->a[h].comm == e->a[g].comm && e->a[h].src == e->a[g].src && e->a[h].dst == e->a[g].dst &&
               e->a[h].tag == e->a[g].tag)
            h++;
        size_t r0 = g;
        while (r0 < h && e->a[r0].side == 0)
            r0++;
        size_t ns = r0 - g, nr = h - r0, np = ns < nr ? ns : nr;
        out->p2p_unmatched += (int64_t)(ns + nr - 2 * np);
        if (CS_VEC_RESERVE(out->msgs, cap, out->nmsgs + np) != 0) {
            snprintf(err, errlen, "out of memory (%zu messages)", out->nmsgs + np);
            return -1;
        }
        for (size_t k = 0; k < np; k++) {
            const cs_end *s = &e->a[g + k], *r = &e->a[r0 + k];
            out->msgs[out->nmsgs++] =
                (cs_msg){ s->span, r->span, s->comm, s->src, s->dst, s->tag, r->nonblocking, s->b, s->e, r->b, r->e };
        }
        g = h;
    }
    return 0;
}

int cs__an_p2p_collect(cs_an_ctx *ctx, cs_an_msgs *out, cs_an_steps *marks, char *err, size_t errlen)
{
    cs_p2p_io io = { ctx, NULL, NULL, out, NULL };
    cs_collect c;
    memset(&c, 0, sizeof c);
    c.a = &io;
    c.marks = marks;
    c.nshares = 1;
    int rc = cs_collect_scan(&c, -1, err, errlen);
    if (rc == 0)
        rc = cs_pair_ends(&c.ends[0], out, err, errlen);
    cs_collect_free(&c);
    return rc;
}

/* The file of a part's routed ends: nshares, the offsets (in ends) of
 * each share's run and the end of the last, then the runs. */
int cs__an_p2p_route(cs_an_ctx *ctx, int part, int nshares, const char *ends_path, const char *marks_path, char *err,
                     size_t errlen)
{
    cs_p2p_io io = { ctx, NULL, NULL, NULL, NULL };
    cs_collect c;
    memset(&c, 0, sizeof c);
    c.a = &io;
    c.nshares = nshares;
    int rc = cs_collect_scan(&c, part, err, errlen);
    FILE *f = NULL;
    const char *at = ends_path;
    if (rc == 0 && !(f = fopen(ends_path, "wbx")))
        rc = -1;
    int64_t off = 0, n = nshares;
    if (rc == 0 && fwrite(&n, sizeof n, 1, f) != 1)
        rc = -1;
    for (int i = 0; rc == 0 && i <= nshares; i++) {
        if (fwrite(&off, sizeof off, 1, f) != 1)
            rc = -1;
        off += i < nshares ? (int64_t)c.ends[i].n : 0;
    }
    for (int i = 0; rc == 0 && i < nshares; i++) {
        if (c.ends[i].n && fwrite(c.ends[i].a, sizeof *c.ends[i].a, c.ends[i].n, f) != c.ends[i].n)
            rc = -1;
        free(c.ends[i].a);
        c.ends[i].a = NULL;
    }
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc == 0) {
        at = marks_path;
        rc = (f = fopen(marks_path, "wbx")) ? 0 : -1;
        if (rc == 0 && c.nmk && fwrite(c.mk, sizeof *c.mk, c.nmk, f) != c.nmk)
            rc = -1;
        if (f && fclose(f) != 0)
            rc = -1;
    }
    if (rc != 0 && !err[0])
        snprintf(err, errlen, "%s: cannot write it: %s", at, strerror(errno));
    cs_collect_free(&c);
    return rc;
}

int cs__an_p2p_pair_routed(char *const *files, int nfiles, int share, cs_an_msgs *out, char *err, size_t errlen)
{
    cs_ends e = { NULL, 0, 0 };
    int rc = 0;
    for (int i = 0; rc == 0 && i < nfiles; i++) {
        FILE *f = fopen(files[i], "rb");
        int64_t n = 0, off[2];
        rc = f && fread(&n, sizeof n, 1, f) == 1 && share < n &&
                     fseeko(f, (off_t)((1 + share) * (int64_t)sizeof(int64_t)), SEEK_SET) == 0 &&
                     fread(off, sizeof off[0], 2, f) == 2 && off[0] >= 0 && off[1] >= off[0]
                 ? 0
                 : -1;
        size_t m = rc == 0 ? (size_t)(off[1] - off[0]) : 0;
        if (rc == 0 && m > 0) {
            /* the runs follow n and the n + 1 offsets */
            off_t run = (off_t)((n + 2) * (int64_t)sizeof(int64_t)) + (off_t)off[0] * (off_t)sizeof(cs_end);
            rc = CS_VEC_RESERVE(e.a, e.cap, e.n + m) != 0 || fseeko(f, run, SEEK_SET) != 0 ||
                         fread(e.a + e.n, sizeof *e.a, m, f) != m
                     ? -1
                     : 0;
            e.n += rc == 0 ? m : 0;
        }
        if (rc != 0)
            snprintf(err, errlen, "%s: cannot read the routed messages back: %s", files[i],
                     f ? (ferror(f) ? strerror(errno) : "short or damaged") : strerror(errno));
        if (f)
            fclose(f);
    }
    if (rc == 0)
        rc = cs_pair_ends(&e, out, err, errlen);
    free(e.a);
    return rc;
}

int cs__an_p2p_marks_read(cs_an_ctx *ctx, char *const *files, int nfiles, cs_an_steps *marks, char *err, size_t errlen)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < nfiles; i++) {
        FILE *f = fopen(files[i], "rb");
        cs_mark b[1024];
        size_t got;
        while (f && rc == 0 && (got = fread(b, sizeof b[0], sizeof b / sizeof b[0], f)) > 0)
            for (size_t k = 0; rc == 0 && k < got; k++)
                rc = b[k].d >= 0 && b[k].d < ctx->ndense ? cs_vec_push(&marks->marks[b[k].d], b[k].t) : -1;
        if (!f || ferror(f) || rc != 0) {
            snprintf(err, errlen, "%s: cannot read the step markers back", files[i]);
            rc = -1;
        }
        if (f)
            fclose(f);
    }
    return rc;
}

int cs__an_p2p(cs_an_ctx *ctx, const cs_an_clocks *clocks, const cs_an_steps *steps, const cs_an_msgs *msgs,
               cs_an_links *out, char *err, size_t errlen)
{
    cs_p2p_io io = { ctx, clocks, steps, msgs, out }, *a = &io;
    cs_msg_iter it;
    if (cs__an_msgs_begin(a->msgs, &it) != 0) {
        snprintf(err, errlen, "cannot read the paired messages back: %s", strerror(errno));
        return -1;
    }
    for (const cs_msg *m; (m = cs__an_msgs_next(&it));) {
        /* aligned times; a missing completion (0) stays 0 */
        int64_t sb = cs__an_align_time(a->clocks, m->src, m->sb),
                se = m->se ? cs__an_align_time(a->clocks, m->src, m->se) : 0;
        int64_t rb = cs__an_align_time(a->clocks, m->dst, m->rb),
                re = m->re ? cs__an_align_time(a->clocks, m->dst, m->re) : 0;
        cs_p2p_row row = { m->send_span, m->recv_span, m->comm, m->src, m->dst, m->tag, 0, 0, 0 };
        int64_t both = sb > rb ? sb : rb;
        if (sb > rb)
            row.late_sender_ns = (re > 0 && re < sb ? re : sb) - rb;
        if (rb > sb && se > 0)
            row.late_receiver_ns = (se < rb ? se : rb) - sb;
        if (re > 0) {
            /* the receive side's time after the later arrival; a receive
             * completed by a Wait* may have waited for other messages too:
             * then no more than the sender's time in its call */
            int64_t t = re - both;
            int64_t sd = m->recv_nonblocking && se > 0 ? se - sb : t;
            row.transfer_ns = t < sd ? t : sd;
            if (row.transfer_ns < 0)
                row.transfer_ns = 0;
        }
        if (row.late_sender_ns < 0)
            row.late_sender_ns = 0;
        if (row.late_receiver_ns < 0)
            row.late_receiver_ns = 0;
        a->links->p2p_pairs++;
        if (cs_awriter_p2p(a->ctx->w, &row) != 0) {
            snprintf(err, errlen, "%s: cannot write the point-to-point pairs", cs_store_path(a->ctx->st));
            cs__an_msgs_end(&it);
            return -1;
        }
        int ds = cs__an_ctx_ix(a->ctx, m->src), dd = cs__an_ctx_ix(a->ctx, m->dst);
        if (ds >= 0 && dd >= 0 && re > 0) {
            int64_t k = cs__an_links_pair(a->links, a->ctx->ndense, ds, dd);
            if (k < 0) {
                snprintf(err, errlen, "out of memory (%zu pairs of ranks)", a->links->npairs);
                cs__an_msgs_end(&it);
                return -1;
            }
            cs_an_pair *pr = &a->links->pair[k];
            cs_vec_push(&pr->xfer, row.transfer_ns);
            cs_vec_push(&pr->late, row.late_sender_ns);
            if (pr->t0 == 0 || both < pr->t0)
                pr->t0 = both;
            if (re > pr->t1)
                pr->t1 = re;
        }
    }
    if (cs__an_msgs_end(&it) != 0) {
        snprintf(err, errlen, "the paired messages could not be read back whole");
        return -1;
    }
    if (a->msgs->p2p_unmatched)
        cs__an_ctx_note(a->ctx, "%lld point-to-point operations have no partner in the trace",
                        (long long)a->msgs->p2p_unmatched);
    return 0;
}
