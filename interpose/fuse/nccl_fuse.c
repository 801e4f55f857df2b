/* nccl_fuse.c: the NCCL fusion engine of apply mode (see nccl_fuse.h).
 *
 * Per thread, the held calls of the open group, in the application's order.
 * At the outermost ncclGroupEnd:
 *   1. calls whose buffers conflict with another held call's (a receive
 *      buffer overlapping another call's send or receive buffer) are not
 *      fused, neither side: packing reads every send buffer before any
 *      reduction and unpacking writes every receive buffer after all;
 *   2. the others form batches by (communicator, stream, datatype, op); a
 *      batch that mixes in-place and out-of-place calls leaves its in-place
 *      ones unfused; a batch is cut into chunks of at most COLLSCOPE_FUSE_BUFFER
 *      bytes, in call order; a chunk of one call is no chunk;
 *   3. each chunk gets its place in the fusion buffer of its (communicator,
 *      stream) and is packed there on the stream;
 *   4. in call order: an unfused call is issued as the application made it,
 *      a chunk's fused call where its first member was, each with its span;
 *   5. after the real ncclGroupEnd, each chunk is unpacked on its stream.
 * Fusion buffers are cached per (communicator, stream) and reused: the
 * next group's pack on that stream is ordered after this group's unpack by
 * the stream itself.
 *
 * The on-line guard (fuse_guard.h, docs/fusion.md), per communicator: its
 * grouped calls that could be fused are cut into windows of at least
 * CS_GUARD_WINDOW, each ending at the outermost ncclGroupEnd that reaches
 * that count (the same group on every rank: NCCL collectives come in the
 * same order on every member). A window runs unfused (its calls are issued
 * at once, as without apply mode) or fused with one buffer size. Its
 * figure is the time this thread spent in NCCL and CUDA runtime calls
 * (gpu_wrap.h: enqueues, group ends, the synchronizations that wait for
 * the GPU, and the engine's packing and unpacking) and its wall time. The
 * ranks add their figures with one ncclAllReduce of three int64 on the
 * communicator itself, issued after the window's last ncclGroupEnd on the
 * stream of its last call, copied back to pinned host memory and read
 * CS_GUARD_LAG windows later (an event synchronization: the vote is two
 * windows old by then). */
#include "config.h"
#include "interpose/fuse/nccl_fuse.h"
#include "common/vec.h"
#include "interpose/cuda_wrap.h"
#include "interpose/fuse/fuse_kern.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* One held call. */
typedef struct cs_fz_call {
    cs_gpu_call c; /* its span, written at flush */
    const void *send;
    void *recv;
    size_t count, bytes;
    ncclDataType_t dt;
    ncclRedOp_t op;
    ncclComm_t comm;
    cudaStream_t stream;
    int batch; /* index of the batch's first call, -1 = none */
    int chunk; /* index in the chunks, -1 = issued unfused */
    int conflict;
    size_t buffer; /* the largest fused call it may join (the guard's setting) */
} cs_fz_call;

/* A fusion buffer, per (communicator, stream), with its kernels context. */
typedef struct cs_fz_buf {
    cs_nccl_comm *m;
    cudaStream_t stream;
    void *dev;
    size_t cap;
    cs_kern_ctx *ctx;
    int host;    /* host backend: device memory is host memory */
    int bad;     /* no usable context: never fuse here */
    size_t need; /* bytes this group needs (under cs_fz_lock) */
} cs_fz_buf;

/* One fused call. */
typedef struct cs_fz_chunk {
    cs_fz_buf *buf;
    ncclComm_t comm;
    size_t off, bytes, count;
    int first, n, filled;
    void **sbufs, **rbufs; /* send and receive buffers, call order */
    size_t *sizes;
    uint32_t id;   /* fused-call id once issued */
    int live;      /* packed and to be issued */
    int issued_ok; /* the fused call succeeded: unpack it */
} cs_fz_chunk;

/* The guard of one communicator (see the top of this file). */
#define CS_NG_VOTES (CS_GUARD_LAG + 1)
typedef struct cs_ng {
    int used;            /* set up (at its communicator's first call that could be fused) */
    struct cs_ng *tnext; /* the next guard counted in the open group */
    int counted;         /* on the open group's list */
    cs_nccl_comm *m;     /* NULL once its communicator is destroyed */
    ncclComm_t comm;
    cudaStream_t stream; /* the stream of the window's last call: the vote's */
    cs_guard g;
    int cfg;        /* setting of the calls now made */
    int dead;       /* not measured (no resources, captured, an error): unfused */
    uint32_t win;   /* the window being measured */
    uint32_t calls; /* its calls so far */
    uint64_t busy0; /* the thread's cs_gpu_fuse_busy when it began */
    uint64_t wall0; /* ticks when it began */
    int64_t *dev;   /* device: CS_NG_VOTES x 4 int64, the votes */
    int64_t *host;  /* pinned host: CS_NG_VOTES x (4 in, 4 out) */
    cudaEvent_t ev[CS_NG_VOTES];
    int voted[CS_NG_VOTES]; /* the vote of that slot was issued */
} cs_ng;

/* A guard lives in its communicator's record (cs_nccl_comm.ext, the same
 * allocation: cs_nccl_comm_extra), so every rank that knows the
 * communicator has it; the guards counted in a group are a list through
 * their own links. Neither can fail on one rank only: a communicator
 * measured on some ranks only would vote on those alone. */
static pthread_mutex_t cs_ng_lock = PTHREAD_MUTEX_INITIALIZER;

static __thread struct {
    cs_fz_call *a;
    int n;
    size_t cap;
    struct cs_ng *touched, **ttail; /* guards counted in the open group, in first-call order */
    int ntouched;
    cs_fz_chunk *ch;
    int nch;
    size_t capch;
    ncclResult_t err; /* first error of a call issued at flush */
    int quiet;        /* flush without spans (untraced ncclGroupEnd) */
} cs_fz;

static pthread_mutex_t cs_fz_lock = PTHREAD_MUTEX_INITIALIZER;
static cs_fz_buf **cs_fz_bufs;
static int cs_fz_nbufs;
static size_t cs_fz_capbufs;

static int cs_fz_warn_dtype, cs_fz_warn_op, cs_fz_warn_overlap, cs_fz_warn_inplace, cs_fz_warn_nomem,
    cs_fz_warn_backend, cs_fz_warn_kernel, cs_fz_warn_cudart, cs_fz_warn_hold, cs_fz_warn_device, cs_fz_warn_capture,
    cs_fz_warn_guard;

int cs_nccl_fuse_held(void)
{
    return cs_fz.n > 0 || cs_fz.ntouched > 0;
}

static cs_ng *cs_ng_of(cs_nccl_comm *m, ncclComm_t comm, size_t bytes);

/* Datatypes fused: NCCL's types up to bfloat16 (8-bit floats and any later
 * type are left alone). */
static int cs_fz_dtype_ok(ncclDataType_t dt)
{
    return (int)dt >= (int)ncclInt8 && (int)dt <= (int)ncclBfloat16;
}

int cs_nccl_fuse_allreduce(cs_gpu_call *c, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    if (!c->comm || count == 0 || !sendbuff || !recvbuff)
        return 0;
    if (!cs_fz_dtype_ok(datatype)) {
        cs_core_warn_job(&cs_fz_warn_dtype,
                         "apply mode: ncclAllReduce of datatype %d is not fused (unsupported datatype)", (int)datatype);
        return 0;
    }
    /* A user-defined op may be destroyed before ncclGroupEnd: never held. */
    if ((int)op < 0 || (int)op >= (int)ncclNumOps) {
        cs_core_warn_job(&cs_fz_warn_op, "apply mode: ncclAllReduce with a user-defined reduction op is not fused");
        return 0;
    }
    size_t bytes = count * cs_nccl_dtsize((int)datatype);
    if (bytes / count != cs_nccl_dtsize((int)datatype) || bytes > cs_fuse_threshold)
        return 0;
    size_t buffer = cs_fuse_buffer;
    if (cs_fuse_guard) {
        /* The guard: the call counts in its communicator's window, which
         * runs unfused or with one buffer size. */
        int saved = errno; /* the guard's first call allocates device memory */
        cs_ng *ng = cs_ng_of(c->comm, comm, bytes);
        errno = saved;
        /* not measured: the call is not counted, issued as made */
        if (!ng || ng->dead)
            return 0;
        if (!ng->counted) {
            if (!cs_fz.ntouched)
                cs_fz.ttail = &cs_fz.touched;
            ng->counted = 1;
            ng->tnext = NULL;
            *cs_fz.ttail = ng;
            cs_fz.ttail = &ng->tnext;
            cs_fz.ntouched++;
        }
        ng->calls++;
        ng->stream = stream;
        buffer = ng->g.buf[ng->cfg];
    }
    if (bytes > buffer)
        return 0;
    int saved = errno;
    if (CS_VEC_RESERVE(cs_fz.a, cs_fz.cap, (size_t)cs_fz.n + 1) != 0) {
        cs_core_warn_job(&cs_fz_warn_hold, "apply mode: out of memory holding NCCL calls; calls are not fused");
        errno = saved;
        return 0;
    }
    /* Timed and numbered as an unfused grouped call would be. */
    cs_gputime_pre(c);
    cs_gpu_end(c, (int)ncclSuccess, 0);
    cs_fz_call *h = &cs_fz.a[cs_fz.n++];
    h->c = *c;
    h->send = sendbuff;
    h->recv = recvbuff;
    h->count = count;
    h->bytes = bytes;
    h->dt = datatype;
    h->op = op;
    h->comm = comm;
    h->stream = stream;
    h->batch = h->chunk = -1;
    h->conflict = 0;
    h->buffer = buffer;
    errno = saved;
    cs_core_busy = 0;
    return 1;
}

/* ---- the real functions the engine calls ---- */

typedef ncclResult_t (*cs_fz_allreduce_t)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                          cudaStream_t);
static struct {
    cudaError_t (*malloc_)(void **, size_t);
    cudaError_t (*free_)(void *);
    cudaError_t (*sync)(cudaStream_t);
    cudaError_t (*attrs)(struct cudaPointerAttributes *, const void *);
    cudaError_t (*get_error)(void);
    cudaError_t (*peek_error)(void);
    cudaError_t (*get_device)(int *);
    cudaError_t (*capturing)(cudaStream_t, enum cudaStreamCaptureStatus *);
    ncclResult_t (*async_error)(ncclComm_t, ncclResult_t *);
    ncclResult_t (*comm_device)(ncclComm_t, int *);
    int state; /* 0 untried, 1 found, -1 missing */
    /* the guard's votes */
    cudaError_t (*malloc_host)(void **, size_t);
    cudaError_t (*memcpy_async)(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t);
    cudaError_t (*event_create)(cudaEvent_t *, unsigned);
    cudaError_t (*event_record)(cudaEvent_t, cudaStream_t);
    cudaError_t (*event_sync)(cudaEvent_t);
    int vote_state; /* 0 untried, 1 found, -1 missing */
} R;

static void *cs_fz_cudart_sym(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        void *lib = cs_cudart_handle();
        f = lib ? dlsym(lib, name) : NULL;
    }
    return f;
}

/* Under cs_fz_lock. */
static int cs_fz_real_ready(void)
{
    if (R.state == 0) {
        *(void **)&R.malloc_ = cs_cuda_real(CS_OP_cudaMalloc);
        *(void **)&R.free_ = cs_cuda_real(CS_OP_cudaFree);
        *(void **)&R.sync = cs_cuda_real(CS_OP_cudaStreamSynchronize);
        *(void **)&R.attrs = cs_fz_cudart_sym("cudaPointerGetAttributes");
        *(void **)&R.get_error = cs_fz_cudart_sym("cudaGetLastError");
        *(void **)&R.peek_error = cs_fz_cudart_sym("cudaPeekAtLastError");
        *(void **)&R.get_device = cs_fz_cudart_sym("cudaGetDevice");
        *(void **)&R.capturing = cs_fz_cudart_sym("cudaStreamIsCapturing");
        *(void **)&R.async_error = dlsym(RTLD_NEXT, "ncclCommGetAsyncError");
        *(void **)&R.comm_device = dlsym(RTLD_NEXT, "ncclCommCuDevice");
        void *lib = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
        if (lib && !R.async_error)
            *(void **)&R.async_error = dlsym(lib, "ncclCommGetAsyncError");
        if (lib && !R.comm_device)
            *(void **)&R.comm_device = dlsym(lib, "ncclCommCuDevice");
        R.state =
            R.malloc_ && R.free_ && R.sync && R.attrs && R.get_error && R.peek_error && R.get_device && R.comm_device
                ? 1
                : -1;
        if (R.state < 0)
            cs_core_warn_job(&cs_fz_warn_cudart,
                             "apply mode: no shared CUDA runtime in the process; NCCL calls are not fused");
    }
    return R.state > 0;
}

/* The guard's functions, under cs_fz_lock: 1 when all are there. */
static int cs_fz_vote_ready(void)
{
    if (R.vote_state == 0) {
        *(void **)&R.malloc_host = cs_fz_cudart_sym("cudaMallocHost");
        *(void **)&R.memcpy_async = cs_fz_cudart_sym("cudaMemcpyAsync");
        *(void **)&R.event_create = cs_fz_cudart_sym("cudaEventCreateWithFlags");
        *(void **)&R.event_record = cs_fz_cudart_sym("cudaEventRecord");
        *(void **)&R.event_sync = cs_fz_cudart_sym("cudaEventSynchronize");
        R.vote_state =
            cs_fz_real_ready() && R.malloc_host && R.memcpy_async && R.event_create && R.event_record && R.event_sync
                ? 1
                : -1;
    }
    return R.vote_state > 0;
}

/* After a failing CUDA call of the engine: leave the application's last
 * error as it was (clear ours, unless one of its own was pending). */
static void cs_fz_clear(cudaError_t before)
{
    if (before == cudaSuccess)
        R.get_error();
}

/* ---- step 1: conflicting buffers ---- */

typedef struct cs_fz_iv {
    uintptr_t lo, hi;
    int call;
    int recv;
} cs_fz_iv;

static int cs_fz_iv_cmp(const void *a, const void *b)
{
    const cs_fz_iv *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Mark both calls of every pair where one's receive buffer overlaps the
 * other's send or receive buffer. Returns -1 when out of memory. */
static int cs_fz_conflicts(cs_fz_call *a, int n)
{
    cs_fz_iv *iv = malloc((size_t)n * 2 * sizeof *iv);
    int *act = malloc((size_t)n * 2 * sizeof *act);
    if (!iv || !act) {
        free(iv);
        free(act);
        return -1;
    }
    int niv = 0;
    for (int i = 0; i < n; i++) {
        uintptr_t s = (uintptr_t)a[i].send, r = (uintptr_t)a[i].recv;
        iv[niv++] = (cs_fz_iv){ r, r + a[i].bytes, i, 1 };
        if (s != r)
            iv[niv++] = (cs_fz_iv){ s, s + a[i].bytes, i, 0 };
    }
    qsort(iv, (size_t)niv, sizeof *iv, cs_fz_iv_cmp);
    int nact = 0;
    for (int k = 0; k < niv; k++) {
        int keep = 0;
        for (int j = 0; j < nact; j++)
            if (iv[act[j]].hi > iv[k].lo)
                act[keep++] = act[j];
        nact = keep;
        for (int j = 0; j < nact; j++) {
            const cs_fz_iv *o = &iv[act[j]];
            if (o->call != iv[k].call && (o->recv || iv[k].recv))
                a[o->call].conflict = a[iv[k].call].conflict = 1;
        }
        act[nact++] = k;
    }
    free(iv);
    free(act);
    return 0;
}

/* ---- step 3: fusion buffers ---- */

static cs_fz_buf *cs_fz_buf_get(cs_nccl_comm *m, cudaStream_t stream)
{
    for (int i = 0; i < cs_fz_nbufs; i++)
        if (cs_fz_bufs[i]->m == m && cs_fz_bufs[i]->stream == stream)
            return cs_fz_bufs[i];
    if (CS_VEC_RESERVE(cs_fz_bufs, cs_fz_capbufs, (size_t)cs_fz_nbufs + 1) != 0)
        return NULL;
    cs_fz_buf *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->m = m;
    b->stream = stream;
    cs_fz_bufs[cs_fz_nbufs++] = b;
    return b;
}

/* Give b room for b->need bytes and a kernels context; 0 on success. */
static int cs_fz_buf_ready(cs_fz_buf *b, ncclComm_t comm, const cs_fuse_kern *k)
{
    if (b->bad)
        return -1;
    cudaError_t before = R.peek_error();
    /* The buffer lives on the current device: it must be the communicator's
     * (a process may drive several GPUs). */
    int cur = -1, dev = -2;
    if (R.get_device(&cur) != cudaSuccess || R.comm_device(comm, &dev) != ncclSuccess || cur != dev) {
        cs_fz_clear(before);
        cs_core_warn_job(&cs_fz_warn_device, "apply mode: a communicator of another device than the current one; "
                                             "its calls are not fused");
        return -1;
    }
    /* Allocating would break a stream capture (CUDA graphs). */
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    if (R.capturing && R.capturing(b->stream, &cap) != cudaSuccess) {
        cs_fz_clear(before);
        cap = cudaStreamCaptureStatusInvalidated;
    }
    if (cap != cudaStreamCaptureStatusNone) {
        cs_core_warn_job(&cs_fz_warn_capture, "apply mode: NCCL calls on a stream being captured are not fused");
        return -1;
    }
    if (b->cap < b->need) {
        void *p = NULL;
        cudaError_t e = cs_fuse_test_nomem ? cudaErrorMemoryAllocation : R.malloc_(&p, b->need);
        if (e != cudaSuccess) {
            if (!cs_fuse_test_nomem)
                cs_fz_clear(before);
            cs_core_warn_job(&cs_fz_warn_nomem,
                             "apply mode: no device memory for a %zu-byte fusion buffer; NCCL calls are not fused",
                             b->need);
            return -1;
        }
        if (b->dev)
            R.free_(b->dev); /* cudaFree waits for the work that uses it */
        b->dev = p;
        b->cap = b->need;
    }
    if (b->ctx)
        return 0;
    /* The host backend only where device memory is host memory (the CPU
     * stand-ins of tests/standins/); on a GPU only the CUDA backend. */
    struct cudaPointerAttributes at;
    memset(&at, 0, sizeof at);
    if (R.attrs(&at, b->dev) != cudaSuccess) {
        cs_fz_clear(before);
        at.type = cudaMemoryTypeDevice;
    }
    b->host = at.type == cudaMemoryTypeUnregistered || at.type == cudaMemoryTypeHost;
    int rc = k->ctx_new(b->host ? CS_KERN_HOST : CS_KERN_CUDA, &b->ctx);
    if (rc == 0 && !b->host)
        rc = k->ctx_set_stream(b->ctx, (void *)b->stream);
    if (rc != 0) {
        cs_fz_clear(before);
        cs_core_warn_job(&cs_fz_warn_backend,
                         "apply mode: the kernels library cannot run on this device (%s); NCCL calls are not fused",
                         k->strerror(rc));
        if (b->ctx)
            k->ctx_free(b->ctx);
        b->ctx = NULL;
        b->bad = 1;
        return -1;
    }
    return 0;
}

/* ---- steps 2 and 3: batches, chunks, packing ---- */

static int cs_fz_same_batch(const cs_fz_call *x, const cs_fz_call *y)
{
    return x->c.comm == y->c.comm && x->stream == y->stream && x->dt == y->dt && x->op == y->op;
}

static cs_fz_chunk *cs_fz_chunk_new(void)
{
    if (CS_VEC_RESERVE(cs_fz.ch, cs_fz.capch, (size_t)cs_fz.nch + 1) != 0)
        return NULL;
    cs_fz_chunk *ch = &cs_fz.ch[cs_fz.nch++];
    memset(ch, 0, sizeof *ch);
    return ch;
}

static void cs_fz_plan(cs_fz_call *a, int n)
{
    if (n <= 0 || cs_fz_conflicts(a, n) != 0)
        return; /* nothing fused */
    for (int i = 0; i < n; i++)
        if (a[i].conflict)
            cs_core_warn_job(&cs_fz_warn_overlap, "apply mode: ncclAllReduce buffers overlap another call's in the "
                                                  "same group; those calls are not fused");
    /* Batches: a[i].batch = index of the batch's first call. */
    for (int i = 0; i < n; i++) {
        if (a[i].conflict)
            continue;
        a[i].batch = i;
        for (int j = 0; j < i; j++)
            if (a[j].batch == j && cs_fz_same_batch(&a[i], &a[j])) {
                a[i].batch = j;
                break;
            }
    }
    /* In-place calls fuse only where the batch has no out-of-place call. */
    for (int h = 0; h < n; h++) {
        if (a[h].batch != h)
            continue;
        int inplace = 0, other = 0;
        for (int i = h; i < n; i++)
            if (a[i].batch == h)
                a[i].send == a[i].recv ? inplace++ : other++;
        if (inplace && other) {
            cs_core_warn_job(&cs_fz_warn_inplace, "apply mode: in-place ncclAllReduce calls grouped with out-of-place "
                                                  "ones are not fused");
            for (int i = h; i < n; i++)
                if (a[i].batch == h && a[i].send == a[i].recv)
                    a[i].batch = -1;
        }
    }
    /* Chunks, in call order, each at most the calls' buffer (one batch, one
     * communicator: one guard setting). */
    int *cur = malloc((size_t)n * sizeof *cur);
    if (!cur)
        return;
    for (int i = 0; i < n; i++)
        cur[i] = -1;
    for (int i = 0; i < n; i++) {
        int h = a[i].batch;
        if (h < 0)
            continue;
        cs_fz_chunk *ch = cur[h] >= 0 ? &cs_fz.ch[cur[h]] : NULL;
        if (!ch || ch->bytes + a[i].bytes > a[i].buffer || ch->n == CS_KERN_MAX_BUFS) {
            if (!(ch = cs_fz_chunk_new()))
                break;
            cur[h] = (int)(ch - cs_fz.ch);
            ch->first = i;
            ch->comm = a[i].comm;
        }
        ch->n++;
        ch->bytes += a[i].bytes;
        ch->count += a[i].count;
        a[i].chunk = cur[h];
    }
    free(cur);
    for (int i = 0; i < n; i++)
        if (a[i].chunk >= 0 && cs_fz.ch[a[i].chunk].n < 2)
            a[i].chunk = -1;
    int any = 0;
    for (int k = 0; k < cs_fz.nch; k++)
        any |= cs_fz.ch[k].live = cs_fz.ch[k].n >= 2;
    if (!any)
        return;

    /* Resources: the kernels, the runtime, a buffer per (comm, stream). */
    const cs_fuse_kern *kern = cs_fuse_kern_get();
    pthread_mutex_lock(&cs_fz_lock);
    if (!kern || !cs_fz_real_ready()) {
        for (int k = 0; k < cs_fz.nch; k++)
            cs_fz.ch[k].live = 0;
    } else {
        for (int k = 0; k < cs_fz.nch; k++) {
            cs_fz_chunk *ch = &cs_fz.ch[k];
            if (!ch->live)
                continue;
            const cs_fz_call *f = &a[ch->first];
            ch->buf = cs_fz_buf_get(f->c.comm, f->stream);
            if (!ch->buf) {
                ch->live = 0;
                continue;
            }
            ch->buf->need = 0;
        }
        for (int k = 0; k < cs_fz.nch; k++) {
            cs_fz_chunk *ch = &cs_fz.ch[k];
            if (!ch->live)
                continue;
            ch->off = ch->buf->need;
            ch->buf->need += (ch->bytes + 255) & ~(size_t)255;
        }
        for (int k = 0; k < cs_fz.nch; k++) {
            cs_fz_chunk *ch = &cs_fz.ch[k];
            if (ch->live && cs_fz_buf_ready(ch->buf, ch->comm, kern) != 0) {
                cs_fz_buf *b = ch->buf;
                for (int j = k; j < cs_fz.nch; j++)
                    if (cs_fz.ch[j].buf == b)
                        cs_fz.ch[j].live = 0;
            }
        }
    }
    pthread_mutex_unlock(&cs_fz_lock);
    /* The tables, in call order. */
    for (int k = 0; k < cs_fz.nch; k++) {
        cs_fz_chunk *ch = &cs_fz.ch[k];
        if (!ch->live)
            continue;
        size_t n2 = (size_t)ch->n;
        ch->sbufs = cs_fuse_alloc(n2 * (2 * sizeof(void *) + sizeof(size_t)));
        if (!ch->sbufs) {
            cs_core_warn_job(&cs_fz_warn_nomem,
                             "apply mode: out of memory for a fusion table; NCCL calls are not fused");
            ch->live = 0;
            continue;
        }
        ch->rbufs = ch->sbufs + n2;
        ch->sizes = (size_t *)(ch->rbufs + n2);
    }
    for (int i = 0; i < n; i++) {
        if (a[i].chunk < 0)
            continue;
        cs_fz_chunk *ch = &cs_fz.ch[a[i].chunk];
        if (!ch->live)
            continue;
        ch->sbufs[ch->filled] = (void *)a[i].send;
        ch->rbufs[ch->filled] = a[i].recv;
        ch->sizes[ch->filled++] = a[i].bytes;
    }
    /* Pack on each stream; the host backend waits for the stream first. */
    for (int k = 0; k < cs_fz.nch; k++) {
        cs_fz_chunk *ch = &cs_fz.ch[k];
        if (!ch->live)
            continue;
        cudaError_t before = R.peek_error();
        if (ch->buf->host && R.sync(ch->buf->stream) != cudaSuccess) {
            cs_fz_clear(before);
            ch->live = 0;
            continue;
        }
        cs_kern_table t = { ch->sbufs, ch->sizes, (size_t)ch->n };
        int rc = kern->pack(ch->buf->ctx, &t, (char *)ch->buf->dev + ch->off);
        if (rc != 0) {
            cs_fz_clear(before);
            cs_core_warn_job(&cs_fz_warn_kernel,
                             "apply mode: packing a fusion buffer failed (%s); NCCL calls are not fused",
                             kern->strerror(rc));
            ch->live = 0;
        }
    }
    for (int i = 0; i < n; i++)
        if (a[i].chunk >= 0 && !cs_fz.ch[a[i].chunk].live)
            a[i].chunk = -1;
}

/* ---- step 4: issuing ---- */

static void cs_fz_emit(cs_gpu_call *c)
{
    if (cs_fz.quiet)
        return;
    cs_gpu_emit(c);
    cs_core_busy = 1; /* still inside ncclGroupEnd */
}

static void cs_fz_note_error(ncclResult_t rc)
{
    if (rc != ncclSuccess && rc != ncclInProgress && cs_fz.err == ncclSuccess)
        cs_fz.err = rc;
}

/* The engine's own call: one real ncclAllReduce over chunk ch, with its span. */
static void cs_fz_issue_fused(cs_fz_allreduce_t real, const cs_fz_call *f, cs_fz_chunk *ch)
{
    cs_nccl_comm *m = f->c.comm;
    ch->id = __atomic_add_fetch(&m->fused, 1, __ATOMIC_RELAXED);
    cs_gpu_call fc;
    memset(&fc, 0, sizeof fc);
    fc.rec.op = CS_OP_ncclAllReduce;
    fc.rec.comm = (uint16_t)m->local;
    fc.rec.tag = (int32_t)ch->id;
    fc.flags = CS_F_FUSED | CS_F_HAS_COMM;
    fc.comm = m;
    fc.ev = -1;
    fc.has_x = 1;
    fc.x.stream = (uint64_t)(uintptr_t)f->stream;
    fc.x.grp = cs_gpu_t.grp;
    fc.x.redop = (int32_t)f->op;
    fc.x.dir = -1;
    fc.x.device = -1;
    cs_nccl_set_count(&fc, ch->count, f->dt, 1);
    void *buf = (char *)ch->buf->dev + ch->off;
    fc.rec.t0 = cs_clock_ticks();
    if (!cs_fz.quiet)
        cs_gputime_pre(&fc); /* noted with its own span's id (ncclprof.h) */
    else if (cs_ncclprof_on)
        cs_ncclprof_own((uint32_t)(ch->count > 0xffffffffu ? 0xffffffffu : ch->count));
    ncclResult_t rc = real(buf, buf, ch->count, f->dt, f->op, f->comm, f->stream);
    if (!cs_fz.quiet)
        cs_gputime_post(&fc, rc == ncclSuccess);
    cs_gpu_end(&fc, (int)rc, rc != ncclSuccess);
    ch->issued_ok = rc == ncclSuccess || rc == ncclInProgress;
    cs_fz_note_error(rc);
    cs_fz_emit(&fc);
}

void cs_nccl_fuse_flush(void)
{
    int n = cs_fz.n;
    if (n == 0)
        return;
    uint64_t t0 = cs_clock_ticks();
    int saved = errno;
    cs_fz_call *a = cs_fz.a;
    cs_fz.err = ncclSuccess;
    cs_fz.nch = 0;
    cs_fz_plan(a, n);
    cs_fz_allreduce_t real = (cs_fz_allreduce_t)cs_nccl_real(CS_OP_ncclAllReduce);
    for (int i = 0; i < n; i++) {
        cs_fz_call *h = &a[i];
        if (h->chunk < 0) {
            ncclResult_t rc =
                real ? real(h->send, h->recv, h->count, h->dt, h->op, h->comm, h->stream) : ncclSystemError;
            h->c.rec.rc = (int32_t)rc;
            if (rc != ncclSuccess && rc != ncclInProgress)
                h->c.flags |= CS_F_ERROR;
            cs_fz_note_error(rc);
        } else {
            cs_fz_chunk *ch = &cs_fz.ch[h->chunk];
            if (CS_UNLIKELY(cs_ncclprof_on))
                cs_ncclprof_forget(h->c.x.corr); /* issued in the fused call, never alone */
            if (ch->first == i)
                cs_fz_issue_fused(real, h, ch);
            h->c.flags |= CS_F_FUSE_MEMBER;
            h->c.rec.tag = (int32_t)ch->id;
        }
        cs_fz_emit(&h->c);
    }
    cs_fz.n = 0;
    if (cs_gpu_fuse_timing) /* packing and the fused calls: time in NCCL calls */
        cs_gpu_fuse_busy += cs_clock_ticks() - t0;
    errno = saved;
}

/* ---- step 5: unpacking ---- */

static ncclResult_t cs_fz_unpack(ncclResult_t rc)
{
    ncclResult_t err = cs_fz.err;
    cs_fz.err = ncclSuccess;
    if (cs_fz.nch == 0)
        return rc != ncclSuccess ? rc : err;
    int saved = errno;
    const cs_fuse_kern *kern = cs_fuse_kern_get();
    int ok = rc == ncclSuccess || rc == ncclInProgress;
    for (int k = 0; k < cs_fz.nch; k++) {
        cs_fz_chunk *ch = &cs_fz.ch[k];
        if (!ch->live || !ch->issued_ok || !ok)
            continue;
        /* A nonblocking communicator may still be enqueueing the group:
         * the unpack must come after the fused call on the stream. */
        if (rc == ncclInProgress && R.async_error) {
            ncclResult_t st;
            while (R.async_error(ch->comm, &st) == ncclSuccess && st == ncclInProgress)
                sched_yield();
        }
        cudaError_t before = R.peek_error();
        if (ch->buf->host && R.sync(ch->buf->stream) != cudaSuccess) {
            cs_fz_clear(before);
            continue;
        }
        cs_kern_table t = { ch->rbufs, ch->sizes, (size_t)ch->n };
        int krc = kern->unpack(ch->buf->ctx, &t, (char *)ch->buf->dev + ch->off);
        if (krc != 0)
            cs_fz_clear(before);
        if (krc != 0)
            cs_core_warn_job(&cs_fz_warn_kernel,
                             "apply mode: unpacking a fusion buffer failed (%s): results of fused calls are missing",
                             kern->strerror(krc));
    }
    for (int k = 0; k < cs_fz.nch; k++)
        free(cs_fz.ch[k].sbufs);
    cs_fz.nch = 0;
    errno = saved;
    return rc != ncclSuccess ? rc : err;
}

/* ---- the guard (see the top of this file) ---- */

/* The guard of communicator m, set up at its first call that could be
 * fused (the same call on every rank); dead (its calls unfused) when the
 * vote's device resources cannot be had. NULL only for a record made
 * before apply mode started (none is: the module starts before the first
 * span), the same on every rank. */
static cs_ng *cs_ng_of(cs_nccl_comm *m, ncclComm_t comm, size_t bytes)
{
    cs_ng *ng = m->ext;
    if (!ng) {
        cs_core_warn_job(&cs_fz_warn_guard, "apply mode: an NCCL communicator known before apply mode started is "
                                            "not measured; its calls are not fused");
        return NULL;
    }
    pthread_mutex_lock(&cs_ng_lock);
    int first = !ng->used;
    ng->used = 1;
    pthread_mutex_unlock(&cs_ng_lock);
    if (!first)
        return ng;
    ng->m = m;
    ng->comm = comm;
    size_t cap = cs_fuse_buffer > (64u << 20) ? cs_fuse_buffer : (64u << 20);
    cs_guard_init(&ng->g, cs_fuse_buffer, bytes, cap);
    ng->cfg = cs_guard_next(&ng->g);
    pthread_mutex_lock(&cs_fz_lock);
    int ok = cs_fz_vote_ready();
    pthread_mutex_unlock(&cs_fz_lock);
    cudaError_t before = ok ? R.peek_error() : cudaSuccess;
    int cur = -1, dev = -2;
    void *d = NULL, *h = NULL;
    ok = ok && R.get_device(&cur) == cudaSuccess && R.comm_device(comm, &dev) == ncclSuccess && cur == dev &&
         !cs_fuse_test_nomem && R.malloc_(&d, CS_NG_VOTES * 4 * sizeof(int64_t)) == cudaSuccess &&
         R.malloc_host(&h, CS_NG_VOTES * 8 * sizeof(int64_t)) == cudaSuccess;
    ng->dev = d;
    ng->host = h;
    for (int k = 0; ok && k < CS_NG_VOTES; k++)
        ok = R.event_create(&ng->ev[k], cudaEventDisableTiming) == cudaSuccess;
    if (!ok) {
        if (R.vote_state > 0)
            cs_fz_clear(before);
        ng->dead = 1;
        cs_core_warn_job(&cs_fz_warn_guard, "apply mode: no device memory or events to measure fusion on an NCCL "
                                            "communicator (or another device than the current one); its calls are "
                                            "not fused");
        return ng;
    }
    cs_fuse_guard_clock();
    cs_gpu_fuse_timing = 1;
    ng->busy0 = cs_gpu_fuse_busy;
    ng->wall0 = cs_clock_ticks();
    return ng;
}

/* A nonblocking communicator may still be enqueueing: wait until it is
 * done before the next operation on it. */
static void cs_fz_wait_enqueued(ncclComm_t comm)
{
    ncclResult_t st;
    while (R.async_error && R.async_error(comm, &st) == ncclSuccess && st == ncclInProgress)
        sched_yield();
}

/* The window of ng ended at the ncclGroupEnd that returned rc: the calls
 * made from now on run the next window's setting; this rank's figure goes
 * to every rank (the vote), and the figure of the window CS_GUARD_LAG back
 * comes in. */
static void cs_ng_close(cs_ng *ng, ncclResult_t rc, cs_fz_allreduce_t real)
{
    cudaError_t before = R.peek_error();
    enum cudaStreamCaptureStatus capst = cudaStreamCaptureStatusNone;
    if (R.capturing && R.capturing(ng->stream, &capst) != cudaSuccess)
        capst = cudaStreamCaptureStatusInvalidated;
    if (capst != cudaStreamCaptureStatusNone) {
        /* no vote inside a CUDA graph: the program captures on every rank */
        cs_fz_clear(before);
        cs_core_warn_job(&cs_fz_warn_capture, "apply mode: NCCL calls on a stream being captured are not fused");
        ng->dead = 1;
        return;
    }
    if (rc == ncclInProgress)
        cs_fz_wait_enqueued(ng->comm);
    uint32_t w = ng->win;
    int slot = (int)(w % CS_NG_VOTES);
    int64_t *in = ng->host + 8 * slot, *out = in + 4, *dv = ng->dev + 4 * slot;
    uint64_t now = cs_clock_ticks();
    in[0] = (int64_t)(cs_gpu_fuse_busy - ng->busy0);
    in[1] = (int64_t)ng->calls;
    in[2] = (int64_t)(now - ng->wall0);
    in[3] = 0;
    ng->calls = 0;
    ng->cfg = cs_guard_next(&ng->g);
    size_t nb = 4 * sizeof(int64_t);
    ncclResult_t vr = ncclSystemError;
    int ok = R.memcpy_async(dv, in, nb, cudaMemcpyHostToDevice, ng->stream) == cudaSuccess && real;
    if (ok) {
        cs_ncclprof_alone++; /* the vote is no program call's (ncclprof.h) */
        vr = real(dv, dv, 3, ncclInt64, ncclSum, ng->comm, ng->stream);
        cs_ncclprof_alone--;
        if (vr == ncclInProgress)
            cs_fz_wait_enqueued(ng->comm);
        ok = vr == ncclSuccess || vr == ncclInProgress;
    }
    ok = ok && R.memcpy_async(out, dv, nb, cudaMemcpyDeviceToHost, ng->stream) == cudaSuccess &&
         R.event_record(ng->ev[slot], ng->stream) == cudaSuccess;
    if (!ok)
        cs_fz_clear(before);
    ng->voted[slot] = ok;
    if (w >= CS_GUARD_LAG) {
        int old = (int)((w - CS_GUARD_LAG) % CS_NG_VOTES);
        static const int64_t none[3] = { -1, 0, 0 }; /* a vote that failed: no figure */
        const int64_t *sum = none;
        if (ng->voted[old]) {
            before = R.peek_error();
            if (R.event_sync(ng->ev[old]) == cudaSuccess)
                sum = ng->host + 8 * old + 4;
            else
                cs_fz_clear(before);
        }
        ng->voted[old] = 0;
        cs_fuse_guard_consume(&ng->g, ng->m->local, 1, w - CS_GUARD_LAG, sum);
    }
    ng->win = w + 1;
    ng->busy0 = cs_gpu_fuse_busy;
    ng->wall0 = now;
}

/* After the outermost ncclGroupEnd (rc; finish began at t0): the windows
 * of the communicators this group counted that are long enough end. */
static void cs_ng_group_end(ncclResult_t rc, uint64_t t0)
{
    if (cs_gpu_fuse_timing) /* unpacking: time in NCCL calls */
        cs_gpu_fuse_busy += cs_clock_ticks() - t0;
    int ok = rc == ncclSuccess || rc == ncclInProgress;
    cs_fz_allreduce_t real = (cs_fz_allreduce_t)cs_nccl_real(CS_OP_ncclAllReduce);
    cs_ng *next = cs_fz.ntouched ? cs_fz.touched : NULL;
    for (cs_ng *ng = next; ng; ng = next) {
        next = ng->tnext;
        ng->counted = 0;
        ng->tnext = NULL;
        if (ng->dead || !ng->m || ng->calls < CS_GUARD_WINDOW)
            continue;
        if (!ok) {
            ng->dead = 1; /* a failed group: no more votes on this communicator */
            continue;
        }
        cs_ng_close(ng, rc, real);
    }
    cs_fz.ntouched = 0;
    cs_fz.touched = NULL;
}

ncclResult_t cs_nccl_fuse_finish(ncclResult_t rc)
{
    uint64_t t0 = cs_clock_ticks();
    ncclResult_t out = cs_fz_unpack(rc);
    if (cs_fz.ntouched) {
        int saved = errno;
        cs_ng_group_end(rc, t0);
        errno = saved;
    }
    return out;
}

void cs_nccl_fuse_comm_freed(cs_nccl_comm *m)
{
    int saved = errno;
    /* its guard stops: no vote on a destroyed communicator (the votes'
     * few bytes are left) */
    pthread_mutex_lock(&cs_ng_lock);
    cs_ng *ng = m->ext;
    if (ng && ng->used) {
        ng->dead = 1;
        ng->m = NULL;
    }
    pthread_mutex_unlock(&cs_ng_lock);
    pthread_mutex_lock(&cs_fz_lock);
    for (int i = 0; i < cs_fz_nbufs;) {
        cs_fz_buf *b = cs_fz_bufs[i];
        if (b->m != m) {
            i++;
            continue;
        }
        cudaError_t before = R.state > 0 ? R.peek_error() : cudaSuccess;
        /* A CUDA context would synchronize its stream, which the program
         * may have destroyed already: it is left (a few small buffers). */
        if (b->ctx && b->host)
            cs_fuse_kern_get()->ctx_free(b->ctx);
        if (b->dev && R.free_(b->dev) != cudaSuccess)
            cs_fz_clear(before);
        free(b);
        cs_fz_bufs[i] = cs_fz_bufs[--cs_fz_nbufs];
    }
    pthread_mutex_unlock(&cs_fz_lock);
    errno = saved;
}

ncclResult_t cs_nccl_fuse_group_end_untraced(ncclResult_t (*real)(void))
{
    if (cs_core_busy || cs_gpu_t.depth != 1)
        return real();
    cs_core_busy = 1;
    cs_fz.quiet = 1;
    cs_nccl_fuse_flush();
    ncclResult_t rc = real();
    rc = cs_nccl_fuse_finish(rc);
    cs_fz.quiet = 0;
    cs_gpu_t.depth = 0;
    cs_gpu_t.grp = 0;
    cs_core_busy = 0;
    return rc;
}

static const cs_nccl_fuse_ops cs_nccl_fuse_engine = {
    .allreduce = cs_nccl_fuse_allreduce,
    .held = cs_nccl_fuse_held,
    .flush = cs_nccl_fuse_flush,
    .finish = cs_nccl_fuse_finish,
    .comm_freed = cs_nccl_fuse_comm_freed,
    .group_end_untraced = cs_nccl_fuse_group_end_untraced,
};

static void cs_nccl_fuse_start(const cs_settings *s, cs_log_header *h)
{
    (void)h;
    /* every communicator's record carries room for its guard */
    cs_nccl_comm_extra = s->fuse && cs_fuse_guard ? sizeof(cs_ng) : 0;
    cs_nccl_fuse = s->fuse ? &cs_nccl_fuse_engine : NULL;
}

const cs_module cs_nccl_fuse_module = {
    .name = "nccl_fuse",
    .start = cs_nccl_fuse_start,
};
