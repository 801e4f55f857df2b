/* kernels-int.h: what the shared front end (api.c) and the backends
 * (host.c, cuda.cu) share. Internal (not installed). The front end checks
 * every argument, then calls the backend through its ops table; a backend
 * sees only validated requests. */
#ifndef CS_KERN_INT_H
#define CS_KERN_INT_H

#include "kernels/cskernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of one allreduce kernel at most (each has its signal slots). */
#define CS_KERN__AR_MAX_BLOCKS 32
/* Signal pad: one uint32 per (block, source rank). */
#define CS_KERN__SIGNAL_WORDS (CS_KERN__AR_MAX_BLOCKS * CS_KERN_MAX_RANKS)
/* Barrier value of phase ph (1..3) of call epoch e; compared modulo 2^32. */
#define CS_KERN__BARRIER_VAL(e, ph) ((uint32_t)(e)*4u + (uint32_t)(ph))

/* A validated multi-tensor transfer. Units are bytes for a plain copy and
 * elements for a cast; user buffer i holds sizes[i] / usize units. */
typedef struct cs_kern__mt {
    void *const *bufs;
    const size_t *sizes; /* bytes */
    size_t nbufs;
    int cast; /* 0: plain byte copy (types unused) */
    cs_kern_dtype utype, ptype;
    size_t usize, psize; /* bytes per unit: user side, packed side */
    size_t total;        /* units of the whole packed layout */
    size_t lo, hi;       /* units transferred: [lo, hi) */
    char *packed;        /* start of the whole packed buffer */
    int unpack;          /* 0: user -> packed, 1: packed -> user */
    float scale;
} cs_kern__mt;

/* A validated allreduce. */
typedef struct cs_kern__ar {
    cs_kern_peers *peers;
    cs_kern_ar_algo algo; /* ONESHOT or TWOSHOT */
    void *out;
    size_t count;
    cs_kern_dtype dtype;
    float scale;
    uint32_t epoch;
} cs_kern__ar;

typedef struct cs_kern__ops {
    const char *name;
    int (*ctx_init)(cs_kern_ctx *ctx);
    void (*ctx_fini)(cs_kern_ctx *ctx);
    int (*set_stream)(cs_kern_ctx *ctx, void *stream);
    int (*sync)(cs_kern_ctx *ctx);
    int (*mt)(cs_kern_ctx *ctx, const cs_kern__mt *req);
    int (*allreduce)(cs_kern_ctx *ctx, const cs_kern__ar *req);
    int (*peers_open)(cs_kern_ctx *ctx, size_t capacity, int rank, int nranks, cs_kern_allgather_fn allgather,
                      void *user, cs_kern_peers *peers);
    int (*peers_close)(cs_kern_ctx *ctx, cs_kern_peers *peers);
    /* Stream ordering for the pipeline: events (NULL-able on host). */
    int (*event_new)(cs_kern_ctx *ctx, void **ev);
    int (*event_record)(cs_kern_ctx *ctx, void *ev, void *stream);
    int (*event_wait)(cs_kern_ctx *ctx, void *stream, void *ev);
    void (*event_free)(cs_kern_ctx *ctx, void *ev);
} cs_kern__ops;

struct cs_kern_ctx {
    cs_kern_backend backend;
    const cs_kern__ops *ops;
    void *stream; /* cudaStream_t of the CUDA backend */
    void *ws;     /* backend workspace */
};

extern const cs_kern__ops cs_kern__host_ops;
#ifdef CS_KERN_WITH_CUDA
extern const cs_kern__ops cs_kern__cuda_ops;
#endif

#ifdef __cplusplus
}
#endif
#endif
