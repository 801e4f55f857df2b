/* ncclprof.c: the preload library as an NCCL profiler plugin
 * (NCCL_PROFILER_PLUGIN=/path/to/collscope-*.so): per collective, the
 * algorithm, protocol and channel count NCCL chose and when its kernel ran
 * on the GPU, written as GPUTIME records (source 2) joined to the
 * collective's span by its correlation id.
 *
 * Matching: the collective wrappers note each call they issue on a
 * per-thread list (cs_ncclprof_note; cleared at each call outside a group
 * and at each new group). NCCL starts a collective event on the thread
 * that launches it (in the call, or at ncclGroupEnd for grouped calls, in
 * its own order): the event takes the first noted call of the same
 * function and count, else of the same function. Unmatched events get no
 * handle (NCCL then skips their children).
 *
 * GPU time: each kernel-channel event carries the GPU globaltimer (ns) at
 * the channel's start and end; the collective's GPU time is the first
 * start and last end over its channels. Kernel-channel events may end
 * after the collective event, on another thread: the handle counts its
 * open events and the last one to close writes the record. The globaltimer
 * follows the host's CLOCK_REALTIME (the driver sets it from it); times are
 * converted to the process clock through a reading of both clocks, taken
 * again every 10 ms on each thread that writes records. */
#include "config.h"
#include "interpose/gpu_wrap.h"
#include "interpose/ncclprof.h"

#include <stdlib.h>
#include <strings.h>
#include <time.h>

int cs_ncclprof_on;
__thread int cs_ncclprof_alone;

/* The note of collscope's own calls (cs_ncclprof_own): matched, no handle. */
#define CS_NP_OWN UINT64_MAX

#define CS_NP_PEND 256

/* Per thread: the collectives issued and not yet matched. */
typedef struct cs_np_call {
    uint64_t corr;
    uint32_t count;
    int32_t root;
    uint16_t op;
} cs_np_call;
static __thread struct {
    int n;
    uint32_t grp;
    cs_np_call call[CS_NP_PEND];
} cs_np_t __attribute__((tls_model("initial-exec")));

/* A collective event's handle; its kernel channels' handles are the same
 * address + 1. */
typedef struct cs_np_ev {
    uint64_t corr;
    uint64_t g0, g1; /* globaltimer: first channel start, last end */
    uint32_t packed; /* CS_NP_PACK(algo, proto, channels) */
    int refs;        /* open events: the collective and its channels */
} cs_np_ev;

#define CS_NP_CH_TAG 1u

static int cs_np_dummy_ctx;

/* Per thread: freed handles for reuse (a handle may be freed on another
 * thread than the one that took it; it then joins that thread's cache),
 * the last function, algorithm and protocol names seen (NCCL passes the
 * same strings each time), and a reading of CLOCK_REALTIME and the
 * process clock, renewed every 10 ms, to convert GPU times. */
#define CS_NP_CACHE 64
static __thread struct {
    int n;
    cs_np_ev *ev[CS_NP_CACHE];
    const char *func;
    uint16_t func_op;
    const char *algo, *proto;
    uint32_t algo_ix, proto_ix;
    uint64_t ref_ticks;
    double ref_real;
    double tpn;
} cs_np_c __attribute__((tls_model("initial-exec")));

static cs_np_ev *cs_np_alloc(void)
{
    return cs_np_c.n > 0 ? cs_np_c.ev[--cs_np_c.n] : malloc(sizeof(cs_np_ev));
}

static void cs_np_free(cs_np_ev *e)
{
    if (cs_np_c.n < CS_NP_CACHE)
        cs_np_c.ev[cs_np_c.n++] = e;
    else
        free(e);
}

void cs_ncclprof_note(cs_gpu_call *c)
{
    int kind = cs_ops[c->rec.op].kind;
    if (kind != CS_KIND_COLL && kind != CS_KIND_ROOTED)
        return;
    if (cs_gpu_t.depth == 0 || cs_np_t.grp != cs_gpu_t.grp) {
        cs_np_t.n = 0;
        cs_np_t.grp = cs_gpu_t.grp;
    }
    if (cs_np_t.n == CS_NP_PEND)
        return;
    cs_np_t.call[cs_np_t.n++] = (cs_np_call){
        .corr = c->x.corr,
        .count = c->rec.count,
        .root = (c->flags & CS_F_HAS_PEER) ? c->rec.peer : -1,
        .op = c->rec.op,
    };
}

void cs_ncclprof_forget(uint64_t corr)
{
    if (cs_gpu_t.depth == 0 || cs_np_t.grp != cs_gpu_t.grp)
        return; /* not this group's: the list is another group's, or reset */
    for (int i = 0; i < cs_np_t.n; i++)
        if (cs_np_t.call[i].corr == corr) {
            cs_np_t.call[i].corr = 0;
            return;
        }
}

void cs_ncclprof_own(uint32_t count)
{
    if (cs_gpu_t.depth == 0 || cs_np_t.grp != cs_gpu_t.grp) {
        cs_np_t.n = 0;
        cs_np_t.grp = cs_gpu_t.grp;
    }
    if (cs_np_t.n == CS_NP_PEND)
        return;
    cs_np_t.call[cs_np_t.n++] =
        (cs_np_call){ .corr = CS_NP_OWN, .count = count, .root = -1, .op = CS_OP_ncclAllReduce };
}

/* NCCL's function name ("AllReduce") against a wrapped op ("ncclAllReduce"). */
static int cs_np_same_func(uint16_t op, const char *func)
{
    if (func == cs_np_c.func && op == cs_np_c.func_op)
        return 1;
    const char *name = cs_ops[op].name;
    if (strncmp(name, "nccl", 4) == 0)
        name += 4;
    if (strcasecmp(name, func) != 0 && !(op == CS_OP_ncclBcast && strcasecmp(func, "Broadcast") == 0))
        return 0;
    cs_np_c.func = func;
    cs_np_c.func_op = op;
    return 1;
}

/* The correlation id of the noted call this collective event is, 0 = none. */
static uint64_t cs_np_match(const cs_np_coll *d)
{
    if (!d->func)
        return 0;
    uint32_t count = d->count > 0xffffffffu ? 0xffffffffu : (uint32_t)d->count;
    int by_name = -1;
    for (int i = 0; i < cs_np_t.n; i++) {
        cs_np_call *k = &cs_np_t.call[i];
        if (k->corr == 0 || !cs_np_same_func(k->op, d->func))
            continue;
        if (k->count == count && (k->root < 0 || k->root == d->root)) {
            by_name = i;
            break;
        }
        if (by_name < 0)
            by_name = i;
    }
    if (by_name < 0)
        return 0;
    uint64_t corr = cs_np_t.call[by_name].corr;
    cs_np_t.call[by_name].corr = 0;
    return corr;
}

static uint32_t cs_np_index(const char *s, const char *const *names, unsigned n)
{
    if (!s)
        return 0;
    for (unsigned i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i + 1;
    return 0xff; /* a name this build does not know */
}

static void cs_np_write(cs_np_ev *e)
{
    if (!__atomic_load_n(&cs_core_tracing, __ATOMIC_ACQUIRE)) /* the log is closing (exit) */
        return;
    cs_rec_gputime *g = (cs_rec_gputime *)cs_log_slot();
    if (!g)
        return;
    g->source = 2;
    g->tid = cs__log_tls.tid;
    g->corr = e->corr;
    g->g0 = g->g1 = 0;
    if (e->g0 != UINT64_MAX && e->g1 >= e->g0) {
        uint64_t now = cs_clock_ticks();
        if (cs_np_c.ref_ticks == 0 || (double)(now - cs_np_c.ref_ticks) > 1e7 * cs_np_c.tpn) {
            cs_log_header *h = cs_log_header_ptr();
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            cs_np_c.tpn = h && h->ticks_per_ns > 0 ? h->ticks_per_ns : 1.0;
            cs_np_c.ref_ticks = now;
            cs_np_c.ref_real = (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
        }
        double tpn = cs_np_c.tpn;
        double t0 = (double)cs_np_c.ref_ticks + ((double)e->g0 - cs_np_c.ref_real) * tpn;
        double t1 = (double)cs_np_c.ref_ticks + ((double)e->g1 - cs_np_c.ref_real) * tpn;
        if (t0 > 0) {
            g->g0 = (uint64_t)t0;
            g->g1 = (uint64_t)t1;
        }
    }
    g->algo = e->packed;
    cs_log_commit(g, CS_REC_HDR(CS_REC_GPUTIME, 0));
}

static void cs_np_unref(cs_np_ev *e)
{
    if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        cs_np_write(e);
        cs_np_free(e);
    }
}

static int cs_np_init(int *mask)
{
    /* Only when this library traces the process (it is the LD_PRELOAD,
     * whose NCCL wrappers started tracing before the communicator). */
    int on = __atomic_load_n(&cs_core_tracing, __ATOMIC_ACQUIRE) && cs_gpu_start_state >= 0;
    if (mask)
        *mask = on ? CS_NP_COLL | CS_NP_KERNEL_CH : 0;
    if (on)
        __atomic_store_n(&cs_ncclprof_on, 1, __ATOMIC_RELEASE);
    return on;
}

static void cs_np_start(void **handle, uint64_t type, void *parent, const cs_np_coll *coll, const cs_np_kernel_ch *kch)
{
    static const char *const algos[] = { CS_NP_ALGOS };
    static const char *const protos[] = { CS_NP_PROTOS };
    *handle = NULL;
    if (type == CS_NP_COLL) {
        if (cs_ncclprof_alone)
            return; /* collscope's own call (the guard's vote): no program call's */
        uint64_t corr = cs_np_match(coll);
        if (!corr || corr == CS_NP_OWN)
            return;
        cs_np_ev *e = cs_np_alloc();
        if (!e)
            return;
        e->corr = corr;
        e->g0 = UINT64_MAX;
        e->g1 = 0;
        if (coll->algo != cs_np_c.algo) {
            cs_np_c.algo_ix = cs_np_index(coll->algo, algos, sizeof algos / sizeof *algos);
            cs_np_c.algo = coll->algo;
        }
        if (coll->proto != cs_np_c.proto) {
            cs_np_c.proto_ix = cs_np_index(coll->proto, protos, sizeof protos / sizeof *protos);
            cs_np_c.proto = coll->proto;
        }
        e->packed = CS_NP_PACK(cs_np_c.algo_ix, cs_np_c.proto_ix, coll->nChannels);
        e->refs = 1;
        *handle = e;
    } else if (type == CS_NP_KERNEL_CH) {
        if (!parent || ((uintptr_t)parent & CS_NP_CH_TAG))
            return;
        cs_np_ev *e = parent;
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
        uint64_t cur = __atomic_load_n(&e->g0, __ATOMIC_RELAXED);
        while (kch->pTimer < cur &&
               !__atomic_compare_exchange_n(&e->g0, &cur, kch->pTimer, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
        *handle = (char *)e + CS_NP_CH_TAG;
    }
}

static ncclResult_t cs_np_stop(void *handle)
{
    if (!handle)
        return ncclSuccess;
    cs_np_unref((cs_np_ev *)((uintptr_t)handle & ~(uintptr_t)CS_NP_CH_TAG));
    return ncclSuccess;
}

static ncclResult_t cs_np_state(void *handle, int state, cs_np_state_args *args)
{
    if (!handle || !((uintptr_t)handle & CS_NP_CH_TAG) || state != CS_NP_STATE_KERNEL_CH_STOP || !args)
        return ncclSuccess;
    cs_np_ev *e = (cs_np_ev *)((uintptr_t)handle & ~(uintptr_t)CS_NP_CH_TAG);
    uint64_t t = args->kernelCh.pTimer, cur = __atomic_load_n(&e->g1, __ATOMIC_RELAXED);
    while (t > cur && !__atomic_compare_exchange_n(&e->g1, &cur, t, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    return ncclSuccess;
}

static ncclResult_t cs_np_finalize(void *context)
{
    (void)context;
    return ncclSuccess;
}

/* ---- version 5 ---- */
static ncclResult_t cs_np_init_v5(void **context, uint64_t commId, int *mask, const char *commName, int nNodes,
                                  int nranks, int rank, cs_np_logger_t logfn)
{
    (void)commId;
    (void)commName;
    (void)nNodes;
    (void)nranks;
    (void)rank;
    (void)logfn;
    *context = &cs_np_dummy_ctx;
    cs_np_init(mask);
    return ncclSuccess;
}

static ncclResult_t cs_np_start_v5(void *context, void **handle, cs_np_descr_v5 *d)
{
    (void)context;
    cs_np_start(handle, d->type, d->parentObj, &d->coll, &d->kernelCh);
    return ncclSuccess;
}

CS_EXPORT const cs_np_plugin_v5 ncclProfiler_v5 = {
    .name = "collscope",
    .init = cs_np_init_v5,
    .startEvent = cs_np_start_v5,
    .stopEvent = cs_np_stop,
    .recordEventState = cs_np_state,
    .finalize = cs_np_finalize,
};

/* ---- version 4 ---- */
static ncclResult_t cs_np_init_v4(void **context, int *mask, const char *commName, uint64_t commHash, int nNodes,
                                  int nranks, int rank, cs_np_logger_t logfn)
{
    return cs_np_init_v5(context, commHash, mask, commName, nNodes, nranks, rank, logfn);
}

static ncclResult_t cs_np_start_v4(void *context, void **handle, cs_np_descr_v4 *d)
{
    (void)context;
    cs_np_start(handle, d->type, d->parentObj, &d->coll, &d->kernelCh);
    return ncclSuccess;
}

CS_EXPORT const cs_np_plugin_v4 ncclProfiler_v4 = {
    .name = "collscope",
    .init = cs_np_init_v4,
    .startEvent = cs_np_start_v4,
    .stopEvent = cs_np_stop,
    .recordEventState = cs_np_state,
    .finalize = cs_np_finalize,
};
