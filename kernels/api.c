/* api.c: the front end of libcskernels. Checks every argument once for
 * both backends (so bad input gives the same code everywhere and touches
 * nothing), then dispatches through the backend's ops table. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/kernels-int.h"

static const struct {
    int rc;
    const char *msg;
} cs_kern__errtab[] = {
#define CS_KERN__MSG(name, val, msg) { val, msg },
    CS_KERN_ERRNO_MAP(CS_KERN__MSG)
#undef CS_KERN__MSG
};

const char *cs_kern_strerror(int rc)
{
    size_t i;

    for (i = 0; i < sizeof cs_kern__errtab / sizeof cs_kern__errtab[0]; i++)
        if (cs_kern__errtab[i].rc == rc)
            return cs_kern__errtab[i].msg;
    return "unknown error";
}

size_t cs_kern_dtype_size(cs_kern_dtype dtype)
{
    switch (dtype) {
    case CS_KERN_F32: return 4;
    case CS_KERN_F16: return 2;
    case CS_KERN_BF16: return 2;
    }
    return 0;
}

static const cs_kern__ops *cs_kern__backend_ops(cs_kern_backend backend)
{
    switch (backend) {
    case CS_KERN_HOST: return &cs_kern__host_ops;
    case CS_KERN_CUDA:
#ifdef CS_KERN_WITH_CUDA
        return &cs_kern__cuda_ops;
#else
        return NULL;
#endif
    }
    return NULL;
}

int cs_kern_ctx_new(cs_kern_backend backend, cs_kern_ctx **out)
{
    cs_kern_ctx *ctx;
    int rc;

    if (!out)
        return CS_KERN_EINVAL;
    *out = NULL;
    if (backend != CS_KERN_HOST && backend != CS_KERN_CUDA)
        return CS_KERN_EINVAL;
    if (!cs_kern__backend_ops(backend))
        return CS_KERN_ENOBACKEND;
    ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return CS_KERN_ENOMEM;
    ctx->backend = backend;
    ctx->ops = cs_kern__backend_ops(backend);
    rc = ctx->ops->ctx_init(ctx);
    if (rc != CS_KERN_OK) {
        free(ctx);
        return rc;
    }
    *out = ctx;
    return CS_KERN_OK;
}

void cs_kern_ctx_free(cs_kern_ctx *ctx)
{
    if (!ctx)
        return;
    ctx->ops->ctx_fini(ctx);
    free(ctx);
}

cs_kern_backend cs_kern_ctx_backend(const cs_kern_ctx *ctx)
{
    return ctx->backend;
}

int cs_kern_ctx_set_stream(cs_kern_ctx *ctx, void *stream)
{
    if (!ctx)
        return CS_KERN_EINVAL;
    return ctx->ops->set_stream(ctx, stream);
}

int cs_kern_ctx_sync(cs_kern_ctx *ctx)
{
    if (!ctx)
        return CS_KERN_EINVAL;
    return ctx->ops->sync(ctx);
}

static int cs_kern__dtype_ok(cs_kern_dtype d)
{
    return cs_kern_dtype_size(d) != 0;
}

/* Check table t; count its units (bytes, or elements of usize bytes). */
static int cs_kern__table_units(const cs_kern_table *t, size_t usize, size_t *units)
{
    size_t i, sum = 0;

    if (!t)
        return CS_KERN_EINVAL;
    if (t->nbufs > CS_KERN_MAX_BUFS)
        return CS_KERN_ETOOMANY;
    if (t->nbufs > 0 && (!t->bufs || !t->sizes))
        return CS_KERN_EINVAL;
    for (i = 0; i < t->nbufs; i++) {
        size_t n = t->sizes[i];
        if (n > 0 && !t->bufs[i])
            return CS_KERN_EINVAL;
        if (n % usize)
            return CS_KERN_EELEMSIZE;
        if (usize > 1 && n > 0 && (uintptr_t)t->bufs[i] % usize)
            return CS_KERN_EALIGN;
        n /= usize;
        if (n > SIZE_MAX - sum)
            return CS_KERN_EOVERFLOW;
        sum += n;
    }
    *units = sum;
    return CS_KERN_OK;
}

int cs_kern_table_bytes(const cs_kern_table *t, size_t *total)
{
    if (!total)
        return CS_KERN_EINVAL;
    return cs_kern__table_units(t, 1, total);
}

/* Build and check a request; lo/hi SIZE_MAX means "the whole layout". */
static int cs_kern__mt_run(cs_kern_ctx *ctx, const cs_kern_table *t, int cast, cs_kern_dtype utype, cs_kern_dtype ptype,
                           const void *packed, int unpack, float scale, size_t lo, size_t hi)
{
    cs_kern__mt req = { 0 };
    int rc;

    if (!ctx)
        return CS_KERN_EINVAL;
    req.cast = cast;
    req.usize = req.psize = 1;
    if (cast) {
        if (!cs_kern__dtype_ok(utype) || !cs_kern__dtype_ok(ptype) || !isfinite(scale))
            return CS_KERN_EINVAL;
        req.utype = utype;
        req.ptype = ptype;
        req.usize = cs_kern_dtype_size(utype);
        req.psize = cs_kern_dtype_size(ptype);
    }
    rc = cs_kern__table_units(t, req.usize, &req.total);
    if (rc != CS_KERN_OK)
        return rc;
    if (req.total > SIZE_MAX / req.psize)
        return CS_KERN_EOVERFLOW;
    if (lo == SIZE_MAX && hi == SIZE_MAX) {
        lo = 0;
        hi = req.total;
    }
    if (lo > hi || hi > req.total)
        return CS_KERN_ERANGE;
    if (!packed && req.total > 0)
        return CS_KERN_EINVAL;
    if (cast && (uintptr_t)packed % req.psize)
        return CS_KERN_EALIGN;
    /* A cast with equal types and no scale is a plain copy of bytes. */
    if (cast && utype == ptype && scale == 1.0f) {
        req.cast = 0;
        lo *= req.usize;
        hi *= req.usize;
        req.total *= req.usize;
        req.usize = req.psize = 1;
    }
    req.bufs = t->bufs;
    req.sizes = t->sizes;
    req.nbufs = t->nbufs;
    req.packed = (char *)packed;
    req.unpack = unpack;
    req.scale = scale;
    req.lo = lo;
    req.hi = hi;
    if (lo == hi)
        return CS_KERN_OK;
    return ctx->ops->mt(ctx, &req);
}

int cs_kern_pack(cs_kern_ctx *ctx, const cs_kern_table *t, void *packed)
{
    return cs_kern__mt_run(ctx, t, 0, CS_KERN_F32, CS_KERN_F32, packed, 0, 1.0f, SIZE_MAX, SIZE_MAX);
}

int cs_kern_unpack(cs_kern_ctx *ctx, const cs_kern_table *t, const void *packed)
{
    return cs_kern__mt_run(ctx, t, 0, CS_KERN_F32, CS_KERN_F32, packed, 1, 1.0f, SIZE_MAX, SIZE_MAX);
}

int cs_kern_pack_cast(cs_kern_ctx *ctx, const cs_kern_table *t, cs_kern_dtype user_type, void *packed,
                      cs_kern_dtype packed_type, float scale)
{
    return cs_kern__mt_run(ctx, t, 1, user_type, packed_type, packed, 0, scale, SIZE_MAX, SIZE_MAX);
}

int cs_kern_unpack_cast(cs_kern_ctx *ctx, const cs_kern_table *t, cs_kern_dtype user_type, const void *packed,
                        cs_kern_dtype packed_type, float scale)
{
    return cs_kern__mt_run(ctx, t, 1, user_type, packed_type, packed, 1, scale, SIZE_MAX, SIZE_MAX);
}

int cs_kern_pack_range(cs_kern_ctx *ctx, const cs_kern_table *t, void *packed, size_t lo, size_t hi)
{
    if (lo == SIZE_MAX)
        return CS_KERN_ERANGE;
    return cs_kern__mt_run(ctx, t, 0, CS_KERN_F32, CS_KERN_F32, packed, 0, 1.0f, lo, hi);
}

int cs_kern_unpack_cast_range(cs_kern_ctx *ctx, const cs_kern_table *t, cs_kern_dtype user_type, const void *packed,
                              cs_kern_dtype packed_type, float scale, size_t lo, size_t hi)
{
    if (lo == SIZE_MAX)
        return CS_KERN_ERANGE;
    return cs_kern__mt_run(ctx, t, 1, user_type, packed_type, packed, 1, scale, lo, hi);
}

/* ---- allreduce ----------------------------------------------------- */

size_t cs_kern_signal_bytes(void)
{
    return CS_KERN__SIGNAL_WORDS * sizeof(uint32_t);
}

/* Defaults: one-shot moves (n-1) * bytes into every rank but has one
 * barrier of latency; two-shot moves 2 (n-1)/n * bytes with two more
 * barriers. Past a few MB NCCL's ring / NVLS reaches bus bandwidth. */
static const cs_kern_ar_tuning cs_kern__ar_default = {
    256u * 1024u,      /* oneshot_max */
    8u * 1024u * 1024u /* twoshot_max */
};

cs_kern_ar_algo cs_kern_allreduce_select(size_t bytes, int nranks, const cs_kern_ar_tuning *tuning)
{
    const cs_kern_ar_tuning *tu = tuning ? tuning : &cs_kern__ar_default;
    size_t oneshot_max = tu->oneshot_max;

    if (nranks < 2 || nranks > CS_KERN_MAX_RANKS)
        return CS_KERN_AR_NCCL;
    /* With 2 ranks one-shot reads no more than two-shot: prefer it longer. */
    if (nranks == 2 && tuning == NULL)
        oneshot_max *= 4;
    if (bytes <= oneshot_max)
        return CS_KERN_AR_ONESHOT;
    if (bytes <= tu->twoshot_max)
        return CS_KERN_AR_TWOSHOT;
    return CS_KERN_AR_NCCL;
}

int cs_kern_allreduce(cs_kern_ctx *ctx, cs_kern_peers *peers, cs_kern_ar_algo algo, void *out, size_t count,
                      cs_kern_dtype dtype, float scale)
{
    cs_kern__ar req;
    size_t esize = cs_kern_dtype_size(dtype), bytes;
    int p, rc;

    if (!ctx || !peers || !esize || !isfinite(scale))
        return CS_KERN_EINVAL;
    if (algo != CS_KERN_AR_ONESHOT && algo != CS_KERN_AR_TWOSHOT)
        return CS_KERN_EINVAL;
    if (peers->nranks > CS_KERN_MAX_RANKS)
        return CS_KERN_ETOOMANY;
    if (peers->nranks < 1 || peers->rank < 0 || peers->rank >= peers->nranks)
        return CS_KERN_EINVAL;
    if (count > SIZE_MAX / esize)
        return CS_KERN_EOVERFLOW;
    bytes = count * esize;
    if (bytes > peers->capacity)
        return CS_KERN_ERANGE;
    for (p = 0; p < peers->nranks; p++)
        if (!peers->bufs[p] || !peers->flags[p])
            return CS_KERN_EINVAL;
    if (!out && count > 0)
        return CS_KERN_EINVAL;
    if ((uintptr_t)out % esize)
        return CS_KERN_EALIGN;
    for (p = 0; p < peers->nranks; p++)
        if ((uintptr_t)peers->bufs[p] % esize)
            return CS_KERN_EALIGN;
    { /* out must not overlap our input */
        uintptr_t o = (uintptr_t)out, b = (uintptr_t)peers->bufs[peers->rank];
        if (count > 0 && o < b + bytes && b < o + bytes)
            return CS_KERN_EINVAL;
    }
    req.peers = peers;
    req.algo = algo;
    req.out = out;
    req.count = count;
    req.dtype = dtype;
    req.scale = scale;
    req.epoch = peers->epoch;
    rc = ctx->ops->allreduce(ctx, &req);
    if (rc == CS_KERN_OK)
        peers->epoch++;
    return rc;
}

int cs_kern_peers_open(cs_kern_ctx *ctx, size_t capacity, int rank, int nranks, cs_kern_allgather_fn allgather,
                       void *user, cs_kern_peers *peers)
{
    if (!ctx || !allgather || !peers)
        return CS_KERN_EINVAL;
    if (nranks > CS_KERN_MAX_RANKS)
        return CS_KERN_ETOOMANY;
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return CS_KERN_EINVAL;
    return ctx->ops->peers_open(ctx, capacity, rank, nranks, allgather, user, peers);
}

int cs_kern_peers_close(cs_kern_ctx *ctx, cs_kern_peers *peers, cs_kern_allgather_fn allgather, void *user)
{
    int rc;

    if (!ctx || !peers)
        return CS_KERN_EINVAL;
    if (allgather) {
        int dummy = 0, all[CS_KERN_MAX_RANKS];
        if (ctx->ops->sync(ctx) != CS_KERN_OK)
            return CS_KERN_ECUDA;
        if (allgather(&dummy, all, sizeof dummy, user) != 0)
            return CS_KERN_ECALLBACK;
    }
    rc = ctx->ops->peers_close(ctx, peers);
    return rc;
}

/* ---- pipelining ---------------------------------------------------- */

int cs_kern_pipeline_run(cs_kern_ctx *ctx, const cs_kern_pipeline *p)
{
    size_t ptotal, psize, chunk, nchunks, i;
    void *ev_pack = NULL, *ev_comm[2] = { NULL, NULL };
    int rc;

    if (!ctx || !p || !p->comm)
        return CS_KERN_EINVAL;
    if (!cs_kern__dtype_ok(p->user_type) || !cs_kern__dtype_ok(p->packed_type) || !isfinite(p->scale))
        return CS_KERN_EINVAL;
    if (ctx->backend == CS_KERN_CUDA && p->comm_stream == ctx->stream)
        return CS_KERN_EINVAL;
    psize = cs_kern_dtype_size(p->packed_type);
    if (p->chunk_bytes % psize)
        return CS_KERN_EELEMSIZE;
    /* Validate the whole transfer once (no range): nothing is queued on error. */
    rc = cs_kern__table_units(p->table, cs_kern_dtype_size(p->user_type), &ptotal);
    if (rc != CS_KERN_OK)
        return rc;
    if (ptotal > SIZE_MAX / psize)
        return CS_KERN_EOVERFLOW;
    if (!p->packed && ptotal > 0)
        return CS_KERN_EINVAL;
    if ((uintptr_t)p->packed % psize)
        return CS_KERN_EALIGN;
    if (ptotal == 0)
        return CS_KERN_OK;
    chunk = p->chunk_bytes ? p->chunk_bytes / psize : ptotal; /* elements */
    nchunks = (ptotal + chunk - 1) / chunk;

    if ((rc = ctx->ops->event_new(ctx, &ev_pack)) != CS_KERN_OK ||
        (rc = ctx->ops->event_new(ctx, &ev_comm[0])) != CS_KERN_OK ||
        (rc = ctx->ops->event_new(ctx, &ev_comm[1])) != CS_KERN_OK)
        goto out;
    for (i = 0; i <= nchunks; i++) {
        if (i < nchunks) {
            size_t lo = i * chunk, hi = lo + chunk < ptotal ? lo + chunk : ptotal;
            rc = cs_kern__mt_run(ctx, p->table, 1, p->user_type, p->packed_type, p->packed, 0, 1.0f, lo, hi);
            if (rc != CS_KERN_OK)
                goto out;
            if ((rc = ctx->ops->event_record(ctx, ev_pack, ctx->stream)) != CS_KERN_OK ||
                (rc = ctx->ops->event_wait(ctx, p->comm_stream, ev_pack)) != CS_KERN_OK)
                goto out;
            if (p->comm((char *)p->packed + lo * psize, (hi - lo) * psize, lo * psize, p->comm_stream, p->user) != 0) {
                rc = CS_KERN_ECALLBACK;
                goto out;
            }
            if ((rc = ctx->ops->event_record(ctx, ev_comm[i % 2], p->comm_stream)) != CS_KERN_OK)
                goto out;
        }
        if (i > 0) { /* unpack the previous chunk */
            size_t lo = (i - 1) * chunk, hi = lo + chunk < ptotal ? lo + chunk : ptotal;
            if ((rc = ctx->ops->event_wait(ctx, ctx->stream, ev_comm[(i - 1) % 2])) != CS_KERN_OK)
                goto out;
            rc = cs_kern__mt_run(ctx, p->table, 1, p->user_type, p->packed_type, p->packed, 1, p->scale, lo, hi);
            if (rc != CS_KERN_OK)
                goto out;
        }
    }
out:
    ctx->ops->event_free(ctx, ev_pack);
    ctx->ops->event_free(ctx, ev_comm[0]);
    ctx->ops->event_free(ctx, ev_comm[1]);
    return rc;
}
