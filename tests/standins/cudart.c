/* cudart.c: a CPU stand-in for libcudart.so.13, for tests without a GPU.
 * Never installed; tests put its folder first on LD_LIBRARY_PATH.
 *
 * Device memory is host memory; every stream runs its work in order, at
 * the moment it is enqueued; an event records the time the stream reached
 * it. Kernels cannot run device code: a kernel registered under NAME
 * (through __cudaRegisterFunction, as nvcc's startup code does) runs the
 * host twin the program exports, extern "C" void NAME__host(void **args,
 * unsigned nthreads), found with dlsym.
 * Test-only fault: CS_STANDIN_EVENT_RECORD_FAIL_AFTER=N makes every
 * cudaEventRecord after the first N fail with cudaErrorLaunchFailure.
 *
 * Stalled streams (only when CS_STANDIN_STALL_RANK is set: the NCCL
 * stand-in stalls a collective's stream, see nccl.c): from its stall point
 * on, a stream runs nothing more, as a GPU whose kernel never finishes.
 * Work enqueued on it is dropped; events recorded on it from that point
 * never complete (cudaEventQuery says cudaErrorNotReady, cudaEventElapsedTime
 * too); synchronizing with it (cudaStreamSynchronize, cudaEventSynchronize
 * on such an event, cudaDeviceSynchronize, the synchronous cudaMemcpy and
 * cudaMemset when a blocking stream is stalled) waits forever; a stream
 * made to wait on such an event stalls too. Other streams run on. */
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SI_EXPORT __attribute__((visibility("default")))

static __thread cudaError_t si_last;

/* The CUPTI stand-in's report of work (tests/standins/cupti.c): phase 0
 * before the work returns its correlation id; phase 1 after it, with the
 * CLOCK_MONOTONIC times it ran. kind: 1 kernel, 2 memcpy, 3 memset. */
typedef unsigned (*si_act_fn)(int phase, int kind, const char *name, uint64_t bytes, void *stream, uint64_t t0,
                              uint64_t t1, unsigned corr);
static si_act_fn si_act;
SI_EXPORT void csStandinActivityHook(si_act_fn f)
{
    si_act = f;
}
static uint64_t si_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define SI_ACT_BEGIN(kind, name, stream)                                       \
    unsigned si_corr = si_act ? si_act(0, kind, name, 0, stream, 0, 0, 0) : 0; \
    uint64_t si_t0 = si_now_ns()
#define SI_ACT_END(kind, name, bytes, stream)                                  \
    do {                                                                       \
        if (si_act)                                                            \
            si_act(1, kind, name, bytes, stream, si_t0, si_now_ns(), si_corr); \
    } while (0)
static int si_device;

/* ---- stalled streams ---- */
struct CUstream_st {
    int flags;
    uint64_t nrec;       /* events recorded on it */
    uint64_t work_at;    /* nrec when work was last enqueued on it */
    uint64_t stall_from; /* its events from this record number on never complete; 0 = running */
};
static struct CUstream_st si_default_stream; /* NULL, cudaStreamLegacy, cudaStreamPerThread */
static int si_stall_mode;                    /* CS_STANDIN_STALL_RANK set: keep the books below */
static int si_stalled_blocking;              /* a stream that the default stream waits for is stalled */

__attribute__((constructor)) static void si_stall_init(void)
{
    const char *v = getenv("CS_STANDIN_STALL_RANK");
    si_stall_mode = v && *v;
}

static struct CUstream_st *si_stream(cudaStream_t s)
{
    return (uintptr_t)s <= 2 ? &si_default_stream : s;
}

static int si_stalled(cudaStream_t s)
{
    return si_stall_mode && __atomic_load_n(&si_stream(s)->stall_from, __ATOMIC_ACQUIRE) != 0;
}

/* Work enqueued on s: 0 to run it, 1 when s is stalled (dropped). */
static int si_work(cudaStream_t s)
{
    if (!si_stall_mode)
        return 0;
    struct CUstream_st *t = si_stream(s);
    __atomic_store_n(&t->work_at, __atomic_load_n(&t->nrec, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    return __atomic_load_n(&t->stall_from, __ATOMIC_ACQUIRE) != 0;
}

/* A synchronization that never returns: the GPU work it waits for never ends. */
static void si_wait_forever(void)
{
    for (;;) {
        struct timespec ts = { 1, 0 };
        nanosleep(&ts, NULL);
    }
}

static void si_stall_stream(struct CUstream_st *t, uint64_t from)
{
    uint64_t none = 0;
    __atomic_compare_exchange_n(&t->stall_from, &none, from, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    if (t == &si_default_stream || !(t->flags & cudaStreamNonBlocking))
        __atomic_store_n(&si_stalled_blocking, 1, __ATOMIC_RELEASE);
}

/* Stall stream s (the NCCL stand-in's call). at_last_event: from the last
 * event recorded on it when nothing was enqueued after that event (its
 * work had not started when the stream stopped), else from now on (events
 * recorded before now complete). */
SI_EXPORT void csStandinStreamStall(cudaStream_t s, int at_last_event)
{
    if (!si_stall_mode)
        return;
    struct CUstream_st *t = si_stream(s);
    uint64_t n = __atomic_load_n(&t->nrec, __ATOMIC_ACQUIRE);
    int idle = n > 0 && __atomic_load_n(&t->work_at, __ATOMIC_RELAXED) < n;
    si_stall_stream(t, at_last_event && idle ? n : n + 1);
}

SI_EXPORT int csStandinStreamStalled(cudaStream_t s)
{
    return si_stalled(s);
}

static void si_sync_default(void)
{
    if (si_stall_mode && __atomic_load_n(&si_stalled_blocking, __ATOMIC_ACQUIRE))
        si_wait_forever();
}

static cudaError_t si_ret(cudaError_t e)
{
    if (e != cudaSuccess)
        si_last = e;
    return e;
}

static double si_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- errors and devices ---- */
SI_EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t e = si_last;
    si_last = cudaSuccess;
    return e;
}
SI_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    return si_last;
}
SI_EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "stand-in error";
}
SI_EXPORT const char *cudaGetErrorName(cudaError_t e)
{
    return e == cudaSuccess ? "cudaSuccess" : "cudaErrorStandIn";
}
SI_EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaSetDevice(int d)
{
    return si_ret(d == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}
SI_EXPORT cudaError_t cudaGetDevice(int *d)
{
    *d = si_device;
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    if (si_stall_mode) {
        if (__atomic_load_n(&si_stalled_blocking, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&si_default_stream.stall_from, __ATOMIC_ACQUIRE))
            si_wait_forever();
    }
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaDeviceReset(void)
{
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

/* ---- memory: host memory ---- */
SI_EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = calloc(1, n ? n : 1);
    return si_ret(*p ? cudaSuccess : cudaErrorMemoryAllocation);
}
SI_EXPORT cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaMallocHost(void **p, size_t n)
{
    return cudaMalloc(p, n);
}
SI_EXPORT cudaError_t cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}
/* What it is: host memory, as the real runtime says of malloc'd memory. */
SI_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    if (!a)
        return si_ret(cudaErrorInvalidValue);
    memset(a, 0, sizeof *a);
    a->type = cudaMemoryTypeUnregistered;
    a->device = si_device;
    a->hostPointer = (void *)p;
    return cudaSuccess;
}
/* What a CUDA-built libcskernels links to; a host "device" has none of it. */
SI_EXPORT cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
    (void)a;
    (void)d;
    *v = 0;
    return si_ret(cudaErrorNotSupported);
}
SI_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *h, void *p)
{
    (void)h;
    (void)p;
    return si_ret(cudaErrorNotSupported);
}
SI_EXPORT cudaError_t cudaIpcOpenMemHandle(void **p, cudaIpcMemHandle_t h, unsigned int f)
{
    (void)p;
    (void)h;
    (void)f;
    return si_ret(cudaErrorNotSupported);
}
SI_EXPORT cudaError_t cudaIpcCloseMemHandle(void *p)
{
    (void)p;
    return si_ret(cudaErrorNotSupported);
}
static cudaError_t si_copy(void *d, const void *s, size_t n, cudaStream_t st)
{
    if (si_work(st))
        return cudaSuccess;
    SI_ACT_BEGIN(2, "memcpy", st);
    memmove(d, s, n);
    SI_ACT_END(2, "memcpy", n, st);
    return cudaSuccess;
}
static cudaError_t si_set(void *p, int v, size_t n, cudaStream_t st)
{
    if (si_work(st))
        return cudaSuccess;
    SI_ACT_BEGIN(3, "memset", st);
    memset(p, v, n);
    SI_ACT_END(3, "memset", n, st);
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
    (void)k;
    si_sync_default();
    return si_copy(d, s, n, NULL);
}
SI_EXPORT cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st)
{
    (void)k;
    return si_copy(d, s, n, st);
}
SI_EXPORT cudaError_t cudaMemset(void *p, int v, size_t n)
{
    si_sync_default();
    return si_set(p, v, n, NULL);
}
SI_EXPORT cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st)
{
    return si_set(p, v, n, st);
}

/* ---- streams: work runs when enqueued, in order ---- */
SI_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    *s = calloc(1, sizeof **s);
    if (*s)
        (*s)->flags = (int)flags;
    return si_ret(*s ? cudaSuccess : cudaErrorMemoryAllocation);
}
SI_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    return cudaStreamCreateWithFlags(s, 0);
}
SI_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!si_stall_mode) /* with stalls, events may still name it */
        free(s);
    return cudaSuccess;
}
static cudaError_t si_stream_sync(cudaStream_t s)
{
    if (si_stalled(s))
        si_wait_forever();
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    return si_stream_sync(s);
}
SI_EXPORT cudaError_t cudaStreamQuery(cudaStream_t s)
{
    return si_stalled(s) ? cudaErrorNotReady : cudaSuccess;
}
static int si_event_pending(cudaEvent_t e);
static cudaError_t si_stream_wait(cudaStream_t s, cudaEvent_t e)
{
    if (si_stall_mode && e && si_event_pending(e)) {
        struct CUstream_st *t = si_stream(s);
        si_stall_stream(t, __atomic_load_n(&t->nrec, __ATOMIC_ACQUIRE) + 1);
    }
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f)
{
    (void)f;
    return si_stream_wait(s, e);
}

/* ---- events: the time the stream reached them ---- */
struct CUevent_st {
    double ms;
    int recorded;
    struct CUstream_st *on; /* with stalls: the stream it was last recorded on */
    uint64_t recno;         /* and its record number there */
};
/* With stalls: recorded on a stream at or after its stall point. */
static int si_event_pending(cudaEvent_t e)
{
    struct CUstream_st *t = __atomic_load_n(&e->on, __ATOMIC_ACQUIRE);
    if (!t)
        return 0;
    uint64_t from = __atomic_load_n(&t->stall_from, __ATOMIC_ACQUIRE);
    return from != 0 && __atomic_load_n(&e->recno, __ATOMIC_RELAXED) >= from;
}
static long si_record_budget = -2; /* -2: unread, -1: no fault */
SI_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    (void)flags;
    *e = calloc(1, sizeof **e);
    return si_ret(*e ? cudaSuccess : cudaErrorMemoryAllocation);
}
SI_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    return cudaEventCreateWithFlags(e, 0);
}
SI_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)s;
    long b = __atomic_load_n(&si_record_budget, __ATOMIC_RELAXED);
    if (b == -2) {
        const char *v = getenv("CS_STANDIN_EVENT_RECORD_FAIL_AFTER");
        b = v && *v ? atol(v) : -1;
        __atomic_store_n(&si_record_budget, b, __ATOMIC_RELAXED);
    }
    if (b >= 0 && __atomic_fetch_sub(&si_record_budget, 1, __ATOMIC_RELAXED) <= 0) {
        __atomic_store_n(&si_record_budget, 0, __ATOMIC_RELAXED);
        return si_ret(cudaErrorLaunchFailure);
    }
    if (!e)
        return si_ret(cudaErrorInvalidResourceHandle);
    e->ms = si_now_ms();
    e->recorded = 1;
    if (si_stall_mode) {
        struct CUstream_st *t = si_stream(s);
        __atomic_store_n(&e->recno, __atomic_add_fetch(&t->nrec, 1, __ATOMIC_ACQ_REL), __ATOMIC_RELAXED);
        __atomic_store_n(&e->on, t, __ATOMIC_RELEASE);
    }
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    if (e && si_stall_mode && si_event_pending(e))
        return cudaErrorNotReady; /* not an error: no last-error state */
    return si_ret(e ? cudaSuccess : cudaErrorInvalidResourceHandle);
}
SI_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (e && si_stall_mode && si_event_pending(e))
        si_wait_forever();
    return cudaEventQuery(e);
}
SI_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    if (!a || !b || !a->recorded || !b->recorded)
        return si_ret(cudaErrorInvalidResourceHandle);
    if (si_stall_mode && (si_event_pending(a) || si_event_pending(b)))
        return si_ret(cudaErrorNotReady);
    *ms = (float)(b->ms - a->ms);
    return cudaSuccess;
}

/* ---- graphs: nothing to run ---- */
SI_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s)
{
    (void)g;
    (void)s;
    return cudaSuccess;
}

/* ---- kernels: registered names, host twins ---- */
typedef void (*si_host_fn)(void **args, unsigned nthreads);
static struct {
    const void *key;
    char name[128];
    si_host_fn fn;
} si_k[1024];
static int si_nk;
static pthread_mutex_t si_klock = PTHREAD_MUTEX_INITIALIZER;

SI_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    static void *h[4];
    (void)fatCubin;
    return h;
}
SI_EXPORT void __cudaRegisterFatBinaryEnd(void **h)
{
    (void)h;
}
SI_EXPORT void __cudaUnregisterFatBinary(void **h)
{
    (void)h;
}
SI_EXPORT void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName, int tl,
                                      uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)h;
    (void)deviceFun;
    (void)tl;
    (void)tid;
    (void)bid;
    (void)bDim;
    (void)gDim;
    (void)wSize;
    pthread_mutex_lock(&si_klock);
    if (si_nk < 1024) {
        si_k[si_nk].key = hostFun;
        snprintf(si_k[si_nk].name, sizeof si_k[si_nk].name, "%s", deviceName);
        si_nk++;
    }
    pthread_mutex_unlock(&si_klock);
}
SI_EXPORT void __cudaRegisterVar(void **h, char *hv, char *dv, const char *name, int ext, size_t size, int c, int g)
{
    (void)h;
    (void)hv;
    (void)dv;
    (void)name;
    (void)ext;
    (void)size;
    (void)c;
    (void)g;
}

static __thread struct {
    dim3 g, b;
    size_t sh;
    void *st;
} si_cfg[8];
static __thread int si_ncfg;
SI_EXPORT unsigned __cudaPushCallConfiguration(dim3 g, dim3 b, size_t sh, void *st)
{
    if (si_ncfg < 8) {
        si_cfg[si_ncfg].g = g;
        si_cfg[si_ncfg].b = b;
        si_cfg[si_ncfg].sh = sh;
        si_cfg[si_ncfg].st = st;
        si_ncfg++;
    }
    return 0;
}
SI_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *g, dim3 *b, size_t *sh, void *st)
{
    if (si_ncfg == 0)
        return si_ret(cudaErrorMissingConfiguration);
    si_ncfg--;
    *g = si_cfg[si_ncfg].g;
    *b = si_cfg[si_ncfg].b;
    *sh = si_cfg[si_ncfg].sh;
    *(void **)st = si_cfg[si_ncfg].st;
    return cudaSuccess;
}
SI_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *fun)
{
    *k = (cudaKernel_t)(void *)fun;
    return cudaSuccess;
}

static cudaError_t si_launch(const void *key, dim3 g, dim3 b, void **args, cudaStream_t st)
{
    si_host_fn fn = NULL;
    const char *kname = "?";
    pthread_mutex_lock(&si_klock);
    for (int i = 0; i < si_nk; i++)
        if (si_k[i].key == key) {
            if (!si_k[i].fn) {
                char twin[160];
                snprintf(twin, sizeof twin, "%s__host", si_k[i].name);
                si_k[i].fn = (si_host_fn)dlsym(RTLD_DEFAULT, twin);
                if (!si_k[i].fn)
                    fprintf(stderr,
                            "cudart stand-in: kernel %s has no host twin %s (export it, link with "
                            "-rdynamic)\n",
                            si_k[i].name, twin);
            }
            fn = si_k[i].fn;
            kname = si_k[i].name;
            break;
        }
    pthread_mutex_unlock(&si_klock);
    if (!fn)
        return si_ret(cudaErrorInvalidDeviceFunction);
    if (si_work(st))
        return cudaSuccess;
    SI_ACT_BEGIN(1, kname, st);
    fn(args, g.x * g.y * g.z * b.x * b.y * b.z);
    SI_ACT_END(1, kname, 0, st);
    return cudaSuccess;
}
SI_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t sh, cudaStream_t s)
{
    (void)sh;
    return si_launch((const void *)k, g, b, args, s);
}
SI_EXPORT cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t sh, cudaStream_t s)
{
    (void)sh;
    return si_launch(f, g, b, args, s);
}

/* ---- per-thread default stream entry points ----
 * What a program built with --default-stream per-thread calls. Every stream
 * runs in order here, so they do what the plain ones do (through the
 * internal functions: the plain names may be the preload's wrappers). */
SI_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *f, dim3 g, dim3 b, void **args, size_t sh, cudaStream_t s)
{
    (void)sh;
    return si_launch(f, g, b, args, s);
}
SI_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t sh, cudaStream_t s)
{
    (void)sh;
    return si_launch((const void *)k, g, b, args, s);
}
SI_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t g, cudaStream_t s)
{
    (void)g;
    (void)s;
    return cudaSuccess;
}
SI_EXPORT cudaError_t cudaMemcpy_ptds(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
    (void)k;
    si_sync_default();
    return si_copy(d, s, n, NULL);
}
SI_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st)
{
    (void)k;
    return si_copy(d, s, n, st);
}
SI_EXPORT cudaError_t cudaMemset_ptds(void *p, int v, size_t n)
{
    si_sync_default();
    return si_set(p, v, n, NULL);
}
SI_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *p, int v, size_t n, cudaStream_t st)
{
    return si_set(p, v, n, st);
}
SI_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{
    return si_stream_sync(s);
}
SI_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int f)
{
    (void)f;
    return si_stream_wait(s, e);
}
SI_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s)
{
    return cudaEventRecord(e, s);
}
