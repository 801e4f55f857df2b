/* cupti.c: a CPU stand-in for libcupti.so.13, for tests without a GPU.
 * Never installed; tests put its folder first on LD_LIBRARY_PATH.
 *
 * The cudart stand-in runs kernels and copies when they are enqueued; it
 * reports each one here (csStandinActivityHook): before the work, this
 * library assigns a correlation id and calls the subscriber's runtime-API
 * callback (CUPTI_API_ENTER); after it, an activity record (kernel, memcpy
 * or memset; times from cuptiGetTimestamp's clock, CLOCK_MONOTONIC here)
 * goes into the client's buffer. A full buffer, or cuptiActivityFlushAll,
 * hands it back through the completion callback.
 * Test-only fault: CS_STANDIN_CUPTI_FAIL=1 makes cuptiSubscribe return
 * CUPTI_ERROR_UNKNOWN (999), as the real one does without a GPU. */
#include <cupti.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SI_EXPORT __attribute__((visibility("default")))

typedef unsigned (*si_act_fn)(int phase, int kind, const char *name, uint64_t bytes, void *stream, uint64_t t0,
                              uint64_t t1, unsigned corr);

static struct {
    pthread_mutex_t lock;
    CUpti_CallbackFunc cb;
    void *cb_user;
    int runtime_on;
    int kinds[64];
    CUpti_BuffersCallbackRequestFunc req;
    CUpti_BuffersCallbackCompleteFunc done;
    uint8_t *buf;
    size_t size, used;
    unsigned next_corr;
    void *streams[256];
    int nstreams;
} C = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t si_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

SI_EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
    *t = si_ns();
    return CUPTI_SUCCESS;
}
SI_EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    (void)r;
    *s = "stand-in";
    return CUPTI_SUCCESS;
}

static uint32_t si_stream_id_locked(void *s)
{
    for (int i = 0; i < C.nstreams; i++)
        if (C.streams[i] == s)
            return (uint32_t)(i + 7);
    if (C.nstreams < 256)
        C.streams[C.nstreams++] = s;
    return (uint32_t)(C.nstreams - 1 + 7);
}

SI_EXPORT CUptiResult cuptiGetStreamIdEx(CUcontext ctx, CUstream s, uint8_t per_thread, uint32_t *id)
{
    (void)ctx;
    (void)per_thread;
    pthread_mutex_lock(&C.lock);
    *id = si_stream_id_locked(s);
    pthread_mutex_unlock(&C.lock);
    return CUPTI_SUCCESS;
}

/* Hand the current buffer back to the client; lock held on entry, released. */
static void si_complete_unlock(void)
{
    uint8_t *b = C.buf;
    size_t size = C.size, used = C.used;
    C.buf = NULL;
    C.used = C.size = 0;
    pthread_mutex_unlock(&C.lock);
    if (b && C.done)
        C.done(NULL, 0, b, size, used);
}

static unsigned si_activity(int phase, int kind, const char *name, uint64_t bytes, void *stream, uint64_t t0,
                            uint64_t t1, unsigned corr)
{
    if (phase == 0) {
        corr = __atomic_add_fetch(&C.next_corr, 1, __ATOMIC_RELAXED);
        if (C.cb && C.runtime_on) {
            CUpti_CallbackData d;
            memset(&d, 0, sizeof d);
            d.callbackSite = CUPTI_API_ENTER;
            d.functionName = name;
            d.correlationId = corr;
            C.cb(C.cb_user, CUPTI_CB_DOMAIN_RUNTIME_API, 0, &d);
        }
        return corr;
    }
    int ak = kind == 1   ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
             : kind == 2 ? CUPTI_ACTIVITY_KIND_MEMCPY
                         : CUPTI_ACTIVITY_KIND_MEMSET;
    size_t need = kind == 1   ? sizeof(CUpti_ActivityKernel10)
                  : kind == 2 ? sizeof(CUpti_ActivityMemcpy6)
                              : sizeof(CUpti_ActivityMemset4);
    pthread_mutex_lock(&C.lock);
    if (!C.kinds[ak] || !C.req) {
        pthread_mutex_unlock(&C.lock);
        return corr;
    }
    if (C.buf && C.used + need > C.size) {
        si_complete_unlock();
        pthread_mutex_lock(&C.lock);
    }
    if (!C.buf) {
        size_t maxrec = 0;
        C.req(&C.buf, &C.size, &maxrec);
        C.used = 0;
        if (!C.buf || C.size < need) {
            C.buf = NULL;
            pthread_mutex_unlock(&C.lock);
            return corr;
        }
    }
    uint8_t *p = C.buf + C.used;
    memset(p, 0, need);
    uint32_t sid = si_stream_id_locked(stream);
    if (kind == 1) {
        CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)p;
        k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k->start = t0;
        k->end = t1;
        k->streamId = sid;
        k->correlationId = corr;
        k->name = name;
    } else if (kind == 2) {
        CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)p;
        m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m->start = t0;
        m->end = t1;
        m->streamId = sid;
        m->correlationId = corr;
        m->bytes = bytes;
    } else {
        CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)p;
        m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
        m->start = t0;
        m->end = t1;
        m->streamId = sid;
        m->correlationId = corr;
        m->bytes = bytes;
    }
    C.used += need;
    pthread_mutex_unlock(&C.lock);
    return corr;
}

SI_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *user)
{
    const char *f = getenv("CS_STANDIN_CUPTI_FAIL");
    if (f && strcmp(f, "1") == 0)
        return CUPTI_ERROR_UNKNOWN;
    C.cb = cb;
    C.cb_user = user;
    *sub = (CUpti_SubscriberHandle)&C;
    /* The cudart stand-in of this process reports its work here. */
    void *rt = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD);
    void (*hook)(si_act_fn) = NULL;
    if (rt)
        *(void **)&hook = dlsym(rt, "csStandinActivityHook");
    if (hook)
        hook(si_activity);
    return CUPTI_SUCCESS;
}
SI_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
    (void)sub;
    C.cb = NULL;
    return CUPTI_SUCCESS;
}
SI_EXPORT CUptiResult cuptiEnableDomain(uint32_t on, CUpti_SubscriberHandle sub, CUpti_CallbackDomain dom)
{
    (void)sub;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
        C.runtime_on = (int)on;
    return CUPTI_SUCCESS;
}
SI_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    if ((int)k < 0 || (int)k >= 64)
        return CUPTI_ERROR_INVALID_KIND;
    C.kinds[k] = 1;
    return CUPTI_SUCCESS;
}
SI_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    if ((int)k >= 0 && (int)k < 64)
        C.kinds[k] = 0;
    return CUPTI_SUCCESS;
}
SI_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                     CUpti_BuffersCallbackCompleteFunc done)
{
    C.req = req;
    C.done = done;
    return CUPTI_SUCCESS;
}
SI_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    size_t off = 0;
    if (*rec) {
        CUpti_ActivityKind k = (*rec)->kind;
        size_t sz = k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? sizeof(CUpti_ActivityKernel10)
                    : k == CUPTI_ACTIVITY_KIND_MEMCPY          ? sizeof(CUpti_ActivityMemcpy6)
                                                               : sizeof(CUpti_ActivityMemset4);
        off = (size_t)((uint8_t *)*rec - buf) + sz;
    }
    if (off >= valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)(buf + off);
    return CUPTI_SUCCESS;
}
SI_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&C.lock);
    si_complete_unlock();
    return CUPTI_SUCCESS;
}
