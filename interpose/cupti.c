/* cupti.c: the CUPTI subscriber (COLLSCOPE_CUPTI=1): kernel, memcpy and
 * memset activity of the GPU, written as GPUACT records.
 *
 * libcupti is loaded with dlopen(RTLD_LOCAL) at trace start; nothing links
 * it. A runtime-API callback keeps the correlation id of the CUDA runtime
 * call in progress on each thread (cs_cupti_corr): the launch and memcpy
 * wrappers store it in their SPANX record, and the importer joins activity
 * to the launching span by (rank, correlation id). Activity timestamps
 * (CUPTI's clock) are converted to the process clock through a pair of
 * readings of both clocks, taken again at every completed buffer. Streams
 * are stored as the cudaStream_t handle bits when a traced call used that
 * stream (cs_cupti_note_stream), else as CUPTI's stream id. Any failure
 * (no libcupti, no GPU: cuptiSubscribe returns 999) prints one warning and
 * the run goes on without activity records. */
#include "config.h"
#include "interpose/cupti.h"
#include "interpose/core.h"

#include <cuda_runtime_api.h>

#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

int cs_cupti_on;
__thread uint32_t cs_cupti_corr __attribute__((tls_model("initial-exec")));

#define CS_CUPTI_BUF (1u << 20)
#define CS_CUPTI_STREAMS 256u

static struct {
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
    CUptiResult (*act_enable)(CUpti_ActivityKind);
    CUptiResult (*act_register)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*act_next)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*act_flush)(uint32_t);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*stream_id)(CUcontext, CUstream, uint8_t, uint32_t *);
    CUpti_SubscriberHandle sub;
    pthread_mutex_t lock;       /* the stream table's writers, the clock pair */
    uint64_t ts_ref, ticks_ref; /* CUPTI time ts_ref was process tick ticks_ref */
    double tpn;
    struct {
        uint64_t handle;
        uint32_t id;
        int used;
    } streams[CS_CUPTI_STREAMS];
} P = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int cs_cupti_warned;

static void cs_cupti_fail(const char *what, int rc)
{
    __atomic_store_n(&cs_cupti_on, 0, __ATOMIC_RELEASE);
    cs_warn_once(&cs_cupti_warned, "CUPTI: %s failed (%d); no GPU activity records (COLLSCOPE_CUPTI=1 is ignored)",
                 what, rc);
}

/* A reading of both clocks at the same moment (the middle of the window). */
static void cs_cupti_pair(void)
{
    uint64_t ts = 0, t0 = cs_clock_ticks();
    if (P.timestamp(&ts) != CUPTI_SUCCESS)
        return;
    uint64_t t1 = cs_clock_ticks();
    pthread_mutex_lock(&P.lock);
    P.ts_ref = ts;
    P.ticks_ref = t0 + (t1 - t0) / 2;
    pthread_mutex_unlock(&P.lock);
}

static uint64_t cs_cupti_ticks(uint64_t ts, uint64_t ts_ref, uint64_t ticks_ref)
{
    double d = ((double)ts - (double)ts_ref) * P.tpn;
    double t = (double)ticks_ref + d;
    return t > 0 ? (uint64_t)t : 0;
}

/* The stream table: CUPTI stream id -> cudaStream_t bits. Readers take no
 * lock (entries are written once, `used` last). */
void cs_cupti_note_stream_slow(uint64_t handle)
{
    static __thread uint64_t last = ~0ull;
    if (handle == last)
        return;
    for (unsigned i = 0; i < CS_CUPTI_STREAMS; i++) {
        if (!__atomic_load_n(&P.streams[i].used, __ATOMIC_ACQUIRE))
            break;
        if (P.streams[i].handle == handle) {
            last = handle;
            return;
        }
    }
    uint32_t id = 0;
    int saved = errno; /* called after the traced call returned */
    int rc = P.stream_id ? (int)P.stream_id(NULL, (CUstream)(uintptr_t)handle, 0, &id) : -1;
    errno = saved;
    if (rc != CUPTI_SUCCESS)
        return;
    pthread_mutex_lock(&P.lock);
    for (unsigned i = 0; i < CS_CUPTI_STREAMS; i++) {
        if (P.streams[i].used && P.streams[i].handle == handle)
            break;
        if (!P.streams[i].used) {
            P.streams[i].handle = handle;
            P.streams[i].id = id;
            __atomic_store_n(&P.streams[i].used, 1, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&P.lock);
    last = handle;
}

static uint64_t cs_cupti_stream(uint32_t id)
{
    for (unsigned i = 0; i < CS_CUPTI_STREAMS; i++) {
        if (!__atomic_load_n(&P.streams[i].used, __ATOMIC_ACQUIRE))
            break;
        if (P.streams[i].id == id)
            return P.streams[i].handle;
    }
    return id;
}

static uint64_t cs_cupti_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void CUPTIAPI cs_cupti_callback(void *user, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
    (void)user;
    (void)cbid;
    const CUpti_CallbackData *cb = data;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && cb && cb->callbackSite == CUPTI_API_ENTER)
        cs_cupti_corr = cb->correlationId;
}

static void CUPTIAPI cs_cupti_buf_req(uint8_t **buf, size_t *size, size_t *maxrec)
{
    *buf = aligned_alloc(8, CS_CUPTI_BUF);
    *size = *buf ? CS_CUPTI_BUF : 0;
    *maxrec = 0;
}

static void cs_cupti_emit(uint16_t kind, uint64_t start, uint64_t end, uint64_t bytes, uint32_t stream, uint32_t corr,
                          uint32_t device, uint64_t name, uint64_t ts_ref, uint64_t ticks_ref)
{
    cs_rec_gpuact *a = (cs_rec_gpuact *)cs_log_slot();
    if (!a)
        return;
    a->kind = kind;
    a->tid = cs__log_tls.tid;
    a->g0 = cs_cupti_ticks(start, ts_ref, ticks_ref);
    a->g1 = cs_cupti_ticks(end, ts_ref, ticks_ref);
    a->bytes = bytes;
    a->stream = cs_cupti_stream(stream);
    a->corr = corr;
    a->device = device;
    a->name = name;
    cs_log_commit(a, CS_REC_HDR(CS_REC_GPUACT, 0));
}

static void CUPTIAPI cs_cupti_buf_done(CUcontext ctx, uint32_t sid, uint8_t *buf, size_t size, size_t valid)
{
    (void)ctx;
    (void)sid;
    (void)size;
    int busy = cs_core_busy;
    cs_core_busy = 1;
    cs_cupti_pair();
    pthread_mutex_lock(&P.lock);
    uint64_t ts_ref = P.ts_ref, ticks_ref = P.ticks_ref;
    pthread_mutex_unlock(&P.lock);
    CUpti_Activity *r = NULL;
    while (cs_log_is_open() && P.act_next(buf, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
            cs_cupti_emit(1, k->start, k->end, 0, k->streamId, k->correlationId, k->deviceId, cs_cupti_name(k->name),
                          ts_ref, ticks_ref);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
            cs_cupti_emit(2, m->start, m->end, m->bytes, m->streamId, m->correlationId, m->deviceId, 0, ts_ref,
                          ticks_ref);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
            cs_cupti_emit(3, m->start, m->end, m->bytes, m->streamId, m->correlationId, m->deviceId, 0, ts_ref,
                          ticks_ref);
        }
    }
    free(buf);
    cs_core_busy = busy;
}

/* At trace start, with COLLSCOPE_CUPTI=1. */
static void cs_cupti_start(const cs_settings *s, cs_log_header *h)
{
    if (!s->cupti)
        return;
    static const char *const names[] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so", NULL };
    void *lib = NULL;
    for (int i = 0; names[i] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        cs_cupti_fail("loading libcupti.so", -1);
        return;
    }
    int ok = 1;
#define CS_CU(field, name) (ok = ok && (*(void **)&P.field = dlsym(lib, name)) != NULL)
    CS_CU(subscribe, "cuptiSubscribe");
    CS_CU(enable_domain, "cuptiEnableDomain");
    CS_CU(act_enable, "cuptiActivityEnable");
    CS_CU(act_register, "cuptiActivityRegisterCallbacks");
    CS_CU(act_next, "cuptiActivityGetNextRecord");
    CS_CU(act_flush, "cuptiActivityFlushAll");
    CS_CU(timestamp, "cuptiGetTimestamp");
    CS_CU(stream_id, "cuptiGetStreamIdEx");
#undef CS_CU
    if (!ok) {
        cs_cupti_fail("finding the CUPTI functions", -1);
        return;
    }
    P.tpn = h && h->ticks_per_ns > 0 ? h->ticks_per_ns : 1.0;
    CUptiResult rc = P.subscribe(&P.sub, cs_cupti_callback, NULL);
    if (rc != CUPTI_SUCCESS) {
        cs_cupti_fail("cuptiSubscribe", (int)rc);
        return;
    }
    if ((rc = P.enable_domain(1, P.sub, CUPTI_CB_DOMAIN_RUNTIME_API)) != CUPTI_SUCCESS) {
        cs_cupti_fail("cuptiEnableDomain(runtime API)", (int)rc);
        return;
    }
    if ((rc = P.act_register(cs_cupti_buf_req, cs_cupti_buf_done)) != CUPTI_SUCCESS) {
        cs_cupti_fail("cuptiActivityRegisterCallbacks", (int)rc);
        return;
    }
    static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                CUPTI_ACTIVITY_KIND_MEMSET };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if ((rc = P.act_enable(kinds[i])) != CUPTI_SUCCESS) {
            cs_cupti_fail("cuptiActivityEnable", (int)rc);
            return;
        }
    cs_cupti_pair();
    __atomic_store_n(&cs_cupti_on, 1, __ATOMIC_RELEASE);
}

/* At exit, before the log closes: the buffers CUPTI still holds. */
static void cs_cupti_flush(void)
{
    if (!__atomic_load_n(&cs_cupti_on, __ATOMIC_ACQUIRE))
        return;
    P.act_flush(1 /* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED */);
    __atomic_store_n(&cs_cupti_on, 0, __ATOMIC_RELEASE);
}

const cs_module cs_cupti_module = {
    .name = "cupti",
    .start = cs_cupti_start,
    .flush = cs_cupti_flush,
};
