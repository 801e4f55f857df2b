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
#include "analyzer/analysis.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

typedef struct cs_collect {
    cs_p2p_io *a;
    cs_an_steps *marks; /* the raw step markers of each rank go here (NULL: not read) */
    int share, nshares; /* the messages kept: to the ranks of this share */
    cs_member_ix *mem;
    size_t nmem, capmem;
    cs_end *ends;
    size_t nends, capends;
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

/* Ends of messages to the ranks of c's share only: a run of the ranks
 * present (ranks not present: the first share's). */
static int cs_push_end(cs_collect *c, const cs_end *e)
{
    if (c->nshares > 1) {
        int d = cs__an_ctx_ix(c->a->ctx, e->dst);
        int owner = d < 0 ? 0 : (int)((int64_t)d * c->nshares / c->a->ctx->ndense);
        if (owner != c->share)
            return 0;
    }
    if (CS_VEC_RESERVE(c->ends, c->capends, c->nends + 1) != 0)
        return -1;
    c->ends[c->nends++] = *e;
    return 0;
}

static int cs_op_cb(const cs_p2p_op *op, void *arg)
{
    cs_collect *c = arg;
    if (op->kind == 3) { /* a step marker, raw: aligned by cs__an_match_steps */
        if (!c->marks)
            return 0;
        int d = cs__an_ctx_ix(c->a->ctx, op->rank);
        if (d >= 0 && cs_vec_push(&c->marks->marks[d], op->begin_ns) != 0)
            return c->fail = 1;
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

int cs__an_p2p_collect(cs_an_ctx *ctx, cs_an_msgs *out, cs_an_steps *marks, int share, int nshares, char *err,
                       size_t errlen)
{
    cs_p2p_io io = { ctx, NULL, NULL, out, NULL }, *a = &io;
    cs_collect c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.marks = marks;
    c.share = share;
    c.nshares = nshares;
    int rc = -1;
    if (cs_store_comm_members(a->ctx->st, cs_member_cb, &c) != 0 || c.fail) {
        snprintf(err, errlen, "%s: cannot read the communicators", cs_store_path(a->ctx->st));
        goto out;
    }
    if (c.nmem)
        qsort(c.mem, c.nmem, sizeof *c.mem, cs_member_cmp);
    if (cs_store_p2p_markers_raw(a->ctx->st, cs_op_cb, &c) != 0 || c.fail) {
        snprintf(err, errlen, "%s: cannot read the point-to-point operations and step markers",
                 cs_store_path(a->ctx->st));
        goto out;
    }
    free(c.mem);
    c.mem = NULL;
    /* Sends of one (comm, src, dst, tag) in order of their begin, then its
     * receives: the k-th send pairs with the k-th receive. */
    if (c.nends) /* (qsort of a NULL array is undefined, even of none) */
        qsort(c.ends, c.nends, sizeof *c.ends, cs_end_cmp);
    size_t cap = 0;
    for (size_t g = 0; g < c.nends;) {
        size_t h = g;
        while (h < c.nends && c.ends[h].comm == c.ends[g].comm && c.ends[h].src == c.ends[g].src &&
               c.ends[h].dst == c.ends[g].dst && c.ends[h].tag == c.ends[g].tag)
            h++;
        size_t r0 = g;
        while (r0 < h && c.ends[r0].side == 0)
            r0++;
        size_t ns = r0 - g, nr = h - r0, np = ns < nr ? ns : nr;
        out->p2p_unmatched += (int64_t)(ns + nr - 2 * np);
        if (CS_VEC_RESERVE(out->msgs, cap, out->nmsgs + np) != 0) {
            snprintf(err, errlen, "out of memory (%zu messages)", out->nmsgs + np);
            goto out;
        }
        for (size_t k = 0; k < np; k++) {
            const cs_end *s = &c.ends[g + k], *r = &c.ends[r0 + k];
            out->msgs[out->nmsgs++] =
                (cs_msg){ s->span, r->span, s->comm, s->src, s->dst, s->tag, r->nonblocking, s->b, s->e, r->b, r->e };
        }
        g = h;
    }
    rc = 0;
out:
    free(c.mem);
    free(c.ends);
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
