/* cuda.cu: the CUDA backend of libcskernels. Same contracts as host.c
 * (the host reference); api.c has checked every argument before a
 * function here runs. Links libcudart dynamically, never the driver. */
#include "config.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/convert.h"
#include "kernels/kernels-int.h"

namespace
{

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kSlots = 4; /* table uploads in flight per context */

/* ---- workspace ------------------------------------------------------ */

struct Slot {
    void *host; /* pinned staging of the table */
    void *dev;  /* its device copy */
    size_t cap;
    cudaEvent_t ev; /* the upload from host is done */
    bool used;
};

struct Ws {
    Slot slot[kSlots];
    unsigned next;
    int device;
    int nsm;
    cudaEvent_t order; /* orders a new stream after the old */
};

inline cudaStream_t stream_of(const cs_kern_ctx *ctx)
{
    return (cudaStream_t)ctx->stream;
}

int cuda_ctx_init(cs_kern_ctx *ctx)
{
    int n = 0, dev = 0, i;
    Ws *ws;

    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
        cudaGetLastError();
        return CS_KERN_ENODEV;
    }
    if (cudaGetDevice(&dev) != cudaSuccess)
        return CS_KERN_ENODEV;
    ws = (Ws *)calloc(1, sizeof *ws);
    if (!ws)
        return CS_KERN_ENOMEM;
    ws->device = dev;
    if (cudaDeviceGetAttribute(&ws->nsm, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaEventCreateWithFlags(&ws->order, cudaEventDisableTiming) != cudaSuccess) {
        free(ws);
        return CS_KERN_ECUDA;
    }
    for (i = 0; i < kSlots; i++)
        if (cudaEventCreateWithFlags(&ws->slot[i].ev, cudaEventDisableTiming) != cudaSuccess) {
            while (--i >= 0)
                cudaEventDestroy(ws->slot[i].ev);
            cudaEventDestroy(ws->order);
            free(ws);
            return CS_KERN_ECUDA;
        }
    ctx->ws = ws;
    return CS_KERN_OK;
}

void cuda_ctx_fini(cs_kern_ctx *ctx)
{
    Ws *ws = (Ws *)ctx->ws;
    int i;

    if (!ws)
        return;
    cudaStreamSynchronize(stream_of(ctx));
    for (i = 0; i < kSlots; i++) {
        cudaFreeHost(ws->slot[i].host);
        cudaFree(ws->slot[i].dev);
        cudaEventDestroy(ws->slot[i].ev);
    }
    cudaEventDestroy(ws->order);
    free(ws);
    ctx->ws = NULL;
}

int cuda_set_stream(cs_kern_ctx *ctx, void *stream)
{
    Ws *ws = (Ws *)ctx->ws;

    if (stream == ctx->stream)
        return CS_KERN_OK;
    if (cudaEventRecord(ws->order, stream_of(ctx)) != cudaSuccess ||
        cudaStreamWaitEvent((cudaStream_t)stream, ws->order, 0) != cudaSuccess)
        return CS_KERN_ECUDA;
    ctx->stream = stream;
    return CS_KERN_OK;
}

int cuda_sync(cs_kern_ctx *ctx)
{
    return cudaStreamSynchronize(stream_of(ctx)) == cudaSuccess ? CS_KERN_OK : CS_KERN_ECUDA;
}

/* Copy the table (nbufs + 1 unit offsets, then nbufs pointers) to the
 * device on ctx's stream through a pinned slot; the slot is reused only
 * once its previous upload has run. */
int cuda_upload(cs_kern_ctx *ctx, const cs_kern__mt *r, const uint64_t **d_off, void *const **d_ptr)
{
    Ws *ws = (Ws *)ctx->ws;
    Slot *s = &ws->slot[ws->next++ % kSlots];
    size_t need = (2 * r->nbufs + 1) * sizeof(uint64_t), i;
    uint64_t *off, sum = 0;
    void **ptr;

    if (s->used && cudaEventSynchronize(s->ev) != cudaSuccess)
        return CS_KERN_ECUDA;
    if (need > s->cap) {
        size_t cap = need < 65536 ? 65536 : need;
        cudaFreeHost(s->host);
        cudaFree(s->dev);
        s->host = s->dev = NULL;
        s->cap = 0;
        if (cudaMallocHost(&s->host, cap) != cudaSuccess || cudaMalloc(&s->dev, cap) != cudaSuccess) {
            cudaGetLastError();
            return CS_KERN_ENOMEM;
        }
        s->cap = cap;
    }
    off = (uint64_t *)s->host;
    ptr = (void **)(off + r->nbufs + 1);
    for (i = 0; i < r->nbufs; i++) {
        off[i] = sum;
        sum += r->sizes[i] / r->usize;
        ptr[i] = r->bufs[i];
    }
    off[r->nbufs] = sum;
    if (cudaMemcpyAsync(s->dev, s->host, need, cudaMemcpyHostToDevice, stream_of(ctx)) != cudaSuccess ||
        cudaEventRecord(s->ev, stream_of(ctx)) != cudaSuccess)
        return CS_KERN_ECUDA;
    s->used = true;
    *d_off = (const uint64_t *)s->dev;
    *d_ptr = (void *const *)((uint64_t *)s->dev + r->nbufs + 1);
    return CS_KERN_OK;
}

/* ---- element access ---------------------------------------------- */

template <int T> struct Elem;
template <> struct Elem<CS_KERN_F32> {
    typedef uint32_t raw;
    static __device__ __forceinline__ uint32_t load(const void *p, uint64_t i)
    {
        return ((const uint32_t *)p)[i];
    }
    static __device__ __forceinline__ void store(void *p, uint64_t i, uint32_t u)
    {
        ((uint32_t *)p)[i] = u;
    }
};
template <> struct Elem<CS_KERN_F16> {
    static __device__ __forceinline__ uint32_t load(const void *p, uint64_t i)
    {
        return cs_kern__f16_to_f32(((const uint16_t *)p)[i]);
    }
    static __device__ __forceinline__ void store(void *p, uint64_t i, uint32_t u)
    {
        ((uint16_t *)p)[i] = cs_kern__f32_to_f16(u);
    }
};
template <> struct Elem<CS_KERN_BF16> {
    static __device__ __forceinline__ uint32_t load(const void *p, uint64_t i)
    {
        return cs_kern__bf16_to_f32(((const uint16_t *)p)[i]);
    }
    static __device__ __forceinline__ void store(void *p, uint64_t i, uint32_t u)
    {
        ((uint16_t *)p)[i] = cs_kern__f32_to_bf16(u);
    }
};

/* ---- multi-tensor transfer ----------------------------------------- */

struct MtArgs {
    const uint64_t *off; /* nbufs + 1 unit offsets */
    void *const *ptr;
    unsigned n;
    char *packed;
    uint64_t lo, hi; /* units */
    uint64_t chunk;  /* units per warp task */
    unsigned usize, psize;
    int unpack;
    float scale;
};

template <class V>
__device__ __forceinline__ void copy_vec(V *__restrict__ d, const V *__restrict__ s, uint64_t nv, unsigned lane)
{
    uint64_t k = lane;
    for (; k + 96 < nv; k += 128) {
        V a = s[k], b = s[k + 32], c = s[k + 64], e = s[k + 96];
        d[k] = a;
        d[k + 32] = b;
        d[k + 64] = c;
        d[k + 96] = e;
    }
    for (; k < nv; k += 32)
        d[k] = s[k];
}

/* Plain bytes: the widest vector the two pointers' relative alignment
 * allows (16 bytes when congruent mod 16), head and tail bytes apart. */
struct CopyOp {
    static constexpr uint64_t kSmall = 64;
    __device__ __forceinline__ void lane_copy(char *d, const char *s, uint64_t n, float) const
    {
        for (uint64_t k = 0; k < n; k++)
            d[k] = s[k];
    }
    __device__ __forceinline__ void warp_copy(char *d, const char *s, uint64_t n, unsigned lane, float) const
    {
        unsigned diff = (unsigned)(((uintptr_t)d ^ (uintptr_t)s) & 15u);
        unsigned vec = diff == 0 ? 16 : (diff & 7) == 0 ? 8 : (diff & 3) == 0 ? 4 : (diff & 1) == 0 ? 2 : 1;
        uint64_t head = (vec - ((uintptr_t)d & (vec - 1))) & (vec - 1), nv, tail;
        if (head > n)
            head = n;
        if (lane < head)
            d[lane] = s[lane];
        d += head;
        s += head;
        n -= head;
        nv = n / vec;
        switch (vec) {
        case 16: copy_vec((uint4 *)d, (const uint4 *)s, nv, lane); break;
        case 8: copy_vec((uint2 *)d, (const uint2 *)s, nv, lane); break;
        case 4: copy_vec((uint32_t *)d, (const uint32_t *)s, nv, lane); break;
        case 2: copy_vec((uint16_t *)d, (const uint16_t *)s, nv, lane); break;
        default: copy_vec((uint8_t *)d, (const uint8_t *)s, nv, lane); break;
        }
        tail = n - nv * vec;
        if (lane < tail)
            d[nv * vec + lane] = s[nv * vec + lane];
    }
};

/* Elements: convert S -> D with scale, as host.c does. */
template <int S, int D> struct CastOp {
    static constexpr uint64_t kSmall = 16;
    __device__ __forceinline__ void lane_copy(char *d, const char *s, uint64_t n, float scale) const
    {
        for (uint64_t k = 0; k < n; k++)
            Elem<D>::store(d, k, cs_kern__scale_bits(Elem<S>::load(s, k), scale));
    }
    __device__ __forceinline__ void warp_copy(char *d, const char *s, uint64_t n, unsigned lane, float scale) const
    {
        uint64_t k = lane;
        for (; k + 96 < n; k += 128) {
            uint32_t a = Elem<S>::load(s, k), b = Elem<S>::load(s, k + 32);
            uint32_t c = Elem<S>::load(s, k + 64), e = Elem<S>::load(s, k + 96);
            Elem<D>::store(d, k, cs_kern__scale_bits(a, scale));
            Elem<D>::store(d, k + 32, cs_kern__scale_bits(b, scale));
            Elem<D>::store(d, k + 64, cs_kern__scale_bits(c, scale));
            Elem<D>::store(d, k + 96, cs_kern__scale_bits(e, scale));
        }
        for (; k < n; k += 32)
            Elem<D>::store(d, k, cs_kern__scale_bits(Elem<S>::load(s, k), scale));
    }
};

/* First index i in off[0..n] with off[i] > x (off sorted, off[0] = 0). */
__device__ __forceinline__ unsigned upper_bound(const uint64_t *off, unsigned n, uint64_t x)
{
    unsigned lo = 0, hi = n + 1;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (off[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The source / destination of units [u0, u1) of buffer b. */
__device__ __forceinline__ void seg_ptrs(const MtArgs &a, unsigned b, uint64_t u0, char **d, const char **s)
{
    char *user = (char *)a.ptr[b] + (u0 - a.off[b]) * a.usize;
    char *pk = a.packed + u0 * a.psize;
    *d = a.unpack ? user : pk;
    *s = a.unpack ? pk : user;
}

/* Each warp takes chunks of a.chunk units of the packed range; in a chunk,
 * small segments go one per lane, the others are copied by the warp. */
template <class Op> __global__ void __launch_bounds__(kThreads, 2) mt_kernel(MtArgs a, Op op)
{
    const unsigned lane = threadIdx.x & 31;
    const uint64_t warp = (uint64_t)blockIdx.x * kWarps + (threadIdx.x >> 5);
    const uint64_t stride = (uint64_t)gridDim.x * kWarps * a.chunk;

    for (uint64_t c0 = a.lo + warp * a.chunk; c0 < a.hi; c0 += stride) {
        uint64_t c1 = c0 + a.chunk < a.hi ? c0 + a.chunk : a.hi;
        unsigned first = upper_bound(a.off, a.n, c0) - 1;
        unsigned last = upper_bound(a.off, a.n, c1 - 1); /* one past */
        bool big = false;
        for (unsigned b = first + lane; b < last; b += 32) {
            uint64_t u0 = a.off[b] > c0 ? a.off[b] : c0;
            uint64_t u1 = a.off[b + 1] < c1 ? a.off[b + 1] : c1;
            if (u1 <= u0)
                continue;
            if (u1 - u0 < Op::kSmall) {
                char *d;
                const char *s;
                seg_ptrs(a, b, u0, &d, &s);
                op.lane_copy(d, s, u1 - u0, a.scale);
            } else {
                big = true;
            }
        }
        if (!__any_sync(0xffffffffu, big))
            continue;
        for (unsigned b = first; b < last; b++) {
            uint64_t u0 = a.off[b] > c0 ? a.off[b] : c0;
            uint64_t u1 = a.off[b + 1] < c1 ? a.off[b + 1] : c1;
            if (u1 <= u0 || u1 - u0 < Op::kSmall)
                continue;
            char *d;
            const char *s;
            seg_ptrs(a, b, u0, &d, &s);
            op.warp_copy(d, s, u1 - u0, lane, a.scale);
        }
    }
}

template <class Op> int mt_launch(cs_kern_ctx *ctx, MtArgs &a, Op op)
{
    Ws *ws = (Ws *)ctx->ws;
    uint64_t units = a.hi - a.lo, unit = a.usize > a.psize ? a.usize : a.psize;
    uint64_t target = (uint64_t)ws->nsm * 2 * kWarps; /* warps resident */
    uint64_t chunk = (units + target - 1) / target, tasks, blocks;
    uint64_t cmin = 1024 / unit, cmax = 16384 / unit;

    chunk = chunk < cmin ? cmin : chunk > cmax ? cmax : chunk;
    a.chunk = chunk;
    tasks = (units + chunk - 1) / chunk;
    blocks = (tasks + kWarps - 1) / kWarps;
    if (blocks > (uint64_t)ws->nsm * 8)
        blocks = (uint64_t)ws->nsm * 8;
    mt_kernel<Op><<<(unsigned)blocks, kThreads, 0, stream_of(ctx)>>>(a, op);
    return cudaGetLastError() == cudaSuccess ? CS_KERN_OK : CS_KERN_ECUDA;
}

template <int S> int mt_cast_to(cs_kern_ctx *ctx, MtArgs &a, int d)
{
    switch (d) {
    case CS_KERN_F32: return mt_launch(ctx, a, CastOp<S, CS_KERN_F32>());
    case CS_KERN_F16: return mt_launch(ctx, a, CastOp<S, CS_KERN_F16>());
    default: return mt_launch(ctx, a, CastOp<S, CS_KERN_BF16>());
    }
}

int cuda_mt(cs_kern_ctx *ctx, const cs_kern__mt *r)
{
    MtArgs a;
    int rc, s, d;

    rc = cuda_upload(ctx, r, &a.off, &a.ptr);
    if (rc != CS_KERN_OK)
        return rc;
    a.n = (unsigned)r->nbufs;
    a.packed = r->packed;
    a.lo = r->lo;
    a.hi = r->hi;
    a.usize = (unsigned)r->usize;
    a.psize = (unsigned)r->psize;
    a.unpack = r->unpack;
    a.scale = r->scale;
    if (!r->cast)
        return mt_launch(ctx, a, CopyOp());
    s = r->unpack ? r->ptype : r->utype;
    d = r->unpack ? r->utype : r->ptype;
    switch (s) {
    case CS_KERN_F32: return mt_cast_to<CS_KERN_F32>(ctx, a, d);
    case CS_KERN_F16: return mt_cast_to<CS_KERN_F16>(ctx, a, d);
    default: return mt_cast_to<CS_KERN_BF16>(ctx, a, d);
    }
}

/* ---- allreduce ----------------------------------------------------- */

struct ArArgs {
    const char *in[CS_KERN_MAX_RANKS];
    uint32_t *flags[CS_KERN_MAX_RANKS];
    char *out;
    int nranks, rank;
    uint64_t count;
    float scale;
    uint32_t epoch;
    int twoshot;
    int vec; /* all pointers 16-byte aligned */
};

__device__ __forceinline__ void st_release(uint32_t *p, uint32_t v)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ uint32_t ld_acquire(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Block b of every rank meets block b of every other rank. */
__device__ void ar_barrier(const ArArgs &a, int ph)
{
    __syncthreads();
    if ((int)threadIdx.x < a.nranks) {
        uint32_t val = CS_KERN__BARRIER_VAL(a.epoch, ph);
        int p = threadIdx.x;
        __threadfence_system();
        st_release(a.flags[p] + blockIdx.x * CS_KERN_MAX_RANKS + a.rank, val);
        while ((int32_t)(ld_acquire(a.flags[a.rank] + blockIdx.x * CS_KERN_MAX_RANKS + p) - val) < 0)
            ;
    }
    __syncthreads();
}

/* dst[i] = round(sum over ranks of in[p][i], in rank order, * scale) for
 * the elements [e0, e1); 16-byte vectors where a.vec allows. */
template <int T> __device__ void ar_reduce(const ArArgs &a, uint64_t e0, uint64_t e1, char *dst)
{
    constexpr int es = T == CS_KERN_F32 ? 4 : 2, V = 16 / es;
    uint64_t i = e0;

    if (a.vec) {
        uint64_t v0 = e0 / V, v1 = e1 / V;
        for (uint64_t v = v0 + threadIdx.x; v < v1; v += blockDim.x) {
            float acc[V];
            for (int p = 0; p < a.nranks; p++) {
                uint4 w = ((const uint4 *)a.in[p])[v];
                const char *bytes = (const char *)&w;
#pragma unroll
                for (int k = 0; k < V; k++) {
                    float x = cs_kern__u2f(Elem<T>::load(bytes, k));
                    acc[k] = p == 0 ? x : acc[k] + x;
                }
            }
            uint4 o;
#pragma unroll
            for (int k = 0; k < V; k++)
                Elem<T>::store(&o, k, cs_kern__scale_bits(cs_kern__f2u(acc[k]), a.scale));
            ((uint4 *)dst)[v] = o;
        }
        i = v1 * V > e0 ? v1 * V : e0;
    }
    for (i += threadIdx.x; i < e1; i += blockDim.x) {
        float acc = 0.0f;
        for (int p = 0; p < a.nranks; p++) {
            float x = cs_kern__u2f(Elem<T>::load(a.in[p], i));
            acc = p == 0 ? x : acc + x;
        }
        Elem<T>::store(dst, i, cs_kern__scale_bits(cs_kern__f2u(acc), a.scale));
    }
}

/* Elements [*e0, *e1) of part b (of nparts) of [lo, hi), parts a multiple of 8. */
__device__ __forceinline__ void ar_part(uint64_t lo, uint64_t hi, unsigned b, unsigned nparts, uint64_t *e0,
                                        uint64_t *e1)
{
    uint64_t n = hi - lo, sub = ((n + nparts - 1) / nparts + 7) / 8 * 8;
    *e0 = lo + b * sub < hi ? lo + b * sub : hi;
    *e1 = *e0 + sub < hi ? *e0 + sub : hi;
}

template <int T> __global__ void __launch_bounds__(kThreads) ar_kernel(ArArgs a)
{
    constexpr int es = T == CS_KERN_F32 ? 4 : 2;
    uint64_t e0, e1;

    ar_barrier(a, 1);
    if (!a.twoshot) {
        ar_part(0, a.count, blockIdx.x, gridDim.x, &e0, &e1);
        ar_reduce<T>(a, e0, e1, a.out);
    } else {
        uint64_t per = ((a.count + a.nranks - 1) / a.nranks + 7) / 8 * 8;
        uint64_t lo = per * a.rank < a.count ? per * a.rank : a.count;
        uint64_t hi = lo + per < a.count ? lo + per : a.count;
        ar_part(lo, hi, blockIdx.x, gridDim.x, &e0, &e1);
        ar_reduce<T>(a, e0, e1, (char *)a.in[a.rank]); /* our slice, in place */
        ar_barrier(a, 2);
        for (int p = 0; p < a.nranks; p++) {
            lo = per * p < a.count ? per * p : a.count;
            hi = lo + per < a.count ? lo + per : a.count;
            ar_part(lo, hi, blockIdx.x, gridDim.x, &e0, &e1);
            if (a.vec) {
                /* parts start at multiples of 8 elements: 16-byte aligned */
                uint64_t b0 = e0 * es / 16, b1 = e1 * es / 16;
                for (uint64_t v = b0 + threadIdx.x; v < b1; v += blockDim.x)
                    ((uint4 *)a.out)[v] = ((const uint4 *)a.in[p])[v];
                e0 = b1 * 16 / es > e0 ? b1 * 16 / es : e0;
            }
            for (uint64_t i = e0 + threadIdx.x; i < e1; i += blockDim.x)
                memcpy(a.out + i * es, a.in[p] + i * es, es);
        }
    }
    ar_barrier(a, 3);
}

int cuda_allreduce(cs_kern_ctx *ctx, const cs_kern__ar *r)
{
    const cs_kern_peers *pe = r->peers;
    size_t bytes = r->count * cs_kern_dtype_size(r->dtype);
    unsigned blocks = (unsigned)((bytes + 32767) / 32768);
    ArArgs a;
    uintptr_t align = (uintptr_t)r->out;
    int p;

    memset(&a, 0, sizeof a);
    for (p = 0; p < pe->nranks; p++) {
        a.in[p] = (const char *)pe->bufs[p];
        a.flags[p] = pe->flags[p];
        align |= (uintptr_t)pe->bufs[p];
    }
    a.out = (char *)r->out;
    a.nranks = pe->nranks;
    a.rank = pe->rank;
    a.count = r->count;
    a.scale = r->scale;
    a.epoch = r->epoch;
    a.twoshot = r->algo == CS_KERN_AR_TWOSHOT;
    a.vec = (align & 15) == 0;
    if (blocks < 1)
        blocks = 1;
    if (blocks > CS_KERN__AR_MAX_BLOCKS)
        blocks = CS_KERN__AR_MAX_BLOCKS;
    switch (r->dtype) {
    case CS_KERN_F32: ar_kernel<CS_KERN_F32><<<blocks, kThreads, 0, stream_of(ctx)>>>(a); break;
    case CS_KERN_F16: ar_kernel<CS_KERN_F16><<<blocks, kThreads, 0, stream_of(ctx)>>>(a); break;
    default: ar_kernel<CS_KERN_BF16><<<blocks, kThreads, 0, stream_of(ctx)>>>(a); break;
    }
    return cudaGetLastError() == cudaSuccess ? CS_KERN_OK : CS_KERN_ECUDA;
}

/* ---- IPC ------------------------------------------------------------ */

struct IpcRec {
    cudaIpcMemHandle_t buf, flags;
};

int cuda_peers_open(cs_kern_ctx *ctx, size_t capacity, int rank, int nranks, cs_kern_allgather_fn allgather, void *user,
                    cs_kern_peers *pe)
{
    IpcRec mine, all[CS_KERN_MAX_RANKS];
    void *buf = NULL, *flags = NULL;
    int p, rc = CS_KERN_OK;

    if (cudaMalloc(&buf, capacity ? capacity : 256) != cudaSuccess ||
        cudaMalloc(&flags, cs_kern_signal_bytes()) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(buf);
        return CS_KERN_ENOMEM;
    }
    if (cudaMemset(flags, 0, cs_kern_signal_bytes()) != cudaSuccess ||
        cudaIpcGetMemHandle(&mine.buf, buf) != cudaSuccess || cudaIpcGetMemHandle(&mine.flags, flags) != cudaSuccess) {
        rc = CS_KERN_ECUDA;
        goto fail;
    }
    if (allgather(&mine, all, sizeof mine, user) != 0) {
        rc = CS_KERN_ECALLBACK;
        goto fail;
    }
    memset(pe, 0, sizeof *pe);
    pe->nranks = nranks;
    pe->rank = rank;
    pe->capacity = capacity;
    pe->bufs[rank] = buf;
    pe->flags[rank] = (uint32_t *)flags;
    for (p = 0; p < nranks; p++) {
        void *b = NULL, *f = NULL;
        if (p == rank)
            continue;
        if (cudaIpcOpenMemHandle(&b, all[p].buf, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess ||
            cudaIpcOpenMemHandle(&f, all[p].flags, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
            cudaGetLastError();
            if (b)
                cudaIpcCloseMemHandle(b);
            for (int q = 0; q < p; q++)
                if (q != rank) {
                    cudaIpcCloseMemHandle(pe->bufs[q]);
                    cudaIpcCloseMemHandle(pe->flags[q]);
                }
            memset(pe, 0, sizeof *pe);
            rc = CS_KERN_ECUDA;
            goto fail;
        }
        pe->bufs[p] = b;
        pe->flags[p] = (uint32_t *)f;
    }
    return CS_KERN_OK;
fail:
    cudaFree(buf);
    cudaFree(flags);
    return rc;
}

int cuda_peers_close(cs_kern_ctx *ctx, cs_kern_peers *pe)
{
    int p, rc = CS_KERN_OK;

    for (p = 0; p < pe->nranks; p++) {
        if (p == pe->rank)
            continue;
        if (pe->bufs[p] && cudaIpcCloseMemHandle(pe->bufs[p]) != cudaSuccess)
            rc = CS_KERN_ECUDA;
        if (pe->flags[p] && cudaIpcCloseMemHandle(pe->flags[p]) != cudaSuccess)
            rc = CS_KERN_ECUDA;
    }
    cudaFree(pe->bufs[pe->rank]);
    cudaFree(pe->flags[pe->rank]);
    memset(pe, 0, sizeof *pe);
    return rc;
}

/* ---- events ---------------------------------------------------------- */

int cuda_event_new(cs_kern_ctx *ctx, void **ev)
{
    cudaEvent_t e;

    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess)
        return CS_KERN_ECUDA;
    *ev = (void *)e;
    return CS_KERN_OK;
}

int cuda_event_record(cs_kern_ctx *ctx, void *ev, void *stream)
{
    return cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)stream) == cudaSuccess ? CS_KERN_OK : CS_KERN_ECUDA;
}

int cuda_event_wait(cs_kern_ctx *ctx, void *stream, void *ev)
{
    return cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)ev, 0) == cudaSuccess ? CS_KERN_OK : CS_KERN_ECUDA;
}

void cuda_event_free(cs_kern_ctx *ctx, void *ev)
{
    if (ev)
        cudaEventDestroy((cudaEvent_t)ev);
}

} /* namespace */

extern "C" const cs_kern__ops cs_kern__cuda_ops = {
    "cuda",          cuda_ctx_init,   cuda_ctx_fini,    cuda_set_stream, cuda_sync,         cuda_mt,
    cuda_allreduce,  cuda_peers_open, cuda_peers_close, cuda_event_new,  cuda_event_record, cuda_event_wait,
    cuda_event_free,
};
