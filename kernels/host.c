/* host.c: the host reference backend of libcskernels. Plain C on host
 * memory, the same contracts as the CUDA backend (same conversions, same
 * summation order), used by tests and by CPU stand-ins of libcudart and
 * libnccl. Barriers of the allreduce spin on the signal pads with atomics,
 * so ranks may be threads of one process. */
#include "config.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/convert.h"
#include "kernels/kernels-int.h"

static int host_ctx_init(cs_kern_ctx *ctx)
{
    return CS_KERN_OK;
}
static void host_ctx_fini(cs_kern_ctx *ctx)
{
}
static int host_set_stream(cs_kern_ctx *ctx, void *stream)
{
    ctx->stream = stream;
    return CS_KERN_OK;
}
static int host_sync(cs_kern_ctx *ctx)
{
    return CS_KERN_OK;
}

/* Load element i of a dtype array as fp32 bits. */
static uint32_t host_load(const void *p, size_t i, cs_kern_dtype t)
{
    uint16_t h;
    uint32_t u;

    switch (t) {
    case CS_KERN_F16: memcpy(&h, (const char *)p + 2 * i, 2); return cs_kern__f16_to_f32(h);
    case CS_KERN_BF16: memcpy(&h, (const char *)p + 2 * i, 2); return cs_kern__bf16_to_f32(h);
    case CS_KERN_F32:
    default: memcpy(&u, (const char *)p + 4 * i, 4); return u;
    }
}

/* Store fp32 bits u as element i of a dtype array, rounding. */
static void host_store(void *p, size_t i, cs_kern_dtype t, uint32_t u)
{
    uint16_t h;

    switch (t) {
    case CS_KERN_F16:
        h = cs_kern__f32_to_f16(u);
        memcpy((char *)p + 2 * i, &h, 2);
        break;
    case CS_KERN_BF16:
        h = cs_kern__f32_to_bf16(u);
        memcpy((char *)p + 2 * i, &h, 2);
        break;
    case CS_KERN_F32:
    default: memcpy((char *)p + 4 * i, &u, 4); break;
    }
}

static int host_mt(cs_kern_ctx *ctx, const cs_kern__mt *r)
{
    size_t i, off = 0;

    for (i = 0; i < r->nbufs && off < r->hi; i++) {
        size_t n = r->sizes[i] / r->usize, a, b, k;
        if (off + n <= r->lo || n == 0) {
            off += n;
            continue;
        }
        a = r->lo > off ? r->lo - off : 0; /* units of this buffer */
        b = r->hi < off + n ? r->hi - off : n;
        if (!r->cast) {
            char *u = (char *)r->bufs[i] + a, *pk = r->packed + off + a;
            if (r->unpack)
                memcpy(u, pk, b - a);
            else
                memcpy(pk, u, b - a);
        } else if (r->unpack) {
            for (k = a; k < b; k++)
                host_store(r->bufs[i], k, r->utype,
                           cs_kern__scale_bits(host_load(r->packed, off + k, r->ptype), r->scale));
        } else {
            for (k = a; k < b; k++)
                host_store(r->packed, off + k, r->ptype,
                           cs_kern__scale_bits(host_load(r->bufs[i], k, r->utype), r->scale));
        }
        off += n;
    }
    return CS_KERN_OK;
}

/* Barrier phase ph of this call: tell every rank, wait for every rank. */
static void host_barrier(cs_kern_peers *pe, uint32_t epoch, int ph)
{
    uint32_t val = CS_KERN__BARRIER_VAL(epoch, ph);
    int p;

    for (p = 0; p < pe->nranks; p++)
        __atomic_store_n(&pe->flags[p][pe->rank], val, __ATOMIC_RELEASE);
    for (p = 0; p < pe->nranks; p++)
        while ((int32_t)(__atomic_load_n(&pe->flags[pe->rank][p], __ATOMIC_ACQUIRE) - val) < 0)
            sched_yield();
}

/* Sum elements [lo, hi) over the ranks in rank order, scaled, into dst. */
static void host_reduce(const cs_kern__ar *r, size_t lo, size_t hi, void *dst, size_t dst_off)
{
    const cs_kern_peers *pe = r->peers;
    size_t i;
    int p;

    for (i = lo; i < hi; i++) {
        float acc = 0.0f;
        for (p = 0; p < pe->nranks; p++) {
            float x = cs_kern__u2f(host_load(pe->bufs[p], i, r->dtype));
            acc = p == 0 ? x : acc + x;
        }
        host_store(dst, i - dst_off, r->dtype, cs_kern__scale_bits(cs_kern__f2u(acc), r->scale));
    }
}

static int host_allreduce(cs_kern_ctx *ctx, const cs_kern__ar *r)
{
    cs_kern_peers *pe = r->peers;
    size_t es = cs_kern_dtype_size(r->dtype);

    host_barrier(pe, r->epoch, 1);
    if (r->algo == CS_KERN_AR_ONESHOT) {
        host_reduce(r, 0, r->count, r->out, 0);
    } else {
        size_t per = (r->count + pe->nranks - 1) / pe->nranks, lo, hi;
        int p;
        lo = per * pe->rank < r->count ? per * pe->rank : r->count;
        hi = lo + per < r->count ? lo + per : r->count;
        host_reduce(r, lo, hi, pe->bufs[pe->rank], 0); /* our slice, in place */
        host_barrier(pe, r->epoch, 2);
        for (p = 0; p < pe->nranks; p++) {
            lo = per * p < r->count ? per * p : r->count;
            hi = lo + per < r->count ? lo + per : r->count;
            memcpy((char *)r->out + lo * es, (const char *)pe->bufs[p] + lo * es, (hi - lo) * es);
        }
    }
    host_barrier(pe, r->epoch, 3);
    return CS_KERN_OK;
}

/* What a rank publishes: the addresses of its buffer and pad. */
typedef struct host_rec {
    uint64_t buf, flags;
} host_rec;

static int host_peers_open(cs_kern_ctx *ctx, size_t capacity, int rank, int nranks, cs_kern_allgather_fn allgather,
                           void *user, cs_kern_peers *pe)
{
    host_rec mine, all[CS_KERN_MAX_RANKS];
    void *buf = NULL;
    uint32_t *flags;
    int p;

    if (posix_memalign(&buf, 256, capacity ? capacity : 1) != 0)
        return CS_KERN_ENOMEM;
    flags = calloc(1, cs_kern_signal_bytes());
    if (!flags) {
        free(buf);
        return CS_KERN_ENOMEM;
    }
    mine.buf = (uint64_t)(uintptr_t)buf;
    mine.flags = (uint64_t)(uintptr_t)flags;
    if (allgather(&mine, all, sizeof mine, user) != 0) {
        free(buf);
        free(flags);
        return CS_KERN_ECALLBACK;
    }
    memset(pe, 0, sizeof *pe);
    pe->nranks = nranks;
    pe->rank = rank;
    pe->capacity = capacity;
    for (p = 0; p < nranks; p++) {
        pe->bufs[p] = (void *)(uintptr_t)all[p].buf;
        pe->flags[p] = (uint32_t *)(uintptr_t)all[p].flags;
    }
    return CS_KERN_OK;
}

static int host_peers_close(cs_kern_ctx *ctx, cs_kern_peers *pe)
{
    free(pe->bufs[pe->rank]);
    free(pe->flags[pe->rank]);
    memset(pe, 0, sizeof *pe);
    return CS_KERN_OK;
}

static int host_event_new(cs_kern_ctx *ctx, void **ev)
{
    *ev = NULL;
    return CS_KERN_OK;
}
static int host_event_record(cs_kern_ctx *ctx, void *ev, void *stream)
{
    return CS_KERN_OK;
}
static int host_event_wait(cs_kern_ctx *ctx, void *stream, void *ev)
{
    return CS_KERN_OK;
}
static void host_event_free(cs_kern_ctx *ctx, void *ev)
{
}

const cs_kern__ops cs_kern__host_ops = {
    .name = "host",
    .ctx_init = host_ctx_init,
    .ctx_fini = host_ctx_fini,
    .set_stream = host_set_stream,
    .sync = host_sync,
    .mt = host_mt,
    .allreduce = host_allreduce,
    .peers_open = host_peers_open,
    .peers_close = host_peers_close,
    .event_new = host_event_new,
    .event_record = host_event_record,
    .event_wait = host_event_wait,
    .event_free = host_event_free,
};
