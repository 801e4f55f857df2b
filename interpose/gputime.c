/* gputime.c: the GPU begin and end of every NCCL collective, from CUDA
 * events (see cuda_wrap.h).
 *
 * Events come from a pool; an app thread records one before and one after
 * the collective on its stream and queues the pair with the call's
 * correlation id. A poller thread queries the oldest pair (cudaEventQuery:
 * no synchronization of the application's streams), converts the event
 * times to the process clock with a reference event of its own (recorded
 * on its own stream, re-anchored every 10 ms) and writes a GPUTIME
 * record. Any failing CUDA call here turns GPU timing off for the rest of
 * the run, with one warning, and leaves the application's last-error state
 * as it was. COLLSCOPE_GPUTIME=0 turns it off. */
#include "config.h"
#include "interpose/cuda_wrap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int cs_gputime_on = 1;

#define CS_EV_MAX 8192
#define CS_Q_MAX 8192u           /* queued pairs (power of two) */
#define CS_GRP_MAX 256           /* calls of one group */
#define CS_GRP_STREAMS 16

typedef struct cs_gq { uint64_t corr; int a, b; } cs_gq;

static struct {
    pthread_mutex_t lock;        /* pool and queue */
    pthread_mutex_t drain;       /* one drainer at a time */
    cudaEvent_t ev[CS_EV_MAX];
    int refs[CS_EV_MAX];
    int freel[CS_EV_MAX];
    int nfree, ncreated;
    cs_gq q[CS_Q_MAX];
    uint64_t head, tail;
    int state;                   /* 0 untried, 1 ready, -1 off */
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

/* Per thread: the calls of the open NCCL group. */
static __thread struct {
    int n, ns;
    uint64_t corr[CS_GRP_MAX];
    cudaStream_t stream[CS_GRP_MAX];
    cudaStream_t s[CS_GRP_STREAMS];
    int a[CS_GRP_STREAMS];
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
        cs_warn_once(&cs_gt_warned, "%s failed (CUDA error %d); GPU times of collectives are off for the rest "
                     "of this process", what, (int)err);
}

static cudaError_t cs_gt_before(void)
{
    return cs_rt.peek_error ? cs_rt.peek_error() : cudaSuccess;
}

/* Pool: lock held. Creates events on the calling (application) thread. */
static int cs_ev_take_locked(void)
{
    if (G.nfree == 0 && G.ncreated < CS_EV_MAX) {
        int n = G.ncreated + 64 <= CS_EV_MAX ? 64 : CS_EV_MAX - G.ncreated;
        cudaError_t before = cs_gt_before();
        for (int i = 0; i < n; i++) {
            cudaError_t e = cs_rt.event_create(&G.ev[G.ncreated], cudaEventDefault);
            if (e != cudaSuccess) {
                cs_gt_fail("cudaEventCreateWithFlags", e, before);
                return -1;
            }
            G.freel[G.nfree++] = G.ncreated++;
        }
    }
    if (G.nfree == 0)
        return -1;
    int k = G.freel[--G.nfree];
    G.refs[k] = 1;
    return k;
}

static void cs_ev_release_locked(int k)
{
    if (k >= 0 && --G.refs[k] == 0)
        G.freel[G.nfree++] = k;
}

static int cs_gt_record(int k, cudaStream_t s)
{
    cudaError_t before = cs_gt_before();
    cudaError_t e = cs_rt.event_record(G.ev[k], s);
    if (e != cudaSuccess) {
        cs_gt_fail("cudaEventRecord", e, before);
        return -1;
    }
    return 0;
}

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

/* Write GPUTIME records for every completed pair, oldest first. */
static void cs_gt_drain(void)
{
    pthread_mutex_lock(&G.drain);
    if (!__atomic_load_n(&cs_gputime_on, __ATOMIC_ACQUIRE)) {
        pthread_mutex_unlock(&G.drain);
        return;
    }
    if (G.ref_at_ns == 0 || cs__mono_ns() - G.ref_at_ns > 10000000ull)
        if (cs_gt_anchor() != 0) {
            pthread_mutex_unlock(&G.drain);
            return;
        }
    for (;;) {
        pthread_mutex_lock(&G.lock);
        if (G.head == G.tail) {
            pthread_mutex_unlock(&G.lock);
            break;
        }
        cs_gq e = G.q[G.head & (CS_Q_MAX - 1)];
        pthread_mutex_unlock(&G.lock);
        cudaError_t r = cs_rt.event_query(G.ev[e.b]);
        if (r == cudaErrorNotReady)
            break;
        float ma = 0, mb = 0;
        if (r == cudaSuccess)
            r = cs_rt.event_elapsed(&ma, G.ref, G.ev[e.a]);
        if (r == cudaSuccess)
            r = cs_rt.event_elapsed(&mb, G.ref, G.ev[e.b]);
        if (r != cudaSuccess) {
            cs_gt_fail("cudaEventQuery/cudaEventElapsedTime", r, cudaSuccess);
            break;
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
        pthread_mutex_lock(&G.lock);
        G.head++;
        cs_ev_release_locked(e.a);
        cs_ev_release_locked(e.b);
        pthread_mutex_unlock(&G.lock);
    }
    pthread_mutex_unlock(&G.drain);
}

static void *cs_gt_poller(void *arg)
{
    (void)arg;
    cs_busy = 1; /* nothing this thread calls is traced */
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
    const char *env = getenv("COLLSCOPE_GPUTIME");
    if (env && strcmp(env, "0") == 0) {
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
    if (pthread_create(&G.poller, NULL, cs_gt_poller, NULL) != 0) {
        cs_gputime_on = 0;
        cs_warn_once(&cs_gt_warned, "cannot start the GPU timing thread; GPU times of collectives are off");
        pthread_mutex_unlock(&G.lock);
        return 0;
    }
    G.state = 1;
    pthread_mutex_unlock(&G.lock);
    return 1;
}

void cs_gputime_pre_slow(cs_gpu_call *c)
{
    if (CS_UNLIKELY(G.state <= 0) && !cs_gt_init())
        return;
    cudaStream_t s = (cudaStream_t)(uintptr_t)c->x.stream;
    c->x.device = G.device;
    if (cs_gpu_t.depth > 0) {
        /* Grouped: the work starts at ncclGroupEnd. */
        if (cs_grp.n < CS_GRP_MAX) {
            cs_grp.corr[cs_grp.n] = c->x.corr;
            cs_grp.stream[cs_grp.n++] = s;
        }
        return;
    }
    pthread_mutex_lock(&G.lock);
    int a = cs_ev_take_locked();
    pthread_mutex_unlock(&G.lock);
    if (a < 0)
        return;
    if (cs_gt_record(a, s) != 0) {
        pthread_mutex_lock(&G.lock);
        cs_ev_release_locked(a);
        pthread_mutex_unlock(&G.lock);
        return;
    }
    c->ev = a;
}

static void cs_gt_push_locked(uint64_t corr, int a, int b)
{
    if (G.tail - G.head >= CS_Q_MAX) {
        cs_ev_release_locked(a);
        cs_ev_release_locked(b);
        return;
    }
    G.q[G.tail & (CS_Q_MAX - 1)] = (cs_gq){ corr, a, b };
    G.tail++;
}

void cs_gputime_post_slow(cs_gpu_call *c, int ok)
{
    int a = c->ev, b = -1;
    cudaStream_t s = (cudaStream_t)(uintptr_t)c->x.stream;
    if (ok && __atomic_load_n(&cs_gputime_on, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&G.lock);
        b = cs_ev_take_locked();
        pthread_mutex_unlock(&G.lock);
        if (b >= 0 && cs_gt_record(b, s) != 0) {
            pthread_mutex_lock(&G.lock);
            cs_ev_release_locked(b);
            pthread_mutex_unlock(&G.lock);
            b = -1;
        }
    }
    pthread_mutex_lock(&G.lock);
    if (b >= 0)
        cs_gt_push_locked(c->x.corr, a, b);
    else
        cs_ev_release_locked(a);
    pthread_mutex_unlock(&G.lock);
}

void cs_gputime_group_end_pre(void)
{
    cs_grp.ns = 0;
    if (cs_grp.n == 0 || !__atomic_load_n(&cs_gputime_on, __ATOMIC_RELAXED))
        return;
    for (int i = 0; i < cs_grp.n; i++) {
        int j = 0;
        while (j < cs_grp.ns && cs_grp.s[j] != cs_grp.stream[i])
            j++;
        if (j < cs_grp.ns || cs_grp.ns == CS_GRP_STREAMS)
            continue;
        pthread_mutex_lock(&G.lock);
        int a = cs_ev_take_locked();
        pthread_mutex_unlock(&G.lock);
        if (a < 0 || cs_gt_record(a, cs_grp.stream[i]) != 0) {
            pthread_mutex_lock(&G.lock);
            cs_ev_release_locked(a);
            pthread_mutex_unlock(&G.lock);
            continue;
        }
        cs_grp.s[cs_grp.ns] = cs_grp.stream[i];
        cs_grp.a[cs_grp.ns++] = a;
    }
}

void cs_gputime_group_end_post(int ok)
{
    for (int j = 0; j < cs_grp.ns; j++) {
        int a = cs_grp.a[j], b = -1;
        if (ok && __atomic_load_n(&cs_gputime_on, __ATOMIC_RELAXED)) {
            pthread_mutex_lock(&G.lock);
            b = cs_ev_take_locked();
            pthread_mutex_unlock(&G.lock);
            if (b >= 0 && cs_gt_record(b, cs_grp.s[j]) != 0) {
                pthread_mutex_lock(&G.lock);
                cs_ev_release_locked(b);
                pthread_mutex_unlock(&G.lock);
                b = -1;
            }
        }
        pthread_mutex_lock(&G.lock);
        if (b >= 0)
            for (int i = 0; i < cs_grp.n; i++)
                if (cs_grp.stream[i] == cs_grp.s[j]) {
                    G.refs[a]++;
                    G.refs[b]++;
                    cs_gt_push_locked(cs_grp.corr[i], a, b);
                }
        cs_ev_release_locked(a);
        if (b >= 0)
            cs_ev_release_locked(b);
        pthread_mutex_unlock(&G.lock);
    }
    cs_grp.n = cs_grp.ns = 0;
}

/* At exit (core.c, before the log closes): stop the poller and write what
 * completed. Waits at most 2 s for outstanding work. */
void cs_gpu_flush(void)
{
    if (G.state <= 0)
        return;
    __atomic_store_n(&G.stop, 1, __ATOMIC_RELEASE);
    pthread_join(G.poller, NULL);
    G.flushing = 1;
    for (int i = 0; i < 2000 && __atomic_load_n(&cs_gputime_on, __ATOMIC_ACQUIRE); i++) {
        cs_gt_drain();
        pthread_mutex_lock(&G.lock);
        int empty = G.head == G.tail;
        pthread_mutex_unlock(&G.lock);
        if (empty)
            break;
        cs_sleep_us(1000);
    }
}
