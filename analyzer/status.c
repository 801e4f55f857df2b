/* status.c: `collscope status`: who is not where the others are, read from
 * the per-process logs of a running, hung or dead job (status.h).
 *
 * Every log is mapped read-only and walked once: its communicators
 * (COMMDEF, COMMNAME), its clock (the latest CALIB), its call sites, its
 * last completed call and the calls still in flight (CS_REC_INFLIGHT: the
 * preload commits a call's slot as in flight when it starts, as a span
 * when it returns). Per communicator, the highest collective sequence
 * number each rank entered and completed. Then the diagnosis, in this
 * order:
 *   deadlock     a cycle of ranks waiting on each other (a receive or send
 *                waits on its peer, a collective on the members that have
 *                not entered it);
 *   mismatch     members of a communicator in different collectives (or
 *                with different roots) at the same sequence number;
 *   missing rank members that never entered a collective the others wait
 *                in: what each of them is doing (its call in flight, dead,
 *                exited, or outside any traced call since when);
 *   dead rank    a process gone without an exit record, and one that
 *                exited without MPI_Finalize while the others go on;
 *   compute      a rank outside any traced call for longer than the limit
 *                while others wait.
 * A call counts as stuck once in flight for the limit (--after, 5 s).
 * Ranks alike (the same call, communicator, sequence number and call
 * site) are printed as one line with their ranks. */
#include "config.h"
#include "analyzer/status.h"
#include "analyzer/status_hang.h"
#include "common/json.h"
#include "common/vec.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ST_MAX_LOCAL 4096          /* communicators of one process */
#define ST_MAX_SITES 4096          /* call sites of one process kept */
#define ST_MAX_COMMS 65536         /* communicators of the job kept */
#define ST_MAX_COMM_SIZE (1 << 20) /* members of one */

typedef struct st_site {
    uint32_t id;
    uint64_t pc[CS_CALLSITE_FRAMES_PER_REC];
    int n;
} st_site;

typedef struct st_seq {
    uint64_t comm;
    int64_t entered, completed; /* -1 none */
} st_seq;

typedef struct st_rank {
    int rank, pid, world, alive; /* alive: 1, 0 gone, -1 unknown (another host) */
    int closed, finalized, has_fly, has_last;
    char host[64], log[1024];
    double ticks_per_ns;
    uint64_t cal_ticks;
    int64_t cal_real;
    cs_rec fly, last;
    uint64_t fly_comm, last_comm; /* job-wide ids */
    uint64_t local_id[ST_MAX_LOCAL];
    st_seq *seq;
    size_t nseq, capSeq;
    st_site *site;
    size_t nsite, capSite;
    int64_t last_real; /* when the log last recorded anything (real ns) */
} st_rank;

typedef struct st_comm {
    uint64_t id;
    int size, how;
    int *world; /* [size]: world rank of each comm rank, -1 unknown */
    char name[64];
} st_comm;

typedef struct st_job {
    st_rank *r;
    size_t n, cap;
    st_comm *c;
    size_t nc, capC;
    int64_t now;
    char modules_dir[1024];
} st_job;

static int64_t st_now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static st_comm *st_comm_get(st_job *j, uint64_t id, int size)
{
    for (size_t i = 0; i < j->nc; i++)
        if (j->c[i].id == id)
            return &j->c[i];
    /* a damaged or planted log's sizes are no reason to run out of memory */
    if (size <= 0 || size > ST_MAX_COMM_SIZE || j->nc >= ST_MAX_COMMS || CS_VEC_RESERVE(j->c, j->capC, j->nc + 1) != 0)
        return NULL;
    st_comm *c = &j->c[j->nc];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->size = size;
    if (!(c->world = malloc((size_t)size * sizeof *c->world)))
        return NULL;
    for (int k = 0; k < size; k++)
        c->world[k] = -1;
    j->nc++;
    return c;
}

static st_seq *st_seq_get(st_rank *r, uint64_t comm)
{
    for (size_t i = 0; i < r->nseq; i++)
        if (r->seq[i].comm == comm)
            return &r->seq[i];
    if (CS_VEC_RESERVE(r->seq, r->capSeq, r->nseq + 1) != 0)
        return NULL;
    r->seq[r->nseq] = (st_seq){ comm, -1, -1 };
    return &r->seq[r->nseq++];
}

static int64_t st_real(const st_rank *r, uint64_t ticks)
{
    if (r->ticks_per_ns <= 0)
        return 0;
    return r->cal_real + (int64_t)(((double)ticks - (double)r->cal_ticks) / r->ticks_per_ns);
}

static int st_is_coll(int op)
{
    return op > 0 && op < CS_OP_COUNT && (cs_ops[op].kind == CS_KIND_COLL || cs_ops[op].kind == CS_KIND_ROOTED);
}

static int st_is_p2p(int op)
{
    return op > 0 && op < CS_OP_COUNT &&
           (cs_ops[op].kind == CS_KIND_RECV || cs_ops[op].kind == CS_KIND_SEND || cs_ops[op].kind == CS_KIND_SENDRECV);
}

static const char *st_op(int op)
{
    return op > 0 && op < CS_OP_COUNT ? cs_ops[op].name : "?";
}

/* A process of this host that still runs: it exists and is no zombie
 * (a killed rank stays one until its launcher reaps it). */
static int st_pid_alive(int pid)
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

/* Read one log into a new rank of j. 0, or -1 with err (the log is then
 * skipped by the caller with a note). */
static int st_read_log(st_job *j, const char *path, char *err, size_t errlen)
{
    cs_logr *lr = cs_logr_open(path, err, errlen);
    if (!lr)
        return -1;
    const cs_log_header *h = cs_logr_header(lr);
    if (CS_VEC_RESERVE(j->r, j->cap, j->n + 1) != 0) {
        cs_logr_close(lr);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    st_rank *r = &j->r[j->n];
    memset(r, 0, sizeof *r);
    r->rank = h->rank;
    r->pid = h->pid;
    r->world = h->world_size;
    r->closed = h->state == CS_LOG_CLOSED;
    r->ticks_per_ns = h->ticks_per_ns;
    snprintf(r->host, sizeof r->host, "%.*s", (int)strnlen(h->host, sizeof h->host), h->host);
    snprintf(r->log, sizeof r->log, "%s", path);
    int64_t toff = h->test_offset_ns;
    uint64_t maxtick = 0;
    const cs_rec *x;
    while ((x = cs_logr_next(lr)) != NULL) {
        uint32_t kind = CS_REC_KIND(x->hdr);
        if (kind == CS_REC_CALIB) {
            const cs_rec_calib *c = (const cs_rec_calib *)x;
            if (c->ticks >= r->cal_ticks) {
                r->cal_ticks = c->ticks;
                r->cal_real = c->real_ns - toff;
            }
        } else if (kind == CS_REC_COMMDEF) {
            const cs_rec_comm *c = (const cs_rec_comm *)x;
            if (c->local < ST_MAX_LOCAL)
                r->local_id[c->local] = c->id;
            st_comm *m = st_comm_get(j, c->id, (int)c->size);
            if (m) {
                m->how = c->how;
                if (c->rank >= 0 && c->rank < m->size)
                    m->world[c->rank] = c->world_rank >= 0 ? c->world_rank : h->rank;
            }
        } else if (kind == CS_REC_COMMNAME) {
            const cs_rec_commname *c = (const cs_rec_commname *)x;
            st_comm *m = NULL;
            for (size_t i = 0; i < j->nc; i++)
                if (j->c[i].id == c->id)
                    m = &j->c[i];
            if (m && c->part == 0)
                snprintf(m->name, sizeof m->name, "%.*s", (int)strnlen(c->text, sizeof c->text), c->text);
        } else if (kind == CS_REC_CALLSITE) {
            const cs_rec_callsite *c = (const cs_rec_callsite *)x;
            if (c->part == 0 && r->nsite < ST_MAX_SITES && CS_VEC_RESERVE(r->site, r->capSite, r->nsite + 1) == 0) {
                st_site *s = &r->site[r->nsite++];
                s->id = c->id;
                s->n = c->nhere < CS_CALLSITE_FRAMES_PER_REC ? (int)c->nhere : CS_CALLSITE_FRAMES_PER_REC;
                memcpy(s->pc, c->pc, sizeof s->pc);
            }
        } else if (kind == CS_REC_SPAN || kind == CS_REC_INFLIGHT) {
            int fly = kind == CS_REC_INFLIGHT;
            uint64_t comm = (x->hdr >> 8) & CS_F_HAS_COMM && x->comm < ST_MAX_LOCAL ? r->local_id[x->comm] : 0;
            uint64_t t = fly ? x->t0 : x->t1;
            if (t > maxtick)
                maxtick = t;
            if (x->op > 0 && x->op < CS_OP_COUNT && cs_ops[x->op].kind == CS_KIND_FINALIZE)
                r->finalized = 1;
            if (comm && ((x->hdr >> 8) & CS_F_HAS_SEQ) && st_is_coll(x->op)) {
                st_seq *q = st_seq_get(r, comm);
                if (q) {
                    if ((int64_t)x->seq > q->entered)
                        q->entered = x->seq;
                    if (!fly && (int64_t)x->seq > q->completed)
                        q->completed = x->seq;
                }
            }
            if (fly) {
                /* the main thread's (the lowest thread index) call */
                if (!r->has_fly || x->tid < r->fly.tid) {
                    r->fly = *x;
                    r->fly_comm = comm;
                    r->has_fly = 1;
                }
            } else if (!r->has_last || x->t1 >= r->last.t1) {
                r->last = *x;
                r->last_comm = comm;
                r->has_last = 1;
            }
        }
    }
    cs_logr_close(lr);
    r->last_real = maxtick ? st_real(r, maxtick) : 0;
    /* alive: a process of this host that still exists */
    char me[64] = "";
    gethostname(me, sizeof me - 1);
    if (strcmp(me, r->host) == 0)
        r->alive = st_pid_alive(r->pid);
    else
        r->alive = -1;
    j->n++;
    return 0;
}

static const char *st_comm_name(const st_job *j, uint64_t id, char *buf, size_t len)
{
    for (size_t i = 0; i < j->nc; i++)
        if (j->c[i].id == id) {
            if (j->c[i].name[0])
                snprintf(buf, len, "%s", j->c[i].name);
            else if (j->c[i].how == CS_COMM_WORLD)
                snprintf(buf, len, "MPI_COMM_WORLD");
            else
                snprintf(buf, len, "comm:%llx (%d ranks)", (unsigned long long)id, j->c[i].size);
            return buf;
        }
    snprintf(buf, len, "comm:%llx", (unsigned long long)id);
    return buf;
}

static int st_world_of(const st_job *j, uint64_t comm, int comm_rank)
{
    for (size_t i = 0; i < j->nc; i++)
        if (j->c[i].id == comm)
            return comm_rank >= 0 && comm_rank < j->c[i].size ? j->c[i].world[comm_rank] : -1;
    return -1;
}

/* "file:line (function)" of rank r's call site id, from its modules file
 * and addr2line; "" when unknown. */
static void st_site_text(const st_job *j, const st_rank *r, uint32_t id, char *buf, size_t len)
{
    buf[0] = '\0';
    const st_site *s = NULL;
    for (size_t i = 0; i < r->nsite && !s; i++)
        if (r->site[i].id == id)
            s = &r->site[i];
    if (!s || !s->n)
        return;
    char mpath[1200];
    snprintf(mpath, sizeof mpath, "%s", r->log);
    char *dot = strrchr(mpath, '.');
    if (dot && strcmp(dot, ".cslog") == 0)
        *dot = '\0';
    strncat(mpath, ".modules", sizeof mpath - strlen(mpath) - 1);
    (void)j;
    for (int k = 0; k < s->n; k++) {
        FILE *f = fopen(mpath, "r");
        if (!f)
            return;
        char line[1400], mod[1100] = "";
        unsigned long long lo, hi, bias, off = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "%llx %llx %llx %1099[^\n]", &lo, &hi, &bias, mod) == 4 && s->pc[k] >= lo &&
                s->pc[k] < hi) {
                off = s->pc[k] - bias;
                break;
            } else {
                mod[0] = '\0';
            }
        fclose(f);
        if (!mod[0] || strstr(mod, "libmpi") || strstr(mod, "libcollscope") || strstr(mod, "libc.so"))
            continue;
        /* the return address points after the call: look up the byte before */
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "addr2line -f -s -e '%s' 0x%llx 2>/dev/null", mod, off ? off - 1 : off);
        if (strchr(mod, '\''))
            return;
        FILE *p = popen(cmd, "r");
        if (!p)
            return;
        char fn[256] = "", fl[256] = "";
        if (fgets(fn, sizeof fn, p) && fgets(fl, sizeof fl, p)) {
            fn[strcspn(fn, "\n")] = '\0';
            fl[strcspn(fl, "\n ")] = '\0';
            if (strncmp(fl, "??", 2) != 0)
                snprintf(buf, len, "%s (%s)", fl, fn);
            else if (strncmp(fn, "??", 2) != 0)
                snprintf(buf, len, "%s", fn);
        }
        pclose(p);
        return;
    }
}

/* BEGIN watchdog (status_hang.c): where the watchdog's stack sample found
 * a rank outside any traced call, appended to buf. */
static void st_wd_sampled(const st_rank *r, char *buf, size_t len)
{
    size_t n = strlen(buf);
    cs_status_hang hs;
    if (n < len && cs_status_hang_read(r->log, &hs) && hs.reason == CS_HANG_IDLE && hs.where[0])
        snprintf(buf + n, len - n, "; the watchdog sampled it in %s", hs.where);
}
/* END watchdog */

/* What rank r is doing, as words: "in MPI_Recv from rank 5 (tag 7) since
 * 61.0 s at train.c:120 (main)". */
static void st_doing(const st_job *j, const st_rank *r, char *buf, size_t len)
{
    char site[300], cn[96];
    if (r->alive == 0 && !r->closed) {
        /* gone without closing its log: killed (SIGKILL, a crash) */
        size_t n = (size_t)snprintf(buf, len, "died without an exit record (killed?)");
        if (r->has_fly && n < len) {
            st_site_text(j, r, r->fly.callsite, site, sizeof site);
            snprintf(buf + n, len - n, " in %s%s%s", st_op(r->fly.op), site[0] ? " at " : "", site);
        } else if (r->has_last && n < len) {
            st_site_text(j, r, r->last.callsite, site, sizeof site);
            snprintf(buf + n, len - n, "; its last call: %s%s%s", st_op(r->last.op), site[0] ? " at " : "", site);
            st_wd_sampled(r, buf, len); /* watchdog */
        }
        return;
    }
    if (r->has_fly) {
        const cs_rec *f = &r->fly;
        double since = (double)(j->now - st_real(r, f->t0)) / 1e9;
        st_site_text(j, r, f->callsite, site, sizeof site);
        int n = snprintf(buf, len, "in %s", st_op(f->op));
        if (st_is_p2p(f->op) && ((f->hdr >> 8) & CS_F_HAS_PEER)) {
            int w = r->fly_comm ? st_world_of(j, r->fly_comm, f->peer) : -1;
            n += snprintf(buf + n, len - (size_t)n, " %s rank %d (tag %d)",
                          cs_ops[f->op].kind == CS_KIND_RECV ? "from" : "with", w >= 0 ? w : f->peer, f->tag);
        } else if (st_is_coll(f->op) && r->fly_comm) {
            n += snprintf(buf + n, len - (size_t)n, " seq %u of %s", f->seq,
                          st_comm_name(j, r->fly_comm, cn, sizeof cn));
        }
        n += snprintf(buf + n, len - (size_t)n, " since %.1f s", since);
        if (site[0])
            snprintf(buf + n, len - (size_t)n, " at %s", site);
        return;
    }
    if (r->closed) {
        snprintf(buf, len, r->finalized ? "finished" : "exited without MPI_Finalize");
        return;
    }
    double since = r->has_last ? (double)(j->now - st_real(r, r->last.t1)) / 1e9 : -1;
    site[0] = '\0';
    if (r->has_last)
        st_site_text(j, r, r->last.callsite, site, sizeof site);
    if (since >= 0)
        snprintf(buf, len, "outside any traced call since %.1f s (its last call: %s%s%s)", since, st_op(r->last.op),
                 site[0] ? " at " : "", site);
    else
        snprintf(buf, len, "outside any traced call (none traced yet)");
    st_wd_sampled(r, buf, len); /* watchdog */
}

static void st_ranks_text(const int *v, int n, char *buf, size_t len)
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

static int st_rank_cmp(const void *x, const void *y)
{
    const st_rank *a = x, *b = y;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

typedef struct st_out {
    FILE *f;
    int json, nd;
    char (*kind)[24];
    char (*text)[1024];
    size_t cap;
} st_out;

static void st_diag(st_out *o, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void st_diag(st_out *o, const char *kind, const char *fmt, ...)
{
    if ((size_t)o->nd >= o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 16;
        void *a = realloc(o->kind, nc * sizeof *o->kind), *b = a ? realloc(o->text, nc * sizeof *o->text) : NULL;
        if (a)
            o->kind = a;
        if (!a || !b)
            return;
        o->text = b;
        o->cap = nc;
    }
    snprintf(o->kind[o->nd], sizeof o->kind[o->nd], "%s", kind);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->text[o->nd], sizeof o->text[o->nd], fmt, ap);
    va_end(ap);
    o->nd++;
}

static const st_rank *st_find(const st_job *j, int rank)
{
    for (size_t i = 0; i < j->n; i++)
        if (j->r[i].rank == rank)
            return &j->r[i];
    return NULL;
}

static int st_stuck(const st_job *j, const st_rank *r, double after)
{
    return r->has_fly && (double)(j->now - st_real(r, r->fly.t0)) / 1e9 >= after;
}

/* " (root R)" for a rooted collective in flight, else "". */
static const char *st_root(const st_rank *r, char *buf, size_t len)
{
    buf[0] = '\0';
    if (r->fly.op > 0 && r->fly.op < CS_OP_COUNT && cs_ops[r->fly.op].kind == CS_KIND_ROOTED)
        snprintf(buf, len, " (root %d)", r->fly.peer);
    return buf;
}

/* The diagnosis of the job (the header comment). */
static void st_diagnose(st_job *j, st_out *o, double after)
{
    int n = (int)j->n;
    char a[1024], b[1024], cn[96];
    int *v = malloc((size_t)(n ? n : 1) * sizeof *v), *w2 = malloc((size_t)(n ? n : 1) * sizeof *w2);
    int *next = malloc((size_t)(n ? n : 1) * sizeof *next);
    if (!v || !w2 || !next)
        goto out;
    /* the wait-for graph: one edge per stuck rank (the first it waits on) */
    for (int i = 0; i < n; i++) {
        next[i] = -1;
        const st_rank *r = &j->r[i];
        if (!st_stuck(j, r, after))
            continue;
        if (st_is_p2p(r->fly.op) && ((r->fly.hdr >> 8) & CS_F_HAS_PEER)) {
            int w = st_world_of(j, r->fly_comm, r->fly.peer);
            for (int k = 0; k < n && w >= 0; k++)
                if (j->r[k].rank == w)
                    next[i] = k;
        } else if (st_is_coll(r->fly.op) && r->fly_comm) {
            for (int k = 0; k < n && next[i] < 0; k++) {
                const st_rank *m = &j->r[k];
                int member = 0;
                for (size_t c = 0; c < j->nc; c++)
                    if (j->c[c].id == r->fly_comm)
                        for (int q = 0; q < j->c[c].size; q++)
                            member |= j->c[c].world[q] == m->rank;
                if (!member || k == i)
                    continue;
                int64_t ent = -1;
                for (size_t q = 0; q < m->nseq; q++)
                    if (m->seq[q].comm == r->fly_comm)
                        ent = m->seq[q].entered;
                if (ent < (int64_t)r->fly.seq)
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
            if (j->r[k].rank < j->r[lo].rank)
                lo = k;
        size_t l = 0;
        int len = 0;
        int k = lo;
        do {
            st_doing(j, &j->r[k], b, sizeof b);
            l += (size_t)snprintf(a + l, sizeof a - l, "rank %d (%s) -> ", j->r[k].rank, b);
            k = next[k];
            len++;
        } while (k != lo && l < sizeof a - 64);
        snprintf(a + l, sizeof a - l, "rank %d", j->r[lo].rank);
        st_diag(o, "deadlock", "deadlock, a cycle of %d ranks: %s", len, a);
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
        const st_rank *r = &j->r[i];
        if (!st_stuck(j, r, after) || !st_is_coll(r->fly.op) || !r->fly_comm)
            continue;
        int first = 1;
        for (int k = 0; k < i; k++) {
            const st_rank *p = &j->r[k];
            if (st_stuck(j, p, after) && st_is_coll(p->fly.op) && p->fly_comm == r->fly_comm &&
                p->fly.seq == r->fly.seq)
                first = 0;
        }
        if (!first)
            continue;
        uint64_t comm = r->fly_comm;
        uint32_t seq = r->fly.seq;
        st_comm_name(j, comm, cn, sizeof cn);
        const st_comm *c = NULL;
        for (size_t q = 0; q < j->nc; q++)
            if (j->c[q].id == comm)
                c = &j->c[q];
        /* who waits in it, with which op and root */
        int nw = 0, nother = 0, nmiss = 0;
        int *miss = w2;
        double since = 0;
        for (int k = 0; k < n; k++) {
            const st_rank *m = &j->r[k];
            if (m->has_fly && st_is_coll(m->fly.op) && m->fly_comm == comm && m->fly.seq == seq) {
                if (m->fly.op == r->fly.op && m->fly.peer == r->fly.peer) {
                    v[nw++] = m->rank;
                    double s2 = (double)(j->now - st_real(m, m->fly.t0)) / 1e9;
                    since = s2 > since ? s2 : since;
                } else {
                    nother++;
                }
            }
        }
        st_ranks_text(v, nw, a, sizeof a);
        if (nother) {
            size_t l = 0;
            char root[32];
            for (int k = 0; k < n; k++) {
                const st_rank *m = &j->r[k];
                if (m->has_fly && st_is_coll(m->fly.op) && m->fly_comm == comm && m->fly.seq == seq &&
                    (m->fly.op != r->fly.op || m->fly.peer != r->fly.peer))
                    l += (size_t)snprintf(b + l, sizeof b - l, "%srank %d in %s%s", l ? ", " : "", m->rank,
                                          st_op(m->fly.op), st_root(m, root, sizeof root));
            }
            st_diag(o, "mismatch", "mismatch at seq %u of %s: rank%s %s in %s%s, but %s", seq, cn, nw > 1 ? "s" : "", a,
                    st_op(r->fly.op), st_root(r, root, sizeof root), b);
            continue;
        }
        for (int q = 0; c && q < c->size; q++) {
            int wr = c->world[q];
            const st_rank *m = wr >= 0 ? st_find(j, wr) : NULL;
            int64_t ent = -1, done = -1;
            for (size_t z = 0; m && z < m->nseq; z++)
                if (m->seq[z].comm == comm)
                    ent = m->seq[z].entered, done = m->seq[z].completed;
            if (m && ent >= (int64_t)seq && done < (int64_t)seq)
                continue; /* in it */
            if (m && done >= (int64_t)seq) {
                st_diag(o, "mismatch",
                        "seq %u of %s: rank %d completed it while ranks %s wait in it (%s): the "
                        "collective counts disagree",
                        seq, cn, wr, a, st_op(r->fly.op));
                continue;
            }
            miss[nmiss++] = wr;
        }
        if (!nmiss)
            continue;
        size_t l = 0;
        for (int q = 0; q < nmiss && l < sizeof b - 200; q++) {
            const st_rank *m = st_find(j, miss[q]);
            char d[600];
            if (m)
                st_doing(j, m, d, sizeof d);
            else
                snprintf(d, sizeof d, "no log of it");
            int is = strncmp(d, "in ", 3) == 0 || strncmp(d, "outside", 7) == 0;
            l += (size_t)snprintf(b + l, sizeof b - l, "%srank %d never entered: it %s%s", q ? "; " : "", miss[q],
                                  is ? "is " : "", d);
        }
        st_diag(o, "missing_rank", "seq %u of %s (%s, %llu B): rank%s %s waiting %.1f s; %s", seq, cn, st_op(r->fly.op),
                (unsigned long long)r->fly.bytes, nw > 1 ? "s" : "", a, since, b);
    }
    /* dead and exited ranks while the job goes on */
    int running = 0;
    for (int i = 0; i < n; i++)
        running += !j->r[i].closed && j->r[i].alive != 0;
    for (int i = 0; i < n; i++) {
        const st_rank *r = &j->r[i];
        if (!r->closed && r->alive == 0) {
            st_doing(j, r, b, sizeof b);
            st_diag(o, "dead_rank", "rank %d (pid %d on %s) %s", r->rank, r->pid, r->host, b);
        } else if (r->closed && !r->finalized && running) {
            st_diag(o, "dead_rank", "rank %d (pid %d on %s) exited without MPI_Finalize while %d rank(s) go on",
                    r->rank, r->pid, r->host, running);
        }
    }
    /* compute: outside any call for long while others are stuck */
    int nstuck = 0;
    for (int i = 0; i < n; i++)
        nstuck += st_stuck(j, &j->r[i], after);
    for (int i = 0; i < n && nstuck; i++) {
        const st_rank *r = &j->r[i];
        if (r->has_fly || r->closed || r->alive == 0 || !r->has_last)
            continue;
        double since = (double)(j->now - st_real(r, r->last.t1)) / 1e9;
        if (since < after)
            continue;
        /* named once already as a missing rank? then only when no collective names it */
        int named = 0;
        char tag[32];
        snprintf(tag, sizeof tag, "rank %d never entered", r->rank);
        for (int d = 0; d < o->nd; d++)
            named |= strstr(o->text[d], tag) != NULL;
        if (named)
            continue;
        st_doing(j, r, b, sizeof b);
        st_diag(o, "compute", "rank %d is %s while %d rank(s) wait", r->rank, b, nstuck);
    }
out:
    free(v);
    free(w2);
    free(next);
}

/* The ranks, alike ones on one line. */
static void st_print_ranks(st_job *j, FILE *f)
{
    int n = (int)j->n;
    char(*line)[700] = malloc((size_t)(n ? n : 1) * sizeof *line);
    int *done = calloc((size_t)(n ? n : 1), sizeof *done), *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!line || !done || !v)
        goto out;
    double *since = malloc((size_t)(n ? n : 1) * sizeof *since);
    if (!since)
        goto out;
    for (int i = 0; i < n; i++) {
        st_doing(j, &j->r[i], line[i], sizeof line[i]);
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
                v[nv++] = j->r[k].rank;
                if (since[k] >= 0) {
                    lo = since[k] < lo ? since[k] : lo;
                    hi = since[k] > hi ? since[k] : hi;
                }
            }
        char rt[512], when[64] = "";
        st_ranks_text(v, nv, rt, sizeof rt);
        if (hi >= 0 && hi - lo >= 0.05)
            snprintf(when, sizeof when, " (for %.1f-%.1f s)", lo, hi);
        else if (hi >= 0)
            snprintf(when, sizeof when, " (for %.1f s)", hi);
        fprintf(f, "  rank%s %s: %s%s\n", nv > 1 ? "s" : "", rt, line[i], when);
    }
    free(since);
out:
    free(line);
    free(done);
    free(v);
}

int cs_status_run(const char *dir, const cs_status_opts *opt, FILE *f, char *err, size_t errlen)
{
    st_job j;
    memset(&j, 0, sizeof j);
    char logs[1200];
    snprintf(logs, sizeof logs, "%s/logs", dir);
    DIR *d = opendir(logs);
    if (!d) {
        snprintf(err, errlen, "%s: no logs folder (%s): not the output folder of collscope run", dir, strerror(errno));
        return 1;
    }
    struct dirent *e;
    int bad = 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 7 || strcmp(e->d_name + l - 6, ".cslog") != 0)
            continue;
        char path[2400], why[512];
        snprintf(path, sizeof path, "%s/%s", logs, e->d_name);
        struct stat sb;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue; /* never a link, a FIFO or a folder */
        if (st_read_log(&j, path, why, sizeof why) != 0) {
            fprintf(stderr, "collscope: status: %s: %s (left out)\n", path, why);
            bad++;
        }
    }
    closedir(d);
    if (j.n == 0) {
        snprintf(err, errlen, "%s: no readable process log%s", logs, bad ? "s" : " (has the job started?)");
        return 1;
    }
    qsort(j.r, j.n, sizeof *j.r, st_rank_cmp);
    j.now = st_now_real();
    st_out o = { f, opt->json, 0, NULL, NULL, 0 };
    st_diagnose(&j, &o, opt->after_s);
    int world = j.r[0].world, finished = 1, running = 0;
    for (size_t i = 0; i < j.n; i++) {
        finished &= j.r[i].closed && j.r[i].finalized;
        running += !j.r[i].closed && j.r[i].alive != 0;
    }
    if (world > 0 && (int)j.n < world && running)
        st_diag(&o, "missing_log",
                "%d of %d ranks have a log (the others never started tracing, or their logs are "
                "on another file system)",
                (int)j.n, world);
    const char *verdict = o.nd ? "hang or failure" : finished ? "finished" : "healthy";
    if (opt->json) {
        fprintf(f, "{\"dir\": ");
        cs_json_str(f, dir);
        fprintf(f, ", \"state\": ");
        cs_json_str(f, verdict);
        fprintf(f, ", \"after_s\": %g, \"ranks\": [", opt->after_s);
        for (size_t i = 0; i < j.n; i++) {
            char b[700];
            st_doing(&j, &j.r[i], b, sizeof b);
            const st_rank *r = &j.r[i];
            fprintf(f, "%s\n  {\"rank\": %d, \"pid\": %d, \"host\": ", i ? "," : "", r->rank, r->pid);
            cs_json_str(f, r->host);
            fprintf(f, ", \"in_call\": %s, \"op\": ", r->has_fly ? "true" : "false");
            cs_json_str(f, r->has_fly ? st_op(r->fly.op) : "");
            fprintf(f, ", \"seq\": %lld, \"since_s\": %.3f, \"doing\": ",
                    r->has_fly && st_is_coll(r->fly.op) ? (long long)r->fly.seq : -1LL,
                    r->has_fly    ? (double)(j.now - st_real(r, r->fly.t0)) / 1e9
                    : r->has_last ? (double)(j.now - st_real(r, r->last.t1)) / 1e9
                                  : -1.0);
            cs_json_str(f, b);
            fprintf(f, "}");
        }
        fprintf(f, "],\n \"diagnosis\": [");
        for (int i = 0; i < o.nd; i++) {
            fprintf(f, "%s\n  {\"kind\": ", i ? "," : "");
            cs_json_str(f, o.kind[i]);
            fprintf(f, ", \"text\": ");
            cs_json_str(f, o.text[i]);
            fprintf(f, "}");
        }
        fprintf(f, "]}\n");
    } else {
        fprintf(f, "collscope status %s: %zu process log(s)%s, %s\n", dir, j.n,
                world > 0 ? "" : " (world size unknown)", verdict);
        st_print_ranks(&j, f);
        for (int i = 0; i < o.nd; i++)
            fprintf(f, "%s: %s\n", o.kind[i], o.text[i]);
        /* per communicator: the highest seq each rank entered and completed */
        if (opt->verbose) {
            for (size_t c = 0; c < j.nc; c++) {
                char cn[96];
                fprintf(f, "  %s:", st_comm_name(&j, j.c[c].id, cn, sizeof cn));
                for (int q = 0; q < j.c[c].size; q++) {
                    const st_rank *m = j.c[c].world[q] >= 0 ? st_find(&j, j.c[c].world[q]) : NULL;
                    int64_t ent = -1, dn = -1;
                    for (size_t z = 0; m && z < m->nseq; z++)
                        if (m->seq[z].comm == j.c[c].id)
                            ent = m->seq[z].entered, dn = m->seq[z].completed;
                    fprintf(f, " %d:%lld/%lld", j.c[c].world[q], (long long)ent, (long long)dn);
                }
                fprintf(f, " (rank:entered/completed)\n");
            }
        }
    }
    int rc = o.nd ? 3 : 0;
    free(o.kind);
    free(o.text);
    for (size_t i = 0; i < j.n; i++) {
        free(j.r[i].seq);
        free(j.r[i].site);
    }
    free(j.r);
    for (size_t i = 0; i < j.nc; i++)
        free(j.c[i].world);
    free(j.c);
    return rc;
}
