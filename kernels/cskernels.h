/* cskernels.h: fused-collective kernels of collscope (libcskernels).
 *
 * The fusion engine packs many small user buffers into one contiguous
 * buffer, runs one allreduce, and unpacks the result (optionally scaled by
 * 1/world_size and cast). This library does the packing, the fused
 * unpack + scale + cast, a one-shot / two-shot intra-node allreduce on
 * peer-accessible buffers, and a chunked pack/comm/unpack pipeline.
 *
 * Backends. Every operation exists in two backends, chosen explicitly by
 * the context a caller creates:
 *   CS_KERN_HOST  plain C on host memory: the reference implementation,
 *                 always built, used by tests and by CPU stand-ins of
 *                 libcudart / libnccl.
 *   CS_KERN_CUDA  CUDA kernels on device memory (built only with nvcc;
 *                 cs_kern_ctx_new() returns CS_KERN_ENOBACKEND otherwise).
 * Both backends validate arguments in the same shared code, so bad input
 * gives the same error code on both and launches / writes nothing.
 *
 * Results are bit-identical between the backends for every input except
 * the payload bits of NaNs produced by an allreduce sum (both are NaN).
 *
 * Errors: every function returns 0 (CS_KERN_OK) or a negative cs_kern_err;
 * cs_kern_strerror() gives its message. See docs/kernels.md.
 */
#ifndef CSKERNELS_H
#define CSKERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most buffers one pack/unpack call accepts (table entries). */
#define CS_KERN_MAX_BUFS 65536
/* The most ranks of a one-shot / two-shot allreduce (one node). */
#define CS_KERN_MAX_RANKS 8

/* Error codes and messages: one table, expanded where needed. */
#define CS_KERN_ERRNO_MAP(X)                                                              \
    X(OK, 0, "success")                                                                   \
    X(EINVAL, -1, "invalid argument (null pointer, bad enum or bad value)")               \
    X(EOVERFLOW, -2, "total size overflows size_t")                                       \
    X(EELEMSIZE, -3, "byte count is not a multiple of the element size")                  \
    X(ETOOMANY, -4, "more buffers than CS_KERN_MAX_BUFS or ranks than CS_KERN_MAX_RANKS") \
    X(ERANGE, -5, "offset or length outside the packed buffer")                           \
    X(ENOBACKEND, -6, "backend not built into this library (no nvcc at build time)")      \
    X(ENODEV, -7, "no usable CUDA device")                                                \
    X(ECUDA, -8, "CUDA runtime call failed")                                              \
    X(ENOMEM, -9, "out of memory")                                                        \
    X(ECALLBACK, -10, "caller callback returned an error")                                \
    X(EALIGN, -11, "pointer not aligned to its element size")

typedef enum cs_kern_err {
#define CS_KERN__ENUM(name, val, msg) CS_KERN_##name = (val),
    CS_KERN_ERRNO_MAP(CS_KERN__ENUM)
#undef CS_KERN__ENUM
        CS_KERN_ERR_LAST = -12
} cs_kern_err;

/* The message of an error code; never NULL ("unknown error" for others). */
const char *cs_kern_strerror(int rc);

typedef enum cs_kern_backend { CS_KERN_HOST = 0, CS_KERN_CUDA = 1 } cs_kern_backend;

/* Element types of the fused unpack / pack with scale and cast, and of the
 * allreduce. Conversions round to nearest, ties to even; subnormals are
 * kept; overflow gives +-Inf; NaN stays NaN (quieted, sign and upper payload
 * kept); Inf stays Inf (for a scale > 0). */
typedef enum cs_kern_dtype { CS_KERN_F32 = 0, CS_KERN_F16 = 1, CS_KERN_BF16 = 2 } cs_kern_dtype;

/* Size in bytes of one element of dtype, 0 for an invalid dtype. */
size_t cs_kern_dtype_size(cs_kern_dtype dtype);

/* A context: backend, stream, and the backend's workspace. One per thread
 * (or per stream); not thread-safe. */
typedef struct cs_kern_ctx cs_kern_ctx;

/* Create a context of the given backend. CUDA: uses the current device and
 * the legacy default stream until cs_kern_ctx_set_stream(). Returns
 * CS_KERN_ENOBACKEND / CS_KERN_ENODEV when that backend cannot run here. */
int cs_kern_ctx_new(cs_kern_backend backend, cs_kern_ctx **out);
/* Free a context (waits for its pending work). NULL is accepted. */
void cs_kern_ctx_free(cs_kern_ctx *ctx);
cs_kern_backend cs_kern_ctx_backend(const cs_kern_ctx *ctx);
/* Use stream (a cudaStream_t; NULL = default) for later calls. Work queued
 * later on the new stream is ordered after the work queued on the old one.
 * Ignored by the host backend. */
int cs_kern_ctx_set_stream(cs_kern_ctx *ctx, void *stream);
/* Wait for all work queued through ctx (host backend: returns at once). */
int cs_kern_ctx_sync(cs_kern_ctx *ctx);

/* A table of buffers: bufs[i] points to sizes[i] bytes (user side). The
 * packed layout is their plain concatenation in table order: buffer i starts
 * at the sum of sizes[0..i-1] (in packed elements for the cast variants).
 * nbufs may be 0; zero-size buffers may have a NULL pointer. */
typedef struct cs_kern_table {
    void *const *bufs;
    const size_t *sizes; /* bytes */
    size_t nbufs;        /* <= CS_KERN_MAX_BUFS */
} cs_kern_table;

/* Total bytes of the packed layout of t (plain pack), or an error. */
int cs_kern_table_bytes(const cs_kern_table *t, size_t *total);

/* Pack: copy every buffer of t into packed (sum of sizes bytes), one launch.
 * Any alignment is accepted; buffers must not overlap packed. */
int cs_kern_pack(cs_kern_ctx *ctx, const cs_kern_table *t, void *packed);
/* Unpack: the reverse copy, packed -> every buffer of t. */
int cs_kern_unpack(cs_kern_ctx *ctx, const cs_kern_table *t, const void *packed);

/* Pack with cast and scale: user buffers hold user_type elements
 * (sizes[i] a multiple of its size, else CS_KERN_EELEMSIZE); packed holds
 * packed_type elements, element i of the concatenation being
 * round(packed_type, float(user[i]) * scale). scale must be finite. */
int cs_kern_pack_cast(cs_kern_ctx *ctx, const cs_kern_table *t, cs_kern_dtype user_type, void *packed,
                      cs_kern_dtype packed_type, float scale);
/* Unpack with scale and cast: user[i] = round(user_type, float(packed[i]) * scale).
 * The fusion engine's "divide by world size" is scale = 1.0f / world_size. */
int cs_kern_unpack_cast(cs_kern_ctx *ctx, const cs_kern_table *t, cs_kern_dtype user_type, const void *packed,
                        cs_kern_dtype packed_type, float scale);

/* Range variants used by the pipeline: only bytes [lo, hi) of the packed
 * layout (elements of packed_type for the cast variant) are transferred;
 * lo <= hi <= total, else CS_KERN_ERANGE. packed still points at the start
 * of the whole packed buffer. */
int cs_kern_pack_range(cs_kern_ctx *ctx, const cs_kern_table *t, void *packed, size_t lo, size_t hi);
int cs_kern_unpack_cast_range(cs_kern_ctx *ctx, const cs_kern_table *t, cs_kern_dtype user_type, const void *packed,
                              cs_kern_dtype packed_type, float scale, size_t lo, size_t hi);

/* ---- intra-node allreduce on peer-accessible buffers ---------------- */

/* The ranks of one node. bufs[p] is rank p's input buffer and flags[p] its
 * signal pad (cs_kern_signal_bytes() bytes, zeroed before first use), all
 * accessible from this rank (CUDA IPC or one address space). epoch counts
 * the calls; every rank must make the same calls in the same order. */
typedef struct cs_kern_peers {
    int nranks;      /* 2..CS_KERN_MAX_RANKS (1 allowed: copy) */
    int rank;        /* this rank, 0..nranks-1 */
    size_t capacity; /* bytes of each bufs[p] */
    void *bufs[CS_KERN_MAX_RANKS];
    uint32_t *flags[CS_KERN_MAX_RANKS];
    uint32_t epoch; /* advanced by each allreduce call */
    void *priv;     /* owned by cs_kern_peers_open() */
} cs_kern_peers;

/* Bytes of one rank's signal pad. */
size_t cs_kern_signal_bytes(void);

typedef enum cs_kern_ar_algo {
    CS_KERN_AR_NCCL = 0,    /* fall back to NCCL (or another library) */
    CS_KERN_AR_ONESHOT = 1, /* every rank reads all peers and reduces it all */
    CS_KERN_AR_TWOSHOT = 2  /* reduce-scatter then all-gather through peers */
} cs_kern_ar_algo;

/* Thresholds of the selector (bytes of one rank's message). */
typedef struct cs_kern_ar_tuning {
    size_t oneshot_max; /* one-shot up to this size */
    size_t twoshot_max; /* two-shot up to this size, then NCCL */
} cs_kern_ar_tuning;

/* Which algorithm should beat NCCL for a message of bytes on nranks ranks
 * of one node; tuning NULL = the defaults documented in docs/kernels.md.
 * Returns CS_KERN_AR_NCCL for large messages and for nranks outside
 * 2..CS_KERN_MAX_RANKS. */
cs_kern_ar_algo cs_kern_allreduce_select(size_t bytes, int nranks, const cs_kern_ar_tuning *tuning);

/* Allreduce (sum) of count elements of dtype held by every rank at the
 * start of bufs[p], written to out (local; may be bufs[rank] only for
 * one-shot): out[i] = round(dtype, (sum over p = 0..nranks-1 in rank order of
 * float(bufs[p][i])) * scale). Every rank gets bit-identical results.
 * Two-shot overwrites the inputs with partial results. The call also
 * synchronizes the ranks (start and end barriers through the signal pads),
 * so a rank may refill its buffer once the call has completed on its stream.
 * On the CUDA backend, all ranks' kernels must be able to run at once. */
int cs_kern_allreduce(cs_kern_ctx *ctx, cs_kern_peers *peers, cs_kern_ar_algo algo, void *out, size_t count,
                      cs_kern_dtype dtype, float scale);

/* allgather callback: gather bytes from every rank's sendbuf into recvbuf
 * (nranks * bytes, rank order), as MPI_Allgather / ncclAllGather would.
 * Returns 0 on success. */
typedef int (*cs_kern_allgather_fn)(const void *sendbuf, void *recvbuf, size_t bytes, void *user);

/* Allocate this rank's buffer (capacity bytes) and signal pad, exchange
 * their handles through allgather, and open the peers' ones. CUDA: device
 * memory shared with CUDA IPC (one process per GPU). Host: malloc'd memory
 * whose addresses are exchanged, so all ranks must share one address space
 * (threads, tests). Collective: every rank calls it. */
int cs_kern_peers_open(cs_kern_ctx *ctx, size_t capacity, int rank, int nranks, cs_kern_allgather_fn allgather,
                       void *user, cs_kern_peers *peers);
/* Close the peers' handles and free this rank's memory. Collective: a
 * rank's memory may be freed only when no peer still reads it, so call
 * allgather once more as a barrier (may be NULL if the caller ensures it). */
int cs_kern_peers_close(cs_kern_ctx *ctx, cs_kern_peers *peers, cs_kern_allgather_fn allgather, void *user);

/* ---- chunked pipelining -------------------------------------------- */

/* communicate bytes at chunk (offset bytes into the packed buffer) on stream
 * (cudaStream_t; NULL on the host backend) and return 0; work queued on
 * stream is waited for before the chunk is unpacked. */
typedef int (*cs_kern_comm_fn)(void *chunk, size_t bytes, size_t offset, void *stream, void *user);

typedef struct cs_kern_pipeline {
    const cs_kern_table *table; /* user buffers (user_type elements) */
    cs_kern_dtype user_type;
    void *packed;              /* staging buffer, the whole packed size */
    cs_kern_dtype packed_type; /* pack casts user_type -> packed_type */
    float scale;               /* applied on unpack (1.0f: none) */
    size_t chunk_bytes;        /* packed bytes per chunk, a multiple of the packed element size; 0 = one chunk */
    void *comm_stream;         /* CUDA: the stream comm runs on (must differ from ctx's) */
    cs_kern_comm_fn comm;
    void *user;
} cs_kern_pipeline;

/* For each chunk i: pack chunk i on ctx's stream, then comm(chunk i) on
 * comm_stream after it, then unpack chunk i (scale, cast back) on ctx's
 * stream after the comm; pack of chunk i+1 is queued before the unpack of
 * chunk i so it overlaps comm of chunk i. Events order the two streams; the
 * whole pipeline is complete when ctx's stream is. */
int cs_kern_pipeline_run(cs_kern_ctx *ctx, const cs_kern_pipeline *p);

#ifdef __cplusplus
}
#endif
#endif
