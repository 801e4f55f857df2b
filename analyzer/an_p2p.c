/* an_p2p.c: point-to-point messages paired by communicator, source,
 * destination, tag and order (MPI's non-overtaking rule), with their wait
 * states: late sender (the receive waited for the send to start), late
 * receiver (the send waited for the receive), and transfer (the time the
 * message took once both sides were there, as the receive side saw it; for
 * a receive completed by a Wait*, bounded by the sender's time in its call,
 * so a Waitall that also waited for other messages is not charged for
 * them). */
#include "config.h"
#include "analyzer/analysis.h"

#include <stdlib.h>
#include <string.h>

typedef struct cs_end { int64_t span, b, e; int nonblocking; } cs_end;

typedef struct cs_pairer {
    cs_an *a;
    int64_t comm;
    int src, dst, tag;
    int have;
    cs_end *s, *r;
    size_t ns, nr, caps, capr;
    int fail;
} cs_pairer;

static int cs_push_end(cs_end **v, size_t *n, size_t *cap, cs_end x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        cs_end *nv = realloc(*v, *cap * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
    }
    (*v)[(*n)++] = x;
    return 0;
}

static int cs_pair_flush(cs_pairer *p)
{
    cs_an *a = p->a;
    size_t n = p->ns < p->nr ? p->ns : p->nr;
    a->p2p_unmatched += (int64_t)(p->ns + p->nr - 2 * n);
    int pairok = p->src >= 0 && p->src < a->nranks && p->dst >= 0 && p->dst < a->nranks;
    size_t pi = pairok ? (size_t)p->src * (size_t)a->nranks + (size_t)p->dst : 0;
    for (size_t i = 0; i < n; i++) {
        cs_end *s = &p->s[i], *r = &p->r[i];
        cs_p2p_row row = { s->span, r->span, p->comm, p->src, p->dst, p->tag, 0, 0, 0 };
        int64_t both = s->b > r->b ? s->b : r->b;
        if (s->b > r->b)
            row.late_sender_ns = (r->e > 0 && r->e < s->b ? r->e : s->b) - r->b;
        if (r->b > s->b && s->e > 0)
            row.late_receiver_ns = (s->e < r->b ? s->e : r->b) - s->b;
        if (r->e > 0) {
            /* the receive side's time after the later arrival; a receive
             * completed by a Wait* may have waited for other messages too:
             * then no more than the sender's time in its call */
            int64_t t = r->e - both;
            int64_t sd = r->nonblocking && s->e > 0 ? s->e - s->b : t;
            row.transfer_ns = t < sd ? t : sd;
            if (row.transfer_ns < 0)
                row.transfer_ns = 0;
        }
        if (row.late_sender_ns < 0)
            row.late_sender_ns = 0;
        if (row.late_receiver_ns < 0)
            row.late_receiver_ns = 0;
        a->p2p_pairs++;
        if (cs_awriter_p2p(a->w, &row) != 0)
            return -1;
        if (pairok && r->e > 0) {
            cs_vec_push(&a->pair_xfer[pi], row.transfer_ns);
            cs_vec_push(&a->pair_late[pi], row.late_sender_ns);
            if (a->pair_t0[pi] == 0 || both < a->pair_t0[pi])
                a->pair_t0[pi] = both;
            if (r->e > a->pair_t1[pi])
                a->pair_t1[pi] = r->e;
        }
    }
    p->ns = p->nr = 0;
    return 0;
}

static int cs_msg_cb(const cs_msg_end *m, void *arg)
{
    cs_pairer *p = arg;
    if (!p->have || m->comm != p->comm || m->src != p->src || m->dst != p->dst || m->tag != p->tag) {
        if (p->have && cs_pair_flush(p) != 0)
            return p->fail = 1;
        p->have = 1;
        p->comm = m->comm;
        p->src = m->src;
        p->dst = m->dst;
        p->tag = m->tag;
    }
    cs_end e = { m->span, m->begin_ns, m->end_ns, m->nonblocking };
    if (m->side == 0 ? cs_push_end(&p->s, &p->ns, &p->caps, e) : cs_push_end(&p->r, &p->nr, &p->capr, e))
        return p->fail = 1;
    return 0;
}

int cs_an_p2p(cs_an *a, char *err, size_t errlen)
{
    cs_pairer p;
    memset(&p, 0, sizeof p);
    p.a = a;
    int rc = cs_store_msg_ends(a->st, cs_msg_cb, &p);
    if (rc == 0 && p.have && cs_pair_flush(&p) != 0)
        rc = -1;
    free(p.s);
    free(p.r);
    if (rc != 0 || p.fail) {
        snprintf(err, errlen, "%s: cannot pair the point-to-point messages", cs_store_path(a->st));
        return -1;
    }
    if (a->p2p_unmatched)
        cs_an_note(a, "%lld point-to-point operations have no partner in the trace", (long long)a->p2p_unmatched);
    return 0;
}
