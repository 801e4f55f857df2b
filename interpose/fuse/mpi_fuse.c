/* mpi_fuse.c: apply mode for MPI: nonblocking allreduces fused into one
 * (see mpi_fuse.h for the protocol, docs/guide.md "Apply mode" for users).
 *
 * State is process-wide and used by one thread at a time: the engine turns
 * itself off under MPI_THREAD_MULTIPLE. Everything here runs inside a
 * wrapper with cs_core_busy set or at a wrapper's top, and calls the library's
 * own functions, never our exported ones. */
#include "config.h"
#include "interpose/fuse/mpi_fuse.h"
#include "interpose/fuse/fuse_guard.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#define CS_FUSE_MAX_MEMBERS 1024 /* per fused call */
#define CS_FUSE_MAX_BATCHES 8    /* communicators with a pending batch */
#define CS_FUSE_SLOTS 8192u      /* member requests in flight (hash) */

typedef struct cs_fmember {
    const void *send; /* NULL for in-place */
    void *recv;
    size_t bytes;
    int count;
    MPI_Request greq; /* what the caller holds */
} cs_fmember;

/* A fused call started and not yet completed. */
typedef struct cs_flight {
    struct cs_flight *next;
    cs_mpi_comm *comm;
    int n, nreal; /* members; real requests (1, or n unfused) */
    int inplace;
    size_t bytes;
    void *sbuf, *rbuf;  /* packed send and result (rbuf only, in place) */
    uint32_t trace_req; /* the fused span's request id */
    MPI_Request *real;  /* [nreal] */
    cs_fmember *m;      /* [n] */
} cs_flight;

/* Members not started yet, on one communicator. */
typedef struct cs_batch {
    MPI_Comm comm;
    cs_mpi_comm *cm;
    MPI_Op op;
    MPI_Datatype dt;
    uint16_t dtype_id;
    int inplace, n;
    size_t esize, bytes;
    uint32_t id;      /* the fused call's id (tag), per communicator */
    uintptr_t lo, hi; /* every member buffer lies in [lo, hi) */
    cs_fmember m[CS_FUSE_MAX_MEMBERS];
} cs_batch;

static cs_batch *cs_batches[CS_FUSE_MAX_BATCHES]; /* in creation order */
static int cs_nbatch;
static cs_flight *cs_flights;
/* member request -> its flight, for completion calls */
static struct {
    uint64_t key;
    cs_flight *f;
} cs_fslot[CS_FUSE_SLOTS];

/* The on-line guard of one communicator (fuse_guard.h): the window being
 * run, and the votes that carry each window's figure to every rank. It
 * lives in the communicator's own record (cs_mpi_comm.ext, the same
 * allocation: cs_mpi_comm_extra), so every rank that knows the
 * communicator has it, however many communicators it has; the guards in
 * use form a list through their own links, which never allocates. */
#define CS_GUARD_VOTES (CS_GUARD_LAG + 1)
typedef struct cs_gcomm {
    struct cs_gcomm *next; /* the list of guards in use, in first-use order */
    int used;              /* set up (at its communicator's first fusable call) */
    cs_mpi_comm *cm;
    MPI_Comm comm;
    cs_guard g;
    int cfg;               /* setting of the calls now made */
    int armed;             /* enough calls: the window ends at the next wait point */
    int closing;           /* the window ended at a call that has not returned yet */
    uint32_t win;          /* the window being measured */
    uint32_t calls;        /* fusable calls made in it so far */
    uint32_t calls_closed; /* ... in all, once it ended */
    uint64_t busy0;        /* cs_mpi_fuse_busy when it began */
    uint64_t wall0;        /* ticks when it began */
    int dead;              /* its communicator was freed, or is an intercommunicator: not measured */
    MPI_Request vote[CS_GUARD_VOTES];
    int64_t vin[CS_GUARD_VOTES][3], vout[CS_GUARD_VOTES][3]; /* time in MPI, calls, wall */
} cs_gcomm;
static cs_gcomm *cs_ghead, **cs_gtail = &cs_ghead;

static int cs_mpi_fuse_dead; /* turned off (thread level, missing functions) */
static int w_thread, w_dtype, w_op, w_device, w_overlap, w_inplace, w_nomem, w_greq, w_err, w_guard;

/* The library's functions we call. */
static struct {
    int (*grequest_start)(MPI_Grequest_query_function *, MPI_Grequest_free_function *, MPI_Grequest_cancel_function *,
                          void *, MPI_Request *);
    int (*grequest_complete)(MPI_Request);
    int (*request_get_status)(MPI_Request, int *, MPI_Status *);
    int (*status_set_elements)(MPI_Status *, MPI_Datatype, int);
    int (*status_set_cancelled)(MPI_Status *, int);
    int (*query_thread)(int *);
    int (*test_inter)(MPI_Comm, int *);
    int (*iallreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
    int (*test)(MPI_Request *, int *, MPI_Status *);
    int (*testall)(int, MPI_Request *, int *, MPI_Status *);
    int (*waitall)(int, MPI_Request *, MPI_Status *);
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    MPI_Datatype byte, int64;
#if defined(OPEN_MPI) && OPEN_MPI
    MPI_Op ops[10];
#endif
    int ready;
} F;

#define CS_FSYM(field, name) (*(void **)&F.field = cs_mpi_libsym(name))

static int cs_mpi_fuse_ready(void)
{
    if (F.ready)
        return F.ready > 0;
    int ok =
        CS_FSYM(grequest_start, "PMPI_Grequest_start") && CS_FSYM(grequest_complete, "PMPI_Grequest_complete") &&
        CS_FSYM(request_get_status, "PMPI_Request_get_status") &&
        CS_FSYM(status_set_elements, "PMPI_Status_set_elements") &&
        CS_FSYM(status_set_cancelled, "PMPI_Status_set_cancelled") && CS_FSYM(query_thread, "PMPI_Query_thread") &&
        CS_FSYM(test_inter, "PMPI_Comm_test_inter") && (*(void **)&F.iallreduce = cs_mpi_real(CS_OP_MPI_Iallreduce)) &&
        (*(void **)&F.test = cs_mpi_real(CS_OP_MPI_Test)) && (*(void **)&F.testall = cs_mpi_real(CS_OP_MPI_Testall)) &&
        (*(void **)&F.waitall = cs_mpi_real(CS_OP_MPI_Waitall)) &&
        (*(void **)&F.allreduce = cs_mpi_real(CS_OP_MPI_Allreduce));
#if defined(OPEN_MPI) && OPEN_MPI
    static const char *const opnames[10] = { "ompi_mpi_op_sum", "ompi_mpi_op_prod", "ompi_mpi_op_max",
                                             "ompi_mpi_op_min", "ompi_mpi_op_land", "ompi_mpi_op_band",
                                             "ompi_mpi_op_lor", "ompi_mpi_op_bor",  "ompi_mpi_op_lxor",
                                             "ompi_mpi_op_bxor" };
    for (int i = 0; i < 10 && ok; i++)
        ok = (F.ops[i] = (MPI_Op)cs_mpi_libdata(opnames[i])) != NULL;
    ok = ok && (F.byte = (MPI_Datatype)cs_mpi_libdata("ompi_mpi_byte")) != NULL;
    ok = ok && (F.int64 = (MPI_Datatype)cs_mpi_libdata("ompi_mpi_long_long_int")) != NULL;
#else
    F.byte = MPI_BYTE;
    F.int64 = MPI_LONG_LONG_INT;
#endif
    int level = 0;
    if (ok && F.query_thread(&level) == MPI_SUCCESS && level == MPI_THREAD_MULTIPLE) {
        cs_core_warn_job(&w_thread, "apply mode is off: the program runs with MPI_THREAD_MULTIPLE");
        ok = 0;
    } else if (!ok) {
        cs_core_warn_job(&w_err, "apply mode is off: the MPI library lacks functions it needs");
    }
    F.ready = ok ? 1 : -1;
    cs_mpi_fuse_dead = !ok;
    return ok;
}

/* Predefined reductions only: a user function may not be elementwise. */
static int cs_mpi_fuse_op_ok(MPI_Op op)
{
#if defined(OPEN_MPI) && OPEN_MPI
    for (int i = 0; i < 10; i++)
        if (op == F.ops[i])
            return 1;
    return 0;
#else
    return op == MPI_SUM || op == MPI_PROD || op == MPI_MAX || op == MPI_MIN || op == MPI_LAND || op == MPI_BAND ||
           op == MPI_LOR || op == MPI_BOR || op == MPI_LXOR || op == MPI_BXOR;
#endif
}

/* Basic types whose elements are plain bytes a copy keeps exactly: no
 * pairs (MINLOC/MAXLOC layouts with holes), no long double padding, no
 * derived types. */
static int cs_mpi_fuse_dtype_ok(int id)
{
    switch (id) {
    case CS_DT_MPI_CHAR:
    case CS_DT_MPI_SIGNED_CHAR:
    case CS_DT_MPI_UNSIGNED_CHAR:
    case CS_DT_MPI_BYTE:
    case CS_DT_MPI_SHORT:
    case CS_DT_MPI_UNSIGNED_SHORT:
    case CS_DT_MPI_INT:
    case CS_DT_MPI_UNSIGNED:
    case CS_DT_MPI_LONG:
    case CS_DT_MPI_UNSIGNED_LONG:
    case CS_DT_MPI_LONG_LONG_INT:
    case CS_DT_MPI_LONG_LONG:
    case CS_DT_MPI_UNSIGNED_LONG_LONG:
    case CS_DT_MPI_FLOAT:
    case CS_DT_MPI_DOUBLE:
    case CS_DT_MPI_WCHAR:
    case CS_DT_MPI_C_BOOL:
    case CS_DT_MPI_INT8_T:
    case CS_DT_MPI_INT16_T:
    case CS_DT_MPI_INT32_T:
    case CS_DT_MPI_INT64_T:
    case CS_DT_MPI_UINT8_T:
    case CS_DT_MPI_UINT16_T:
    case CS_DT_MPI_UINT32_T:
    case CS_DT_MPI_UINT64_T:
    case CS_DT_MPI_C_FLOAT_COMPLEX:
    case CS_DT_MPI_C_DOUBLE_COMPLEX:
    case CS_DT_MPI_AINT:
    case CS_DT_MPI_OFFSET:
    case CS_DT_MPI_COUNT:
    case CS_DT_MPI_INTEGER:
    case CS_DT_MPI_REAL:
    case CS_DT_MPI_DOUBLE_PRECISION:
    case CS_DT_MPI_COMPLEX:
    case CS_DT_MPI_DOUBLE_COMPLEX:
    case CS_DT_MPI_LOGICAL: return 1;
    default: return 0;
    }
}

/* CUDA-aware MPI: a device buffer cannot be packed with memcpy. Asked only
 * when the CUDA runtime is loaded. */
struct cs_cuda_ptr_attr {
    int type;
    int device;
    void *dev;
    void *host;
};
static int cs_mpi_fuse_is_device(const void *p)
{
    static int (*get)(struct cs_cuda_ptr_attr *, const void *);
    static int tried;
    if (!tried) {
        tried = 1;
        static const char *const libs[] = { "libcudart.so.13", "libcudart.so.12", "libcudart.so", NULL };
        for (int i = 0; libs[i] && !get; i++) {
            void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
            if (h)
                *(void **)&get = dlsym(h, "cudaPointerGetAttributes");
        }
    }
    if (!get || !p)
        return 0;
    struct cs_cuda_ptr_attr a = { 0, 0, NULL, NULL };
    return get(&a, p) == 0 && (a.type == 2 || a.type == 3); /* device, managed */
}

static int cs_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na && nb && x < y + nb && y < x + na;
}

/* ---- generalized requests the caller holds ---- */

static int cs_greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    F.status_set_elements(st, F.byte, 0);
    F.status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int cs_greq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int cs_greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static unsigned cs_fslot_of(uint64_t key)
{
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 32;
    return (unsigned)key & (CS_FUSE_SLOTS - 1);
}

static int cs_fslot_put(uint64_t key, cs_flight *f)
{
    for (unsigned i = cs_fslot_of(key), k = 0; k < CS_FUSE_SLOTS; k++, i = (i + 1) & (CS_FUSE_SLOTS - 1))
        if (!cs_fslot[i].f) {
            cs_fslot[i].key = key;
            cs_fslot[i].f = f;
            return 1;
        }
    return 0;
}

static cs_flight *cs_fslot_get(uint64_t key)
{
    for (unsigned i = cs_fslot_of(key), k = 0; k < CS_FUSE_SLOTS; k++, i = (i + 1) & (CS_FUSE_SLOTS - 1)) {
        if (!cs_fslot[i].f)
            return NULL;
        if (cs_fslot[i].key == key)
            return cs_fslot[i].f;
    }
    return NULL;
}

/* Remove key, re-placing the run after it (linear probing). */
static void cs_fslot_del(uint64_t key)
{
    unsigned i = cs_fslot_of(key);
    for (unsigned k = 0; k < CS_FUSE_SLOTS && cs_fslot[i].f; k++, i = (i + 1) & (CS_FUSE_SLOTS - 1))
        if (cs_fslot[i].key == key)
            break;
    if (!cs_fslot[i].f || cs_fslot[i].key != key)
        return;
    cs_fslot[i].f = NULL;
    for (unsigned j = (i + 1) & (CS_FUSE_SLOTS - 1); cs_fslot[j].f; j = (j + 1) & (CS_FUSE_SLOTS - 1)) {
        uint64_t k2 = cs_fslot[j].key;
        cs_flight *f2 = cs_fslot[j].f;
        cs_fslot[j].f = NULL;
        cs_fslot_put(k2, f2);
    }
}

/* ---- fusion buffers ----
 * Kept for reuse: a step's batches need the same sizes every step, and a
 * fresh buffer of 128 KiB or more is a fresh mapping (mmap, page faults,
 * munmap) per fused call. Each carries its capacity in front of it. */
#define CS_BUFC 8
#define CS_BUFHDR 64
static void *cs_bufc[CS_BUFC];
static int cs_nbufc;

static size_t cs_buf_cap(const void *p)
{
    return *(const size_t *)((const char *)p - CS_BUFHDR);
}

static void *cs_buf_get(size_t n)
{
    int best = -1;
    for (int i = 0; i < cs_nbufc; i++)
        if (cs_buf_cap(cs_bufc[i]) >= n && (best < 0 || cs_buf_cap(cs_bufc[i]) < cs_buf_cap(cs_bufc[best])))
            best = i;
    if (best >= 0) {
        void *p = cs_bufc[best];
        cs_bufc[best] = cs_bufc[--cs_nbufc];
        return p;
    }
    if (n > (size_t)-1 - CS_BUFHDR)
        return NULL;
    char *h = cs_fuse_alloc(n + CS_BUFHDR);
    if (!h)
        return NULL;
    *(size_t *)h = n;
    return h + CS_BUFHDR;
}

static void cs_buf_put(void *p)
{
    if (!p)
        return;
    if (cs_nbufc < CS_BUFC) {
        cs_bufc[cs_nbufc++] = p;
        return;
    }
    /* full: the smallest goes */
    int small = 0;
    for (int i = 1; i < cs_nbufc; i++)
        if (cs_buf_cap(cs_bufc[i]) < cs_buf_cap(cs_bufc[small]))
            small = i;
    if (cs_buf_cap(cs_bufc[small]) < cs_buf_cap(p)) {
        void *q = cs_bufc[small];
        cs_bufc[small] = p;
        p = q;
    }
    free((char *)p - CS_BUFHDR);
}

/* ---- starting a batch ---- */

/* The span of a call the engine issued (CS_F_FUSED, tag = fused id). */
static void cs_mpi_fuse_span(const cs_batch *b, uint64_t t0, uint64_t t1, int count, size_t bytes, int rc, uint32_t req)
{
    cs_rec r;
    memset(&r, 0, sizeof r);
    r.op = CS_OP_MPI_Iallreduce;
    r.tid = cs__log_tls.tid;
    r.t0 = t0;
    r.t1 = t1;
    r.bytes = bytes;
    r.comm = (uint16_t)b->cm->local;
    r.dtype = b->dtype_id;
    r.count = (uint32_t)count;
    r.tag = (int32_t)b->id;
    r.rc = rc;
    r.req = req;
    uint32_t flags = CS_F_FUSED | CS_F_NONBLOCKING | CS_F_HAS_COMM;
    if (b->inplace)
        flags |= CS_F_INPLACE;
    if (rc != MPI_SUCCESS)
        flags |= CS_F_ERROR;
    cs_core_emit_rec(&r, flags);
}

static void cs_batch_start(cs_batch *b)
{
    int n = b->n;
    if (n == 0)
        return; /* created for a call that then went unfused */
    size_t meta = sizeof(cs_flight) + sizeof(cs_fmember) * (size_t)n + sizeof(MPI_Request) * (size_t)n;
    cs_flight *f = malloc(meta);
    if (!f) {
        /* Not even the bookkeeping: each member as a blocking allreduce,
         * done here, then its request completed. (This is a point every
         * rank reaches alike, so ranks out of memory together stay in
         * step; see the guide on a rank that runs out alone.) */
        cs_core_warn_job(&w_nomem, "apply mode: out of memory; allreduces run unfused and blocking");
        for (int i = 0; i < n; i++) {
            const cs_fmember *m = &b->m[i];
            uint64_t u0 = cs_clock_ticks();
            int rc = F.allreduce(b->inplace ? MPI_IN_PLACE : m->send, m->recv, m->count, b->dt, b->op, b->comm);
            cs_mpi_fuse_span(b, u0, cs_clock_ticks(), m->count, m->bytes, rc, 0);
            F.grequest_complete(m->greq);
        }
        cs_mpi_fuse_npending -= n;
        b->n = 0;
        return;
    }
    memset(f, 0, sizeof *f);
    f->comm = b->cm;
    f->n = n;
    f->inplace = b->inplace;
    f->bytes = b->bytes;
    f->m = (cs_fmember *)(f + 1);
    f->real = (MPI_Request *)(f->m + n);
    memcpy(f->m, b->m, sizeof(cs_fmember) * (size_t)n);

    int count = (int)(b->bytes / b->esize);
    uint64_t t0 = cs_clock_ticks();
    int rc;
    if (n == 1) {
        /* Nothing to fuse with: the caller's own buffers. */
        f->nreal = 1;
        rc = F.iallreduce(b->inplace ? MPI_IN_PLACE : f->m[0].send, f->m[0].recv, count, b->dt, b->op, b->comm,
                          &f->real[0]);
    } else {
        void *buf = b->bytes <= (size_t)-1 / 2 ? cs_buf_get(b->inplace ? b->bytes : 2 * b->bytes) : NULL;
        if (buf) {
            f->nreal = 1;
            f->rbuf = buf;
            f->sbuf = b->inplace ? NULL : (char *)buf + b->bytes;
            char *p = b->inplace ? f->rbuf : f->sbuf;
            for (int i = 0; i < n; i++) {
                memcpy(p, b->inplace ? f->m[i].recv : f->m[i].send, f->m[i].bytes);
                p += f->m[i].bytes;
            }
            rc = F.iallreduce(b->inplace ? MPI_IN_PLACE : f->sbuf, f->rbuf, count, b->dt, b->op, b->comm, &f->real[0]);
            if (CS_UNLIKELY(cs_fuse_test_fused_us))
                cs_mpi_test_stall_us(cs_fuse_test_fused_us);
        } else {
            /* No fusion buffer: the members as the program issued them. */
            cs_core_warn_job(&w_nomem,
                             "apply mode: no memory for a %zu-byte fusion buffer; "
                             "allreduces run unfused",
                             b->inplace ? b->bytes : 2 * b->bytes);
            f->nreal = n;
            rc = MPI_SUCCESS;
            for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
                uint64_t u0 = cs_clock_ticks();
                rc = F.iallreduce(b->inplace ? MPI_IN_PLACE : f->m[i].send, f->m[i].recv, f->m[i].count, b->dt, b->op,
                                  b->comm, &f->real[i]);
                /* one span per call that ran; the last carries the request */
                if (i < n - 1 || rc != MPI_SUCCESS)
                    cs_mpi_fuse_span(b, u0, cs_clock_ticks(), f->m[i].count, f->m[i].bytes, rc, 0);
                else
                    t0 = u0, count = f->m[i].count;
            }
        }
    }
    uint64_t t1 = cs_clock_ticks();
    f->trace_req = cs_mpi_req_id();
    if (rc == MPI_SUCCESS || f->nreal == 1)
        cs_mpi_fuse_span(b, t0, t1, count, f->nreal == 1 ? b->bytes : f->m[n - 1].bytes, rc, f->trace_req);
    cs_mpi_fuse_npending -= n;
    b->n = 0;
    if (rc != MPI_SUCCESS) {
        /* The library refused it (its error handler returned): complete the
         * members so nothing waits forever; the error was traced. */
        cs_core_warn_job(&w_err, "apply mode: the fused MPI_Iallreduce failed (error %d)", rc);
        for (int i = 0; i < n; i++)
            F.grequest_complete(f->m[i].greq);
        cs_buf_put(f->rbuf);
        free(f);
        return;
    }
    for (int i = 0; i < n; i++)
        cs_fslot_put(CS_H(f->m[i].greq), f);
    f->next = cs_flights;
    cs_flights = f;
    cs_mpi_fuse_nflight++;
}

static void cs_batch_drop(int i)
{
    free(cs_batches[i]);
    memmove(&cs_batches[i], &cs_batches[i + 1], sizeof cs_batches[0] * (size_t)(cs_nbatch - i - 1));
    cs_nbatch--;
}

static void cs_batch_flush_all(void)
{
    cs_core_busy++;
    while (cs_nbatch) {
        cs_batch_start(cs_batches[0]);
        cs_batch_drop(0);
    }
    cs_core_busy--;
}

static int cs_batch_find(MPI_Comm comm)
{
    for (int i = 0; i < cs_nbatch; i++)
        if (cs_batches[i]->comm == comm)
            return i;
    return -1;
}

static void cs_batch_flush_comm(MPI_Comm comm)
{
    int i = cs_batch_find(comm);
    if (i < 0)
        return;
    cs_core_busy++;
    cs_batch_start(cs_batches[i]);
    cs_batch_drop(i);
    cs_core_busy--;
}

/* ---- the on-line guard (fuse_guard.h) ---- */

/* The guard of a communicator, set up at its first fusable call (the same
 * call on every rank). NULL when its record has no room for it, which is
 * the same on every rank (a record made before apply mode started: none
 * is, the module starts before the first span); the communicator then runs
 * unfused everywhere. A communicator this rank does not know at all
 * (c->comm NULL) is never fused here either: see docs/fusion.md. */
static cs_gcomm *cs_guard_of(cs_mpi_comm *cm, MPI_Comm comm, size_t bytes)
{
    cs_gcomm *gc = cm->ext;
    if (!gc) {
        cs_core_warn_job(&w_guard, "apply mode: a communicator known before apply mode started is not measured; "
                                   "its allreduces run unfused");
        return NULL;
    }
    if (gc->used)
        return gc;
    gc->used = 1;
    gc->cm = cm;
    gc->comm = comm;
    /* an intercommunicator's sum would reach each group from the other:
     * the groups would decide apart, so its calls run unfused */
    int inter = 0;
    gc->dead = F.test_inter(comm, &inter) != MPI_SUCCESS || inter;
    size_t cap = cs_fuse_buffer > (64u << 20) ? cs_fuse_buffer : (64u << 20);
    cs_guard_init(&gc->g, cs_fuse_buffer, bytes, cap);
    for (int i = 0; i < CS_GUARD_VOTES; i++)
        gc->vote[i] = MPI_REQUEST_NULL;
    gc->cfg = cs_guard_next(&gc->g);
    if (!cs_mpi_fuse_timing) {
        cs_fuse_guard_clock();
        cs_mpi_fuse_timing = 1;
    }
    gc->busy0 = cs_mpi_fuse_busy;
    gc->wall0 = cs_clock_ticks();
    gc->next = NULL;
    *cs_gtail = gc;
    cs_gtail = &gc->next;
    return gc;
}

/* The end of gc's current window, at a call where the program may wait
 * (every rank ends it at the same call of its own: the first such point
 * after the same number of fusable calls), before that call runs: its
 * pending batch has started; the calls made from now on run the next
 * window's setting. The window's measurement closes when this call
 * returns (cs_guard_close): the calls of a window are completed in it. */
static void cs_guard_boundary(cs_gcomm *gc)
{
    gc->cfg = cs_guard_next(&gc->g);
    gc->armed = 0;
    cs_mpi_fuse_armed--;
    gc->calls_closed = gc->calls;
    gc->calls = 0;
    gc->closing = 1;
    cs_mpi_fuse_closing = 1;
}

/* The call that ended gc's window returned: its figure (the time this rank
 * spent in MPI calls during the window, and its fusable calls) goes to
 * every rank by a nonblocking sum over the communicator, issued here in
 * its collective order; the figure of the window CS_GUARD_LAG back (every
 * rank sent it a whole window ago) is taken. */
static void cs_guard_close(cs_gcomm *gc)
{
    uint32_t w = gc->win;
    int slot = (int)(w % CS_GUARD_VOTES);
    gc->vin[slot][0] = (int64_t)(cs_mpi_fuse_busy - gc->busy0);
    gc->vin[slot][1] = (int64_t)gc->calls_closed;
    uint64_t now = cs_clock_ticks();
    gc->vin[slot][2] = (int64_t)(now - gc->wall0);
#if defined(OPEN_MPI) && OPEN_MPI
    MPI_Op sum = F.ops[0];
#else
    MPI_Op sum = MPI_SUM;
#endif
    if (F.iallreduce(gc->vin[slot], gc->vout[slot], 3, F.int64, sum, gc->comm, &gc->vote[slot]) != MPI_SUCCESS)
        gc->vote[slot] = MPI_REQUEST_NULL;
    if (w >= CS_GUARD_LAG) {
        int old = (int)((w - CS_GUARD_LAG) % CS_GUARD_VOTES);
        if (gc->vote[old] != MPI_REQUEST_NULL) {
            F.waitall(1, &gc->vote[old], MPI_STATUSES_IGNORE);
            cs_fuse_guard_consume(&gc->g, gc->cm->local, 0, w - CS_GUARD_LAG, gc->vout[old]);
        } else {
            int64_t none[3] = { -1, 0, 0 }; /* a vote the library refused: no figure */
            cs_fuse_guard_consume(&gc->g, gc->cm->local, 0, w - CS_GUARD_LAG, none);
        }
        gc->vote[old] = MPI_REQUEST_NULL;
    }
    gc->win = w + 1;
    gc->closing = 0;
    gc->busy0 = cs_mpi_fuse_busy;
    gc->wall0 = now;
}

/* Whether every vote gc sent is complete (tested, never waited for: a
 * freed communicator's last votes complete when every rank sent them,
 * which a rank must not block on). */
static int cs_guard_votes_done(cs_gcomm *gc)
{
    for (int k = 0; k < CS_GUARD_VOTES; k++) {
        int done = 0;
        if (gc->vote[k] == MPI_REQUEST_NULL)
            continue;
        if (F.test(&gc->vote[k], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            gc->vote[k] = MPI_REQUEST_NULL; /* an error the library reported: nothing to wait for */
        else if (!done)
            return 0;
    }
    return 1;
}

static void cs_mpi_fuse_close_all(int op)
{
    /* A window that ended at MPI_Comm_free closes at the next call: by
     * then the freed communicator is known (its key is 0) and no vote is
     * sent on it. Every rank makes that next call at the same point. */
    if (op == CS_OP_MPI_Comm_free)
        return;
    cs_mpi_fuse_closing = 0;
    cs_core_busy++;
    for (cs_gcomm **pp = &cs_ghead; *pp;) {
        cs_gcomm *gc = *pp;
        if (!gc->cm->key)
            gc->dead = 1; /* its communicator is gone: never measured again */
        if (gc->closing && !gc->dead)
            cs_guard_close(gc);
        if (gc->dead) {
            gc->closing = 0;
            if (gc->armed) {
                gc->armed = 0;
                cs_mpi_fuse_armed--;
            }
            /* off the list once its votes are complete: a program that
             * makes and frees communicators keeps a short list */
            if (cs_guard_votes_done(gc)) {
                *pp = gc->next;
                if (!*pp)
                    cs_gtail = pp;
                continue;
            }
        }
        pp = &gc->next;
    }
    cs_core_busy--;
}

void cs_mpi_fuse_flush_all(void)
{
    cs_core_busy++;
    cs_batch_flush_all();
    for (cs_gcomm *gc = cs_ghead; cs_mpi_fuse_armed && gc; gc = gc->next)
        if (gc->armed)
            cs_guard_boundary(gc);
    cs_core_busy--;
}

void cs_mpi_fuse_flush_comm(MPI_Comm comm)
{
    cs_core_busy++;
    cs_batch_flush_comm(comm);
    for (cs_gcomm *gc = cs_ghead; cs_mpi_fuse_armed && gc; gc = gc->next)
        if (gc->armed && gc->comm == comm && gc->cm->key)
            cs_guard_boundary(gc);
    cs_core_busy--;
}

/* MPI_Comm_free(comm), before the real call: its guard's votes still out
 * are completed (a library may not progress a nonblocking collective on a
 * freed communicator: Open MPI's libnbc crashed doing so). Every member
 * sent these votes before its own MPI_Comm_free of comm (a vote is sent
 * when a window's call returns; none after the free), so this waits for
 * no more than a collective MPI_Comm_free may wait for anyway: the other
 * members reaching their MPI_Comm_free of comm. */
static void cs_mpi_fuse_comm_free(MPI_Comm comm)
{
    cs_core_busy++;
    for (cs_gcomm *gc = cs_ghead; gc; gc = gc->next)
        if (gc->comm == comm && gc->cm->key)
            for (int k = 0; k < CS_GUARD_VOTES; k++)
                if (gc->vote[k] != MPI_REQUEST_NULL)
                    F.waitall(1, &gc->vote[k], MPI_STATUSES_IGNORE);
    cs_core_busy--;
}

/* MPI_Finalize: the votes still out are completed (every rank is here). */
static void cs_mpi_fuse_finish(void)
{
    cs_core_busy++;
    cs_batch_flush_all();
    for (cs_gcomm *gc = cs_ghead; gc; gc = gc->next) {
        for (int k = 0; k < CS_GUARD_VOTES; k++)
            if (gc->vote[k] != MPI_REQUEST_NULL)
                F.waitall(1, &gc->vote[k], MPI_STATUSES_IGNORE);
        gc->armed = 0;
        gc->closing = 0;
    }
    /* nothing more is measured: no vote may follow MPI_Finalize */
    cs_mpi_fuse_armed = 0;
    cs_mpi_fuse_closing = 0;
    cs_mpi_fuse_timing = 0;
    cs_core_busy--;
}

/* ---- joining a batch ---- */

static int cs_batch_overlaps(const cs_batch *b, const void *send, void *recv, size_t bytes)
{
    if (send && cs_overlap(send, bytes, recv, bytes))
        return 1;
    /* Buffers beside the batch's span of memory (the common case: buckets
     * of one gradient array) need no scan. */
    if (!cs_overlap(recv, bytes, (void *)b->lo, b->hi - b->lo) &&
        !(send && cs_overlap(send, bytes, (void *)b->lo, b->hi - b->lo)))
        return 0;
    for (int i = 0; i < b->n; i++) {
        const cs_fmember *m = &b->m[i];
        if (cs_overlap(recv, bytes, m->recv, m->bytes) || (m->send && cs_overlap(recv, bytes, m->send, m->bytes)) ||
            (send && cs_overlap(send, bytes, m->recv, m->bytes)))
            return 1;
    }
    return 0;
}

int cs_mpi_fuse_iallreduce(cs_mpi_call *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                           MPI_Comm comm, MPI_Request *request, int *rc)
{
    if (cs_mpi_fuse_dead || !c->comm || !request || count <= 0 || !cs_mpi_fuse_ready())
        goto unfused;
    size_t bytes = (size_t)c->r->bytes;
    int inplace = sendbuf == MPI_IN_PLACE;
    const void *send = inplace ? NULL : sendbuf;
    if (bytes == 0 || bytes > cs_fuse_threshold)
        goto unfused;
    if (!cs_mpi_fuse_dtype_ok(c->r->dtype)) {
        cs_core_warn_job(&w_dtype, "apply mode: %s allreduces are not fused (unsupported datatype)",
                         cs_dtype_names[c->r->dtype < CS_DT_COUNT ? c->r->dtype : CS_DT_OTHER]);
        goto unfused;
    }
    if (!cs_mpi_fuse_op_ok(op)) {
        cs_core_warn_job(&w_op, "apply mode: allreduces with a user-defined MPI_Op are not fused");
        goto unfused;
    }
    if (cs_mpi_fuse_is_device(recvbuf) || (send && cs_mpi_fuse_is_device(send))) {
        cs_core_warn_job(&w_device, "apply mode: allreduces on GPU buffers are not fused");
        goto unfused;
    }

    size_t buffer = cs_fuse_buffer;
    if (cs_fuse_guard) {
        /* The guard: this call counts in its communicator's window, which
         * runs unfused or with one buffer size. */
        cs_gcomm *gc = cs_guard_of(c->comm, comm, bytes);
        if (!gc || gc->dead)
            goto unfused;
        if (++gc->calls >= CS_GUARD_WINDOW && !gc->armed) {
            gc->armed = 1;
            cs_mpi_fuse_armed++;
        }
        buffer = gc->g.buf[gc->cfg];
        if (CS_UNLIKELY(cs_fuse_test_unfused_us) && buffer == 0)
            cs_mpi_test_stall_us(cs_fuse_test_unfused_us);
    }
    if (bytes > buffer)
        goto unfused;
    int bi = cs_batch_find(comm);
    cs_batch *b = bi >= 0 ? cs_batches[bi] : NULL;
    if (b && (b->op != op || b->dt != dt || b->inplace != inplace || b->n == CS_FUSE_MAX_MEMBERS ||
              b->bytes + bytes > buffer || (b->bytes + bytes) / b->esize > INT_MAX)) {
        if (b->inplace != inplace)
            cs_core_warn_job(&w_inplace, "apply mode: in-place and out-of-place allreduces are not fused together");
        cs_batch_flush_comm(comm);
        b = NULL;
    }
    if (b ? cs_batch_overlaps(b, send, recvbuf, bytes) : send && cs_overlap(send, bytes, recvbuf, bytes)) {
        cs_core_warn_job(&w_overlap, "apply mode: an allreduce whose buffers overlap another's is not fused");
        goto unfused;
    }
    if (!b) {
        if (cs_nbatch == CS_FUSE_MAX_BATCHES) {
            cs_core_busy++;
            cs_batch_start(cs_batches[0]);
            cs_batch_drop(0);
            cs_core_busy--;
        }
        b = malloc(sizeof *b);
        if (!b) {
            cs_core_warn_job(&w_nomem, "apply mode: out of memory; allreduces run unfused");
            goto unfused;
        }
        b->comm = comm;
        b->cm = c->comm;
        b->op = op;
        b->dt = dt;
        b->dtype_id = c->r->dtype;
        b->inplace = inplace;
        b->n = 0;
        b->esize = bytes / (size_t)count;
        b->bytes = 0;
        b->id = ++c->comm->fused;
        cs_batches[cs_nbatch++] = b;
    }
    MPI_Request g;
    if (F.grequest_start(cs_greq_query, cs_greq_free, cs_greq_cancel, NULL, &g) != MPI_SUCCESS) {
        cs_core_warn_job(&w_greq, "apply mode: MPI_Grequest_start failed; allreduces run unfused");
        goto unfused;
    }
    cs_fmember *m = &b->m[b->n++];
    m->send = send;
    m->recv = recvbuf;
    m->bytes = bytes;
    m->count = count;
    m->greq = g;
    b->bytes += bytes;
    uintptr_t r0 = (uintptr_t)recvbuf, s0 = send ? (uintptr_t)send : r0;
    uintptr_t lo = r0 < s0 ? r0 : s0, hi = (r0 > s0 ? r0 : s0) + bytes;
    if (b->n == 1 || lo < b->lo)
        b->lo = lo;
    if (b->n == 1 || hi > b->hi)
        b->hi = hi;
    cs_mpi_fuse_npending++;
    *request = g;
    *rc = MPI_SUCCESS;
    c->flags |= CS_F_FUSE_MEMBER;
    c->r->tag = (int32_t)b->id;
    return 1;

unfused:
    /* Whatever this call is, it is issued now: the batch before it on its
     * communicator must start first, to keep the order of collectives. */
    if (cs_nbatch)
        cs_batch_flush_comm(comm);
    return 0;
}

/* ---- completing ---- */

static void cs_flight_finish(cs_mpi_call *c, cs_flight *f)
{
    if (f->rbuf) {
        const char *p = f->rbuf;
        for (int i = 0; i < f->n; i++) {
            memcpy(f->m[i].recv, p, f->m[i].bytes);
            p += f->m[i].bytes;
        }
    }
    cs_mpi_reqdone(f->trace_req, c->r->op, c->r->t0, cs_clock_ticks());
    for (int i = 0; i < f->n; i++) {
        cs_fslot_del(CS_H(f->m[i].greq));
        F.grequest_complete(f->m[i].greq);
    }
    for (cs_flight **pp = &cs_flights; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    cs_mpi_fuse_nflight--;
    cs_buf_put(f->rbuf);
    free(f);
}

/* Test a flight's real requests; 1 once all are done (and it is finished). */
static int cs_flight_poll(cs_mpi_call *c, cs_flight *f)
{
    int done = 0;
    if (F.testall(f->nreal, f->real, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        done = 1; /* an error the library reported: do not wait forever */
    if (done)
        cs_flight_finish(c, f);
    return done;
}

static void cs_flight_wait(cs_mpi_call *c, cs_flight *f)
{
    F.waitall(f->nreal, f->real, MPI_STATUSES_IGNORE);
    cs_flight_finish(c, f);
}

/* The distinct flights the requests belong to, into out[] (at most max). */
static int cs_flights_of(int n, const MPI_Request *reqs, cs_flight **out, int max, int *others)
{
    int k = 0;
    *others = 0;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        cs_flight *f = cs_fslot_get(CS_H(reqs[i]));
        if (!f) {
            (*others)++;
            continue;
        }
        int seen = 0;
        for (int j = 0; j < k && !seen; j++)
            seen = out[j] == f;
        if (!seen && k < max)
            out[k++] = f;
    }
    return k;
}

void cs_mpi_fuse_progress(cs_mpi_call *c, int how, int n, MPI_Request *reqs)
{
    if (n <= 0 || !reqs)
        return;
    cs_flight *fl[64];
    int others;
    cs_core_busy++;
    /* A request array can name more flights than fl holds: loop until none
     * of its flights is left (each pass finishes or polls up to 64). */
    for (;;) {
        int k = cs_flights_of(n, reqs, fl, 64, &others);
        if (k == 0)
            break;
        if (how == CS_FUSE_BLOCK_ALL) {
            for (int j = 0; j < k; j++)
                cs_flight_wait(c, fl[j]);
            continue;
        }
        int any = 0;
        for (int j = 0; j < k; j++)
            any |= cs_flight_poll(c, fl[j]);
        if (how == CS_FUSE_POLL || any)
            break;
        /* Waitany/Waitsome: return as soon as one of the caller's other
         * requests is complete too (asked without consuming it). */
        int ready = 0;
        for (int i = 0; i < n && !ready; i++)
            if (reqs[i] != MPI_REQUEST_NULL && !cs_fslot_get(CS_H(reqs[i])))
                F.request_get_status(reqs[i], &ready, MPI_STATUS_IGNORE);
        if (ready)
            break;
    }
    cs_core_busy--;
}

static const cs_mpi_fuse_ops cs_mpi_fuse_engine = {
    .iallreduce = cs_mpi_fuse_iallreduce,
    .flush_all = cs_mpi_fuse_flush_all,
    .flush_comm = cs_mpi_fuse_flush_comm,
    .progress = cs_mpi_fuse_progress,
    .finish = cs_mpi_fuse_finish,
    .close = cs_mpi_fuse_close_all,
    .comm_free = cs_mpi_fuse_comm_free,
};

static void cs_mpi_fuse_start(const cs_settings *s, cs_log_header *h)
{
    (void)h;
    /* every communicator's record carries room for its guard */
    cs_mpi_comm_extra = s->fuse && cs_fuse_guard ? sizeof(cs_gcomm) : 0;
    if (s->fuse)
        __atomic_store_n(&cs_core_hooks, 1, __ATOMIC_RELEASE);
    cs_mpi_fuse = s->fuse ? &cs_mpi_fuse_engine : NULL;
}

const cs_module cs_mpi_fuse_module = {
    .name = "mpi_fuse",
    .start = cs_mpi_fuse_start,
};
