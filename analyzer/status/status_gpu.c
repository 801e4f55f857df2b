/* status_gpu.c: NCCL collectives whose GPU work is in flight (status_gpu.h).
 *
 * The preload's GPU-timing poller writes a GPUPEND record for the oldest
 * collective of a thread whose GPU work is still not done a second after
 * it found it pending, with whether its begin event completed (the work
 * started); the GPUTIME record of source 1 with the same correlation id
 * says it ended. The call's SPANX and span, joined by that id, give the
 * op, communicator, sequence number, bytes and the time it was enqueued
 * (the end of the call); a GPUTIME record of the NCCL profiler plugin
 * with times says it ended too. Each log is read once, and a second time only
 * when it holds GPUPEND records.
 *
 * A collective whose GPU work has been in flight for the limit (or whose
 * process is gone) is stuck. Per communicator and sequence number of the
 * stuck ones, each member is: not started (its stream is stuck before the
 * collective: the culprit), started and waiting, done (or untimed), or it
 * never enqueued the collective (a culprit too: what its CPU does). */
#include "config.h"
#include "analyzer/status/status_gpu.h"
#include "analyzer/status/failure.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SG_LOCALS 65536 /* span comm fields are 16 bits */
#define SG_MAX_FLIGHTS 65536

typedef struct sg_flight {
    uint64_t corr, g0, seen, at;
    int begun, done, has_span, has_seq;
    uint16_t op;
    uint64_t comm, bytes, t1, stream;
    uint32_t seq, behind;
} sg_flight;

typedef struct sg_seq {
    uint64_t comm;
    int64_t entered;
} sg_seq;

typedef struct sg_rank {
    int rank, pid, alive, closed; /* alive: 1, 0 gone, -1 unknown (another host) */
    char host[64];
    cs_log_clock clock; /* its rate and latest calibration (libtrace/log.h) */
    uint64_t maxtick;
    sg_flight *fl;
    size_t nfl, capfl;
    cs_map fl_idx; /* corr -> index in fl */
    sg_seq *seq;
    size_t nseq, capseq;
    int has_fly, has_last;
    cs_rec fly, last; /* the CPU call in flight (lowest thread), the last span */
    const sg_flight *oldest;
    double since; /* of oldest, since its enqueue */
    int stuck;
} sg_rank;

typedef struct sg_job {
    sg_rank *r;
    size_t n, cap;
    cs_failure_model comms; /* its communicator table only (failure.c) */
    int64_t now;
} sg_job;

static int64_t sg_real(const sg_rank *r, uint64_t ticks)
{
    return cs_log_clock_real(&r->clock, ticks);
}

static int sg_is_nccl(int op)
{
    return op > 0 && op < CS_OP_COUNT && strcmp(cs_ops[op].api, "NCCL") == 0;
}

static int sg_is_coll(int op)
{
    return op > 0 && op < CS_OP_COUNT && (cs_ops[op].kind == CS_KIND_COLL || cs_ops[op].kind == CS_KIND_ROOTED);
}

static const char *sg_op(int op)
{
    return op > 0 && op < CS_OP_COUNT ? cs_ops[op].name : "?";
}

static sg_flight *sg_flight_find(sg_rank *r, uint64_t corr)
{
    int64_t i;
    return cs_map_get(&r->fl_idx, corr, &i) ? &r->fl[i] : NULL;
}

/* Pass 1: clock, communicators, sequence numbers entered, the CPU call in
 * flight, the last span, the GPUPEND records. */
static int sg_scan(sg_job *j, sg_rank *r, cs_logr *lr, uint64_t *local_id)
{
    const cs_log_header *h = cs_logr_header(lr);
    int64_t toff = h->test_offset_ns;
    const cs_rec *x;
    while ((x = cs_logr_next(lr)) != NULL) {
        uint32_t kind = CS_REC_KIND(x->hdr), flags = CS_REC_FLAGS(x->hdr);
        if (kind == CS_REC_CALIB) {
            cs_log_clock_note(&r->clock, (const cs_rec_calib *)x, toff);
        } else if (kind == CS_REC_COMMDEF) {
            const cs_rec_comm *c = (const cs_rec_comm *)x;
            if (c->local < SG_LOCALS)
                local_id[c->local] = c->id;
            cs_failure_comm_def(&j->comms, c->id, (int)c->size, c->how, c->rank,
                                c->world_rank >= 0 ? c->world_rank : h->rank);
        } else if (kind == CS_REC_COMMNAME) {
            const cs_rec_commname *c = (const cs_rec_commname *)x;
            if (c->part == 0)
                cs_failure_comm_named(&j->comms, c->id, c->text, sizeof c->text);
        } else if (kind == CS_REC_SPAN || kind == CS_REC_INFLIGHT) {
            int fly = kind == CS_REC_INFLIGHT;
            uint64_t t = fly ? x->t0 : x->t1;
            if (t > r->maxtick)
                r->maxtick = t;
            uint64_t comm = (flags & CS_F_HAS_COMM) ? local_id[x->comm] : 0;
            if (!fly && comm && (flags & CS_F_HAS_SEQ) && sg_is_nccl(x->op) && sg_is_coll(x->op)) {
                sg_seq *q = NULL;
                for (size_t i = 0; i < r->nseq && !q; i++)
                    if (r->seq[i].comm == comm)
                        q = &r->seq[i];
                if (!q && CS_VEC_RESERVE(r->seq, r->capseq, r->nseq + 1) == 0) {
                    q = &r->seq[r->nseq++];
                    *q = (sg_seq){ comm, -1 };
                }
                if (q && (int64_t)x->seq > q->entered)
                    q->entered = x->seq;
            }
            if (fly) {
                if (!r->has_fly || x->tid < r->fly.tid) {
                    r->fly = *x;
                    r->has_fly = 1;
                }
            } else if (!r->has_last || x->t1 >= r->last.t1) {
                r->last = *x;
                r->has_last = 1;
            }
        } else if (kind == CS_REC_GPUPEND) {
            const cs_rec_gpupend *g = (const cs_rec_gpupend *)x;
            if (g->at > r->maxtick)
                r->maxtick = g->at;
            sg_flight *f = sg_flight_find(r, g->corr);
            if (!f) {
                if (r->nfl >= SG_MAX_FLIGHTS || g->corr == UINT64_MAX ||
                    CS_VEC_RESERVE(r->fl, r->capfl, r->nfl + 1) != 0 ||
                    cs_map_put(&r->fl_idx, g->corr, (int64_t)r->nfl) != 0)
                    continue;
                f = &r->fl[r->nfl++];
                memset(f, 0, sizeof *f);
                f->corr = g->corr;
            }
            if (g->at >= f->at) {
                f->at = g->at;
                f->seen = g->seen;
                f->behind = g->behind;
            }
            if (g->begun && !f->begun) {
                f->begun = 1;
                f->g0 = g->g0;
            }
        }
    }
    return 0;
}

/* Pass 2: the flights' spans (SPANX + span of the same thread) and their
 * completions (GPUTIME of source 1). */
static void sg_join(sg_rank *r, cs_logr *lr, const uint64_t *local_id)
{
    struct {
        uint16_t tid;
        int have;
        cs_rec_spanx x;
    } xp[64];
    int nxp = 0;
    const cs_rec *x;
    while ((x = cs_logr_next(lr)) != NULL) {
        uint32_t kind = CS_REC_KIND(x->hdr), flags = CS_REC_FLAGS(x->hdr);
        if (kind == CS_REC_SPANX) {
            const cs_rec_spanx *s = (const cs_rec_spanx *)x;
            int i = 0;
            while (i < nxp && xp[i].tid != s->tid)
                i++;
            if (i == nxp && nxp < 64)
                nxp++;
            if (i < nxp) {
                xp[i].tid = s->tid;
                xp[i].have = 1;
                xp[i].x = *s;
            }
        } else if (kind == CS_REC_SPAN) {
            for (int i = 0; i < nxp; i++)
                if (xp[i].tid == x->tid && xp[i].have) {
                    xp[i].have = 0;
                    sg_flight *f = xp[i].x.op == x->op && xp[i].x.corr ? sg_flight_find(r, xp[i].x.corr) : NULL;
                    if (f) {
                        f->has_span = 1;
                        f->op = x->op;
                        f->comm = (flags & CS_F_HAS_COMM) ? local_id[x->comm] : 0;
                        f->has_seq = (flags & CS_F_HAS_SEQ) != 0;
                        f->seq = x->seq;
                        f->bytes = x->bytes;
                        f->t1 = x->t1;
                        f->stream = xp[i].x.stream;
                    }
                    break;
                }
        } else if (kind == CS_REC_GPUTIME) {
            const cs_rec_gputime *g = (const cs_rec_gputime *)x;
            /* CUDA events, or NCCL's profiler plugin, say it ended */
            sg_flight *f = g->source == 1 || g->g0 ? sg_flight_find(r, g->corr) : NULL;
            if (f)
                f->done = 1;
        }
    }
}

static int sg_read_log(sg_job *j, const char *path, uint64_t *local_id)
{
    char err[256];
    cs_logr *lr = cs_logr_open(path, err, sizeof err);
    if (!lr)
        return 0; /* status.c names the logs it cannot read */
    if (CS_VEC_RESERVE(j->r, j->cap, j->n + 1) != 0) {
        cs_logr_close(lr);
        return -1;
    }
    const cs_log_header *h = cs_logr_header(lr);
    sg_rank *r = &j->r[j->n++];
    memset(r, 0, sizeof *r);
    r->rank = h->rank;
    r->pid = h->pid;
    r->closed = h->state == CS_LOG_CLOSED;
    r->clock.ticks_per_ns = h->ticks_per_ns;
    snprintf(r->host, sizeof r->host, "%.*s", (int)strnlen(h->host, sizeof h->host), h->host);
    memset(local_id, 0, SG_LOCALS * sizeof *local_id);
    sg_scan(j, r, lr, local_id);
    cs_logr_close(lr);
    if (r->nfl && (lr = cs_logr_open(path, err, sizeof err)) != NULL) {
        sg_join(r, lr, local_id);
        cs_logr_close(lr);
    }
    char me[64] = "";
    gethostname(me, sizeof me - 1);
    r->alive = strcmp(me, r->host) == 0 ? cs_failure_pid_alive(r->pid) : -1;
    return 0;
}

/* Append to buf (length len, *l used): never past its end. */
static void sg_cat(char *buf, size_t len, size_t *l, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void sg_cat(char *buf, size_t len, size_t *l, const char *fmt, ...)
{
    if (*l + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *l, len - *l, fmt, ap);
    va_end(ap);
    if (n > 0)
        *l = *l + (size_t)n >= len ? len - 1 : *l + (size_t)n;
}

static void sg_ranks_text(const int *v, int n, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && l + 24 < len;) {
        int k = i;
        while (k + 1 < n && v[k + 1] == v[k] + 1)
            k++;
        if (k > i + 1)
            l += (size_t)snprintf(buf + l, len - l, "%s%d-%d", l ? "," : "", v[i], v[k]);
        else
            for (int q = i; q <= k; q++)
                l += (size_t)snprintf(buf + l, len - l, "%s%d", l ? "," : "", v[q]);
        i = k + 1;
    }
}

static int sg_rank_cmp(const void *x, const void *y)
{
    const sg_rank *a = x, *b = y;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int sg_gone(const sg_rank *r)
{
    return r->alive == 0 && !r->closed;
}

/* The pending flight of rank r for (comm, seq), or NULL. */
static const sg_flight *sg_pending(const sg_rank *r, uint64_t comm, uint32_t seq)
{
    for (size_t i = 0; i < r->nfl; i++) {
        const sg_flight *f = &r->fl[i];
        if (f->has_span && !f->done && f->has_seq && f->comm == comm && f->seq == seq)
            return f;
    }
    return NULL;
}

/* What the CPU of a rank that never enqueued the collective does. */
static void sg_cpu(const sg_job *j, const sg_rank *r, char *buf, size_t len)
{
    if (sg_gone(r)) {
        snprintf(buf, len, "it died without an exit record (killed?)%s%s", r->has_fly ? " in " : "",
                 r->has_fly ? sg_op(r->fly.op) : "");
    } else if (r->closed) {
        snprintf(buf, len, "it exited");
    } else if (r->has_fly) {
        snprintf(buf, len, "it is in %s since %.1f s", sg_op(r->fly.op),
                 (double)(j->now - sg_real(r, r->fly.t0)) / 1e9);
    } else if (r->has_last) {
        snprintf(buf, len, "it is outside any traced call since %.1f s (its last call: %s)",
                 (double)(j->now - sg_real(r, r->last.t1)) / 1e9, sg_op(r->last.op));
    } else {
        snprintf(buf, len, "nothing traced yet");
    }
}

static int sg_add(char (**arr)[1024], int *n, const char *text)
{
    char(*a)[1024] = realloc(*arr, (size_t)(*n + 1) * sizeof *a);
    if (!a)
        return -1;
    *arr = a;
    snprintf(a[*n], sizeof a[*n], "%s", text);
    (*n)++;
    return 0;
}

/* The per-rank lines (alike ranks on one) and the diagnoses. */
static int sg_report(sg_job *j, double after, cs_status_gpu *g)
{
    int n = (int)j->n, rc = 0;
    int *v = malloc((size_t)(n ? n : 1) * sizeof *v), *done = calloc((size_t)(n ? n : 1), sizeof *done);
    g->rank = calloc((size_t)(n ? n : 1), sizeof *g->rank);
    char(*lines)[1024] = NULL;
    int nlines = 0;
    if (!v || !done || !g->rank) {
        rc = -1;
        goto out;
    }
    char cn[96], a[512], b[1024], t[1024];
    for (int i = 0; i < n; i++) {
        sg_rank *r = &j->r[i];
        for (size_t k = 0; k < r->nfl; k++) {
            const sg_flight *f = &r->fl[k];
            if (f->has_span && !f->done && (!r->oldest || f->t1 < r->oldest->t1))
                r->oldest = f;
        }
        if (!r->oldest)
            continue;
        r->since = (double)(j->now - sg_real(r, r->oldest->t1)) / 1e9;
        r->stuck = r->since >= after || sg_gone(r);
        const sg_flight *f = r->oldest;
        g->rank[g->nrank++] =
            (struct cs_status_gpu_rank){ r->rank, sg_op(f->op), f->comm, f->seq, r->since, f->begun, r->stuck };
    }
    /* per-rank lines: the same collective and state on one line */
    for (int i = 0; i < n; i++) {
        const sg_rank *r = &j->r[i];
        if (!r->oldest || done[i])
            continue;
        const sg_flight *f = r->oldest;
        int nv = 0;
        double lo = 1e300, hi = -1e300;
        for (int k = i; k < n; k++) {
            const sg_flight *q = j->r[k].oldest;
            if (!done[k] && q && q->op == f->op && q->comm == f->comm && q->seq == f->seq && q->begun == f->begun &&
                q->has_seq == f->has_seq) {
                done[k] = 1;
                v[nv++] = j->r[k].rank;
                lo = j->r[k].since < lo ? j->r[k].since : lo;
                hi = j->r[k].since > hi ? j->r[k].since : hi;
            }
        }
        sg_ranks_text(v, nv, a, sizeof a);
        char seq[32] = "";
        if (f->has_seq)
            snprintf(seq, sizeof seq, " seq %u", f->seq);
        char when[64];
        if (hi - lo >= 0.05)
            snprintf(when, sizeof when, "%.1f-%.1f s", lo, hi);
        else
            snprintf(when, sizeof when, "%.1f s", hi);
        snprintf(t, sizeof t, "rank%s %s: GPU work of %s%s of %s %s, enqueued %s ago", nv > 1 ? "s" : "", a,
                 sg_op(f->op), seq,
                 f->comm ? cs_failure_comm_name(&j->comms, f->comm, cn, sizeof cn) : "no communicator",
                 f->begun ? "started, not finished" : "not started", when);
        if (sg_add(&lines, &nlines, t) != 0) {
            rc = -1;
            goto out;
        }
    }
    /* diagnoses: per (communicator, seq) of the stuck */
    for (int i = 0; i < n; i++) {
        const sg_rank *r = &j->r[i];
        if (!r->stuck || !r->oldest->has_seq || !r->oldest->comm)
            continue;
        const sg_flight *f = r->oldest;
        int first = 1;
        for (int k = 0; k < i && first; k++) {
            const sg_rank *p = &j->r[k];
            first = !(p->stuck && p->oldest->has_seq && p->oldest->comm == f->comm && p->oldest->seq == f->seq);
        }
        if (!first)
            continue;
        const cs_failure_comm *c = cs_failure_comm_find(&j->comms, f->comm);
        if (!c)
            continue;
        int nstart = 0, nnot = 0, ndone = 0, ngone = 0;
        int *start = malloc((size_t)c->size * sizeof *start), *not = malloc((size_t)c->size * sizeof *not ),
            *dn = malloc((size_t)c->size * sizeof *dn);
        if (!start || !not || !dn) {
            free(start);
            free(not );
            free(dn);
            rc = -1;
            goto out;
        }
        double wait = 0, nots = 0;
        size_t lb = 0;
        b[0] = '\0';
        for (int q = 0; q < c->size; q++) {
            int w = c->world[q];
            const sg_rank *m = NULL;
            for (int k = 0; k < n && w >= 0 && !m; k++)
                if (j->r[k].rank == w)
                    m = &j->r[k];
            if (!m) {
                sg_cat(b, sizeof b, &lb, "%srank %d: no log of it", lb ? "; " : "", w);
                continue;
            }
            ngone += sg_gone(m);
            const sg_flight *p = sg_pending(m, f->comm, f->seq);
            double s = p ? (double)(j->now - sg_real(m, p->t1)) / 1e9 : 0;
            if (p && p->begun) {
                start[nstart++] = w;
                wait = s > wait ? s : wait;
            } else if (p) {
                not [nnot++] = w;
                nots = s > nots ? s : nots;
            } else {
                int64_t ent = -1;
                for (size_t z = 0; z < m->nseq; z++)
                    if (m->seq[z].comm == f->comm)
                        ent = m->seq[z].entered;
                if (ent >= (int64_t)f->seq) {
                    dn[ndone++] = w;
                } else if (lb < sizeof b - 200) {
                    char d[300];
                    sg_cpu(j, m, d, sizeof d);
                    sg_cat(b, sizeof b, &lb, "%srank %d never enqueued it: %s", lb ? "; " : "", w, d);
                }
            }
        }
        size_t lt = 0;
        sg_cat(t, sizeof t, &lt, "seq %u of %s (%s, %llu B): ", f->seq,
               cs_failure_comm_name(&j->comms, f->comm, cn, sizeof cn), sg_op(f->op), (unsigned long long)f->bytes);
        if (nnot) {
            sg_ranks_text(not, nnot, a, sizeof a);
            sg_cat(t, sizeof t, &lt,
                   "rank%s %s stalled: GPU work never started (the stream is stuck before it), "
                   "enqueued %.1f s ago",
                   nnot > 1 ? "s" : "", a, nots);
        }
        if (b[0])
            sg_cat(t, sizeof t, &lt, "%s%s", nnot ? "; " : "", b);
        if (nstart) {
            sg_ranks_text(start, nstart, a, sizeof a);
            if (nnot || b[0])
                sg_cat(t, sizeof t, &lt, "; rank%s %s waiting: GPU work started, in flight %.1f s",
                       nstart > 1 ? "s" : "", a, wait);
            else
                sg_cat(t, sizeof t, &lt,
                       "rank%s %s: GPU work started and none finished, in flight %.1f s (a kernel "
                       "stuck inside the collective)",
                       nstart > 1 ? "s" : "", a, wait);
        }
        if (ndone) {
            sg_ranks_text(dn, ndone, a, sizeof a);
            sg_cat(t, sizeof t, &lt, "; rank%s %s: enqueued it, GPU work not in flight", ndone > 1 ? "s" : "", a);
        }
        if (ngone)
            sg_cat(t, sizeof t, &lt, "; %d of its ranks gone without an exit record (killed?)", ngone);
        free(start);
        free(not );
        free(dn);
        if (sg_add(&g->diag, &g->ndiag, t) != 0) {
            rc = -1;
            goto out;
        }
    }
out:
    if (lines) {
        char(*l2)[512] = malloc((size_t)nlines * sizeof *l2);
        if (l2) {
            for (int i = 0; i < nlines; i++)
                snprintf(l2[i], sizeof l2[i], "%s", lines[i]);
            g->line = l2;
            g->nline = nlines;
        }
        free(lines);
    }
    free(v);
    free(done);
    return rc < 0 ? rc : g->ndiag;
}

int cs_status_gpu_read(const char *dir, double after_s, int64_t now_real, cs_status_gpu *g)
{
    memset(g, 0, sizeof *g);
    sg_job j;
    memset(&j, 0, sizeof j);
    j.now = now_real;
    char logs[1200];
    snprintf(logs, sizeof logs, "%s/logs", dir);
    DIR *d = opendir(logs);
    if (!d)
        return 0;
    uint64_t *local_id = malloc(SG_LOCALS * sizeof *local_id);
    int rc = local_id ? 0 : -1;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 7 || strcmp(e->d_name + l - 6, ".cslog") != 0)
            continue;
        char path[2400];
        snprintf(path, sizeof path, "%s/%s", logs, e->d_name);
        struct stat sb;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue; /* never a link, a FIFO or a folder */
        rc = sg_read_log(&j, path, local_id);
    }
    closedir(d);
    free(local_id);
    if (rc == 0 && j.n) {
        qsort(j.r, j.n, sizeof *j.r, sg_rank_cmp);
        rc = sg_report(&j, after_s, g);
    }
    for (size_t i = 0; i < j.n; i++) {
        free(j.r[i].fl);
        cs_map_free(&j.r[i].fl_idx);
        free(j.r[i].seq);
    }
    free(j.r);
    cs_failure_model_free(&j.comms);
    return rc;
}

void cs_status_gpu_free(cs_status_gpu *g)
{
    free(g->line);
    free(g->diag);
    free(g->rank);
    memset(g, 0, sizeof *g);
}
