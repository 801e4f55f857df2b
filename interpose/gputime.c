/* gputime.c: the GPU begin and end of every NCCL collective, from CUDA
 * events (see gputime.h).
 *
 * Each application thread that issues collectives owns a ring (made at
 * its first collective, adopted by a later thread once it exits): its
 * event pairs, a queue of issued calls (single producer: that thread;
 * single consumer: the poller) and a queue of pairs given back (the other
 * way round), so the call path takes no lock and makes no system call. A
 * thread takes a given-back pair (or makes one, up to CS_GT_PAIRS), records
 * its first event before the collective and the second after it, on the
 * collective's stream, then queues the pair with the call's correlation
 * id. The poller queries the oldest entry of each ring (cudaEventQuery: no
 * synchronization of the application's streams), converts the event times
 * to the process clock with a reference event of its own (recorded on its
 * own stream, re-anchored every 10 ms), writes a GPUTIME record and gives
 * the pair back after its last entry. An entry whose work is still not
 * done CS_GPUPEND_NS after the poller first found it pending (the
 * oldest of its ring: the ring waits on it) gets a GPUPEND record, so
 * that a reader outside the process, or after its death, knows the
 * collective is in flight on the GPU; another once its begin event
 * completes (the work started). The call path does nothing more for it:
 * what the record does not say (op, communicator, sequence number, bytes,
 * stream, enqueue time) is in the call's SPANX and span, joined by the
 * correlation id. Any failing CUDA call here
 * turns GPU timing off for the rest of the run, with one warning, and
 * leaves the application's last-error state as it was.
 * COLLSCOPE_GPUTIME=0 turns it off. Every entry point that can reach a
 * CUDA call or an allocation keeps errno as it found it. */
#include "config.h"
#include "interpose/cuda_wrap.h"
#include "interpose/gputime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cs_gputime_on = 1;

#define CS_GT_PAIRS 4096u /* event pairs per thread (power of two) */
#define CS_GT_ENTS 8192u  /* queued calls per thread (power of two) */
#define CS_GRP_MAX 256    /* calls of one group */
#define CS_GRP_STREAMS 16

/* A queued call: the pair that timed it; corr 0 = none (the pair is only
 * given back). `last`: the pair's last entry (grouped calls share one). */
typedef struct cs_gt_ent {
    uint64_t corr;
    uint32_t pair, last;
} cs_gt_ent;

typedef struct cs_gt_ring {
    struct cs_gt_ring *next; /* every ring, newest first (never removed) */
    int orphan;              /* its thread exited: the next new thread adopts it (atomic) */
    /* The owning thread's. */
    uint64_t etail; /* entries queued (release) */
    uint64_t ehead_seen;
    uint64_t fhead, ftail_seen; /* given-back pairs taken */
    uint32_t made;              /* pairs made */
    int spare;                  /* a pair taken and not used, -1 = none */
    /* The poller's. */
    uint64_t ehead __attribute__((aligned(64))); /* entries done (release) */
    uint64_t ftail;                              /* pairs given back (release) */
    uint64_t fl_ent;                             /* oldest entry found not done + 1, 0 = none */
    uint64_t fl_seen;                            /* when it was first found not done (ticks) */
    int fl_state;                                /* its GPUPEND: 0 none, 1 not begun, 2 begun */
    cudaEvent_t ev[CS_GT_PAIRS][2] __attribute__((aligned(64)));
    cs_gt_ent ent[CS_GT_ENTS];
    uint32_t freed[CS_GT_PAIRS]; /* given back; never overflows: there are CS_GT_PAIRS pairs */
} cs_gt_ring;

static struct {
    pthread_mutex_t lock;  /* set-up only */
    pthread_mutex_t drain; /* one drainer at a time */
    cs_gt_ring *rings;     /* (atomic) */
    pthread_key_t key;     /* orphans a ring at its thread's exit */
    int state;             /* 0 untried, 1 ready, -1 off */
    int device;
    int stop, flushing;
    pthread_t poller;
    /* The reference: event ref ran at tick ref_ticks. */
    cudaEvent_t ref;
    cudaStream_t own;
    uint64_t ref_ticks;
    uint64_t ref_at_ns;
    double tpn;
} G = { .lock = PTHREAD_MUTEX_INITIALIZER, .drain = PTHREAD_MUTEX_INITIALIZER };

static __thread cs_gt_ring *cs_gt_me __attribute__((tls_model("initial-exec")));

/* Per thread: the calls of the open NCCL group, and the pair taken for
 * each of its streams. */
static __thread struct {
    int n, ns;
    uint64_t corr[CS_GRP_MAX];
    cudaStream_t stream[CS_GRP_MAX];
    cudaStream_t s[CS_GRP_STREAMS];
    uint32_t pair[CS_GRP_STREAMS];
} cs_grp;

static int cs_gt_warned;

/* A CUDA call of ours failed: off, one warning, and the application's
 * last error as it was before (when it was clear). */
static void cs_gt_fail(const char *what, cudaError_t err, cudaError_t before)
{
    if (before == cudaSuccess && cs_rt.get_error)
        cs_rt.get_error();
    __atomic_store_n(&cs_gputime_on, 0, __ATOMIC_RELEASE);
    if (!G.flushing)
        cs_warn_once(&cs_gt_warned,
                     "%s failed (CUDA error %d); GPU times of collectives are off for the rest "
                     "of this process",
                     what, (int)err);
}

static cudaError_t cs_gt_before(void)
{
    return cs_rt.peek_error ? cs_rt.peek_error() : cudaSuccess;
}

static int cs_gt_record(cudaEvent_t ev, cudaStream_t s)
{
    cudaError_t before = cs_gt_before();
    cudaError_t e = cs_rt.event_record(ev, s);
    if (CS_UNLIKELY(e != cudaSuccess)) {
        cs_gt_fail("cudaEventRecord", e, before);
        return -1;
    }
    return 0;
}

/* ---- the calling thread's ring (producer side) ---- */

static void cs_gt_orphan(void *p)
{
    __atomic_store_n(&((cs_gt_ring *)p)->orphan, 1, __ATOMIC_RELEASE);
}

/* This thread's ring: an orphan's, else a new one. NULL without memory. */
static __attribute__((noinline)) cs_gt_ring *cs_gt_ring_new(void)
{
    cs_gt_ring *r = __atomic_load_n(&G.rings, __ATOMIC_ACQUIRE);
    for (; r; r = r->next) {
        int one = 1;
        if (__atomic_load_n(&r->orphan, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&r->orphan, &one, 0, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            break;
    }
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return NULL;
        r->spare = -1;
        r->next = __atomic_load_n(&G.rings, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&G.rings, &r->next, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            ;
    }
    pthread_setspecific(G.key, r);
    cs_gt_me = r;
    return r;
}

/* Room for n more entries. */
static inline int cs_gt_room(cs_gt_ring *r, unsigned n)
{
    if (r->etail + n - r->ehead_seen <= CS_GT_ENTS)
        return 1;
    r->ehead_seen = __atomic_load_n(&r->ehead, __ATOMIC_ACQUIRE);
    return r->etail + n - r->ehead_seen <= CS_GT_ENTS;
}

/* A free pair: the spare, else one given back, else a new one; -1 when
 * all CS_GT_PAIRS are in flight (the call goes untimed). */
static inline int cs_gt_take(cs_gt_ring *r)
{
    int p = r->spare;
    if (p >= 0) {
        r->spare = -1;
        return p;
    }
    if (r->fhead == r->ftail_seen)
        r->ftail_seen = __atomic_load_n(&r->ftail, __ATOMIC_ACQUIRE);
    if (CS_LIKELY(r->fhead != r->ftail_seen))
        return (int)r->freed[r->fhead++ & (CS_GT_PAIRS - 1)];
    if (r->made == CS_GT_PAIRS)
        return -1;
    p = (int)r->made;
    cudaError_t before = cs_gt_before();
    for (int i = 0; i < 2; i++) {
        cudaError_t e = r->ev[p][i] ? cudaSuccess : cs_rt.event_create(&r->ev[p][i], cudaEventDefault);
        if (e != cudaSuccess) {
            cs_gt_fail("cudaEventCreateWithFlags", e, before);
            return -1;
        }
    }
    r->made++;
    return p;
}

/* Queue an entry (room checked before the pair was taken). */
static inline void cs_gt_push(cs_gt_ring *r, uint64_t corr, uint32_t pair, int last)
{
    r->ent[r->etail & (CS_GT_ENTS - 1)] = (cs_gt_ent){ corr, pair, (uint32_t)last };
    __atomic_store_n(&r->etail, r->etail + 1, __ATOMIC_RELEASE);
}

/* ---- the poller (consumer side) ---- */

static void cs_sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

/* Anchor: the tick at which the reference event ran on the tool's own
 * stream; the middle of the narrowest of three record..synchronize
 * windows. Poller thread (or the flush), drain lock held. */
static int cs_gt_anchor(void)
{
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = cs_clock_ticks();
        cudaError_t e = cs_rt.event_record(G.ref, G.own);
        if (e == cudaSuccess)
            e = cs_rt.event_sync(G.ref);
        uint64_t t1 = cs_clock_ticks();
        if (e != cudaSuccess) {
            cs_gt_fail("the reference event", e, cudaSuccess);
            return -1;
        }
        /* The times are taken against the last record: accept a narrow
         * window, or the third. */
        if (i == 2 || (double)(t1 - t0) < 20000.0 * G.tpn) {
            G.ref_ticks = t0 + (t1 - t0) / 2;
            break;
        }
    }
    G.ref_at_ns = cs__mono_ns();
    return 0;
}

/* Entry h, the oldest of ring r (t: the ring's tail), is not done. Note
 * when it was first found so; once it is CS_GPUPEND_NS older, a
 * GPUPEND record for it and for the calls of its group (the entries that
 * share its event pair), and again when its begin event completes. */
static void cs_gt_flight(cs_gt_ring *r, uint64_t h, uint64_t t, const cs_gt_ent *e)
{
    uint64_t now = cs_clock_ticks();
    if (r->fl_ent != h + 1) {
        r->fl_ent = h + 1;
        r->fl_seen = now;
        r->fl_state = 0;
        return;
    }
    if (r->fl_state == 2 || (double)(now - r->fl_seen) < (double)CS_GPUPEND_NS * G.tpn)
        return;
    cudaEvent_t a = r->ev[e->pair][0];
    cudaError_t rc = cs_rt.event_query(a);
    if (rc != cudaSuccess && rc != cudaErrorNotReady)
        return; /* the end event's query will tell */
    int begun = rc == cudaSuccess;
    if (r->fl_state == 1 && !begun)
        return;
    float ma = 0;
    uint64_t g0 = 0;
    if (begun && cs_rt.event_elapsed(&ma, G.ref, a) == cudaSuccess)
        g0 = (uint64_t)((double)G.ref_ticks + (double)ma * 1e6 * G.tpn);
    for (uint64_t k = h; k != t; k++) {
        cs_gt_ent x = r->ent[k & (CS_GT_ENTS - 1)];
        if (x.pair != e->pair)
            break;
        cs_rec_gpupend *f = x.corr ? (cs_rec_gpupend *)cs_log_slot() : NULL;
        if (f) {
            f->begun = (uint16_t)begun;
            f->tid = cs__log_tls.tid;
            f->corr = x.corr;
            f->g0 = g0;
            f->seen = r->fl_seen;
            f->at = now;
            f->behind = (uint32_t)(t - k - 1);
            memset(f->pad, 0, sizeof f->pad);
            cs_log_commit(f, CS_REC_HDR(CS_REC_GPUPEND, 0));
        }
        if (x.last)
            break;
    }
    r->fl_state = begun ? 2 : 1;
}

/* Write GPUTIME records for the completed entries of one ring, oldest
 * first. -1 when timing went off. */
static int cs_gt_drain_ring(cs_gt_ring *r)
{
    uint64_t h = r->ehead, t = __atomic_load_n(&r->etail, __ATOMIC_ACQUIRE);
    for (; h != t; h++) {
        cs_gt_ent e = r->ent[h & (CS_GT_ENTS - 1)];
        if (e.corr) {
            cudaEvent_t a = r->ev[e.pair][0], b = r->ev[e.pair][1];
            cudaError_t rc = cs_rt.event_query(b);
            if (rc == cudaErrorNotReady) {
                cs_gt_flight(r, h, t, &e);
                break;
            }
            float ma = 0, mb = 0;
            if (rc == cudaSuccess)
                rc = cs_rt.event_elapsed(&ma, G.ref, a);
            if (rc == cudaSuccess)
                rc = cs_rt.event_elapsed(&mb, G.ref, b);
            if (rc != cudaSuccess) {
                cs_gt_fail("cudaEventQuery/cudaEventElapsedTime", rc, cudaSuccess);
                __atomic_store_n(&r->ehead, h, __ATOMIC_RELEASE);
                return -1;
            }
            cs_rec_gputime *g = (cs_rec_gputime *)cs_log_slot();
            if (g) {
                g->source = 1;
                g->tid = cs__log_tls.tid;
                g->corr = e.corr;
                g->g0 = (uint64_t)((double)G.ref_ticks + (double)ma * 1e6 * G.tpn);
                g->g1 = (uint64_t)((double)G.ref_ticks + (double)mb * 1e6 * G.tpn);
                g->algo = 0;
                cs_log_commit(g, CS_REC_HDR(CS_REC_GPUTIME, 0));
            }
        }
        if (e.last) {
            r->freed[r->ftail & (CS_GT_PAIRS - 1)] = e.pair;
            __atomic_store_n(&r->ftail, r->ftail + 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&r->ehead, h, __ATOMIC_RELEASE);
    return 0;
}

/* Drain every ring. Returns 1 when all are empty. */
static int cs_gt_drain(void)
{
    int empty = 1;
    pthread_mutex_lock(&G.drain);
    if (!__atomic_load_n(&cs_gputime_on, __ATOMIC_ACQUIRE)) {
        pthread_mutex_unlock(&G.drain);
        return 1;
    }
    if (G.ref_at_ns == 0 || cs__mono_ns() - G.ref_at_ns > 10000000ull)
        if (cs_gt_anchor() != 0) {
            pthread_mutex_unlock(&G.drain);
            return 1;
        }
    for (cs_gt_ring *r = __atomic_load_n(&G.rings, __ATOMIC_ACQUIRE); r; r = r->next) {
        if (cs_gt_drain_ring(r) != 0)
            break;
        if (r->ehead != __atomic_load_n(&r->etail, __ATOMIC_ACQUIRE))
            empty = 0;
    }
    pthread_mutex_unlock(&G.drain);
    return empty;
}

static void *cs_gt_poller(void *arg)
{
    (void)arg;
    cs_core_busy = 1; /* nothing this thread calls is traced */
    if (cs_rt.set_device(G.device) != cudaSuccess) {
        cs_gt_fail("cudaSetDevice (poller)", cudaErrorUnknown, cudaSuccess);
        return NULL;
    }
    while (!__atomic_load_n(&G.stop, __ATOMIC_ACQUIRE) && __atomic_load_n(&cs_gputime_on, __ATOMIC_ACQUIRE)) {
        cs_gt_drain();
        cs_sleep_us(500);
    }
    return NULL;
}

/* First collective of the process: the runtime, the device, the tool's own
 * stream and reference event, the poller. */
static int cs_gt_init(void)
{
    pthread_mutex_lock(&G.lock);
    if (G.state != 0) {
        pthread_mutex_unlock(&G.lock);
        return G.state > 0;
    }
    G.state = -1;
    if (!cs_settings_get()->gputime) {
        cs_gputime_on = 0;
        pthread_mutex_unlock(&G.lock);
        return 0;
    }
    if (!cs_cudart_load()) {
        cs_gputime_on = 0;
        cs_warn_once(&cs_gt_warned, "no CUDA runtime found; GPU times of collectives are off");
        pthread_mutex_unlock(&G.lock);
        return 0;
    }
    cudaError_t before = cs_gt_before();
    cudaError_t e = cs_rt.get_device(&G.device);
    if (e == cudaSuccess)
        e = cs_rt.stream_create(&G.own, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cs_rt.event_create(&G.ref, cudaEventDefault);
    if (e != cudaSuccess) {
        cs_gt_fail("setting up GPU timing (cudaGetDevice/cudaStreamCreate/cudaEventCreate)", e, before);
        pthread_mutex_unlock(&G.lock);
        return 0;
    }
    cs_log_header *h = cs_log_header_ptr();
    G.tpn = h && h->ticks_per_ns > 0 ? h->ticks_per_ns : 1.0;
    if (pthread_key_create(&G.key, cs_gt_orphan) != 0 || pthread_create(&G.poller, NULL, cs_gt_poller, NULL) != 0) {
        cs_gputime_on = 0;
        cs_warn_once(&cs_gt_warned, "cannot start the GPU timing thread; GPU times of collectives are off");
        pthread_mutex_unlock(&G.lock);
        return 0;
    }
    G.state = 1;
    pthread_mutex_unlock(&G.lock);
    return 1;
}

/* ---- the call path ---- */

void cs_gputime_pre_slow(cs_gpu_call *c)
{
    int saved = errno;
    if (CS_UNLIKELY(__atomic_load_n(&G.state, __ATOMIC_ACQUIRE) <= 0) && !cs_gt_init())
        goto out;
    cudaStream_t s = (cudaStream_t)(uintptr_t)c->x.stream;
    c->x.device = G.device;
    if (cs_gpu_t.depth > 0) {
        /* Grouped: the work starts at ncclGroupEnd. */
        if (cs_grp.n < CS_GRP_MAX) {
            cs_grp.corr[cs_grp.n] = c->x.corr;
            cs_grp.stream[cs_grp.n++] = s;
        }
        goto out;
    }
    cs_gt_ring *r = cs_gt_me;
    if (CS_UNLIKELY(!r) && !(r = cs_gt_ring_new()))
        goto out;
    int p;
    if (!cs_gt_room(r, 1) || (p = cs_gt_take(r)) < 0)
        goto out;
    if (cs_gt_record(r->ev[p][0], s) != 0) {
        r->spare = p;
        goto out;
    }
    c->ev = p;
out:
    errno = saved;
}

void cs_gputime_post_slow(cs_gpu_call *c, int ok)
{
    int saved = errno;
    cs_gt_ring *r = cs_gt_me;
    uint32_t p = (uint32_t)c->ev;
    uint64_t corr = 0;
    if (ok && __atomic_load_n(&cs_gputime_on, __ATOMIC_RELAXED) &&
        cs_gt_record(r->ev[p][1], (cudaStream_t)(uintptr_t)c->x.stream) == 0)
        corr = c->x.corr;
    cs_gt_push(r, corr, p, 1);
    errno = saved;
}

void cs_gputime_group_end_pre(void)
{
    cs_grp.ns = 0;
    if (cs_grp.n == 0 || !__atomic_load_n(&cs_gputime_on, __ATOMIC_RELAXED))
        return;
    int saved = errno;
    cs_gt_ring *r = cs_gt_me;
    if (!r && !(r = cs_gt_ring_new()))
        goto out;
    /* Room for every call, and a pair-only entry per stream. */
    if (!cs_gt_room(r, CS_GRP_MAX + CS_GRP_STREAMS))
        goto out;
    for (int i = 0; i < cs_grp.n; i++) {
        int j = 0;
        while (j < cs_grp.ns && cs_grp.s[j] != cs_grp.stream[i])
            j++;
        if (j < cs_grp.ns || cs_grp.ns == CS_GRP_STREAMS)
            continue;
        int p = cs_gt_take(r);
        if (p < 0)
            break;
        if (cs_gt_record(r->ev[p][0], cs_grp.stream[i]) != 0) {
            r->spare = p;
            break;
        }
        cs_grp.s[cs_grp.ns] = cs_grp.stream[i];
        cs_grp.pair[cs_grp.ns++] = (uint32_t)p;
    }
out:
    errno = saved;
}

void cs_gputime_group_end_post(int ok)
{
    int saved = errno;
    cs_gt_ring *r = cs_gt_me;
    for (int j = 0; j < cs_grp.ns; j++) {
        uint32_t p = cs_grp.pair[j];
        int timed =
            ok && __atomic_load_n(&cs_gputime_on, __ATOMIC_RELAXED) && cs_gt_record(r->ev[p][1], cs_grp.s[j]) == 0;
        int last = -1;
        if (timed)
            for (int i = 0; i < cs_grp.n; i++)
                if (cs_grp.stream[i] == cs_grp.s[j])
                    last = i;
        if (last < 0) {
            cs_gt_push(r, 0, p, 1);
            continue;
        }
        for (int i = 0; i <= last; i++)
            if (cs_grp.stream[i] == cs_grp.s[j])
                cs_gt_push(r, cs_grp.corr[i], p, i == last);
    }
    cs_grp.n = cs_grp.ns = 0;
    errno = saved;
}

/* At exit, before the log closes: stop the poller and write what
 * completed. Waits at most 2 s for outstanding work. */
static void cs_gputime_flush(void)
{
    if (__atomic_load_n(&G.state, __ATOMIC_ACQUIRE) <= 0)
        return;
    __atomic_store_n(&G.stop, 1, __ATOMIC_RELEASE);
    pthread_join(G.poller, NULL);
    G.flushing = 1;
    for (int i = 0; i < 2000 && __atomic_load_n(&cs_gputime_on, __ATOMIC_ACQUIRE); i++) {
        if (cs_gt_drain())
            break;
        cs_sleep_us(1000);
    }
}

const cs_module cs_gputime_module = {
    .name = "gputime",
    .flush = cs_gputime_flush,
};
