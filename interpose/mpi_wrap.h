/* mpi_wrap.h: the pieces every generated MPI wrapper is made of.
 *
 * Compiled once per MPI implementation (Open MPI, MPICH): their handle
 * types differ, so the preload is built per flavor from the same sources.
 * The real functions are found with dlsym(RTLD_NEXT, "PMPI_X"), falling
 * back to dlopen(RTLD_NOLOAD) of libmpi for hosts that load it RTLD_LOCAL
 * (mpi4py). libmpi is never linked, so a launcher that inherits the
 * preload loads it without MPI.
 *
 * errno: the fast path makes no call that can set it; every slow path
 * that can (log refill, communicator and datatype lookups, call sites,
 * PAPI, symbol resolution) saves and restores it itself, so the
 * application sees the errno the MPI library left. */
#ifndef CS_MPI_WRAP_H
#define CS_MPI_WRAP_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <mpi.h>

#include "interpose/callsite.h"
#include "interpose/core.h"
#include "interpose/module.h"
#include "interpose/papi.h"
#include "interpose/watchdog.h"
#include "libtrace/dtypes.h"

/* MPI-3 added const to input buffers; both supported libraries have it. */
#define CS_CONST const

#if defined(OPEN_MPI) && OPEN_MPI
/* Open MPI's predefined handles are addresses of libmpi data symbols; a
 * reference to one would make the preload unloadable where libmpi is not
 * (mpirun). Resolve the few we use at MPI_Init instead. */
struct cs_ompi_consts {
    MPI_Comm comm_world, comm_self, comm_null;
    MPI_Request request_null;
    MPI_Datatype datatype_null;
};
extern CS_INTERNAL struct cs_ompi_consts cs_ompi;
#undef MPI_COMM_WORLD
#define MPI_COMM_WORLD (cs_ompi.comm_world)
#undef MPI_COMM_SELF
#define MPI_COMM_SELF (cs_ompi.comm_self)
#undef MPI_COMM_NULL
#define MPI_COMM_NULL (cs_ompi.comm_null)
#undef MPI_REQUEST_NULL
#define MPI_REQUEST_NULL (cs_ompi.request_null)
#undef MPI_DATATYPE_NULL
#define MPI_DATATYPE_NULL (cs_ompi.datatype_null)
#endif

/* A handle's bits as a key (pointer for Open MPI, int for MPICH). */
static inline uint64_t cs_hbits(const void *p, size_t n)
{
    uint64_t v = 0;
    memcpy(&v, p, n);
    return v;
}
#define CS_H(x)                         \
    __extension__({                     \
        __typeof__(x) cs_h_ = (x);      \
        cs_hbits(&cs_h_, sizeof cs_h_); \
    })

typedef struct cs_mpi_comm {
    uint64_t key;   /* handle bits; 0 once freed */
    uint64_t id;    /* job-wide id */
    uint32_t local; /* index used in span records */
    uint32_t size;
    int32_t rank;
    uint32_t seq;      /* collectives issued so far */
    uint32_t children; /* communicators created from it (atomic) */
    uint32_t is_world;
    uint32_t fused; /* apply mode: fused calls made on it so far */
    void *ext;      /* apply mode's state for it: cs_mpi_comm_extra zeroed bytes
                       in the record's own allocation, or NULL (none asked) */
} cs_mpi_comm;

/* Bytes of state apply mode's guard keeps with every communicator (set by
 * its module at start, before any communicator is known). They come in
 * the same allocation as the record, so every rank that knows a
 * communicator has them: no second allocation that could fail on one
 * rank only (docs/fusion.md, "Every rank tracks every communicator"). */
extern CS_INTERNAL size_t cs_mpi_comm_extra;

/* A call being traced. Fields are written straight into the log slot
 * claimed at entry (log pages start zeroed, so only non-zero fields are
 * stored); the slot becomes visible when cs_mpi_emit() commits its hdr,
 * and stays mapped meanwhile whatever else the call writes (cs_log_hold). */
typedef struct cs_mpi_call {
    cs_rec *r; /* the slot, or &scratch when the log has none */
    uint32_t flags;
    cs_mpi_comm *comm;
    cs_rec scratch;
} cs_mpi_call;

/* Requests saved before a completion call (which resets them). */
#define CS_MPI_REQS_STACK 64
typedef struct cs_mpi_reqs {
    int n;
    MPI_Request *h;
    MPI_Request small[CS_MPI_REQS_STACK];
    MPI_Status st[CS_MPI_REQS_STACK];
} cs_mpi_reqs;

extern CS_INTERNAL void *cs_mpi_real_fns[CS_OP_COUNT];
/* A function or datatype/op object of the MPI library (never ours). */
void *cs_mpi_libsym(const char *name);
void *cs_mpi_libdata(const char *name);
/* A request id for the trace, and its REQDONE record (t0, t1: the
 * completion call that saw it finish). */
uint32_t cs_mpi_req_id(void);
void cs_mpi_reqdone(uint32_t id, int op, uint64_t t0, uint64_t t1);
extern CS_INTERNAL const char *const cs_mpi_real_names[CS_OP_COUNT];
void *cs_mpi_resolve(int op);
int cs_mpi_missing(int op);

CS_HOT void *cs_mpi_real(int op)
{
    void *f = __atomic_load_n(&cs_mpi_real_fns[op], __ATOMIC_RELAXED);
    return CS_LIKELY(f != NULL) ? f : cs_mpi_resolve(op);
}

/* Begin a traced call: 0 means pass the call through untraced. */
CS_HOT int cs_mpi_enter(cs_mpi_call *c, int op)
{
    if (CS_UNLIKELY(cs_core_busy))
        return 0;
    if (CS_UNLIKELY(!__atomic_load_n(&cs_core_tracing, __ATOMIC_RELAXED))) {
        if (op != CS_OP_MPI_Init && op != CS_OP_MPI_Init_thread)
            return 0;
        if (!cs_core_start(NULL))
            return 0;
    }
    cs_core_busy = 1;
    cs_rec *r = cs_log_hold();
    if (CS_UNLIKELY(!r)) {
        r = &c->scratch;
        memset(r, 0, sizeof *r);
    }
    c->r = r;
    r->op = (uint16_t)op;
    r->tid = cs__log_tls.tid;
    c->flags = 0;
    c->comm = NULL;
    if (cs_callsite_on)
        r->callsite = cs_callsite_capture();
    return 1;
}

/* The call starts: its slot becomes an in-flight record (CS_REC_INFLIGHT)
 * with what is known at entry, so a call that never returns is still
 * seen (collscope status, a post-mortem ingest); cs_mpi_emit() turns it
 * into the span. */
/* x (also below): 1 in the wrapper copy that runs the optional hooks
 * (cs_core_hooks, core.h), 0 in the one they are compiled out of. */
CS_HOT void cs_mpi_begin(cs_mpi_call *c, int x)
{
    if (CS_UNLIKELY(x && cs_papi_on))
        cs_papi_sample(cs__log_tls.tid, 1);
    c->r->t0 = cs_clock_ticks();
    if (CS_LIKELY(c->r != &c->scratch))
        cs_log_commit(c->r, CS_REC_HDR(CS_REC_INFLIGHT, c->flags));
    if (x)
        cs_wd_begin(c->r);
}

/* Apply mode's guard (fuse/fuse_guard.h) measures the time spent in MPI
 * calls: while cs_mpi_fuse_timing is set, every call adds its duration
 * (ticks) to cs_mpi_fuse_busy; a call that ended a guard window (the flush
 * hook set cs_mpi_fuse_closing) closes its measurement when it returns. */
extern CS_INTERNAL int cs_mpi_fuse_timing, cs_mpi_fuse_closing;
extern CS_INTERNAL uint64_t cs_mpi_fuse_busy;
void cs_mpi_fuse_close(int op);

CS_HOT void cs_mpi_end(cs_mpi_call *c, int rc, int x)
{
    c->r->t1 = cs_clock_ticks();
    if (CS_UNLIKELY(x && cs_mpi_fuse_timing)) {
        cs_mpi_fuse_busy += c->r->t1 - c->r->t0;
        if (cs_mpi_fuse_closing)
            cs_mpi_fuse_close(c->r->op);
    }
    if (CS_UNLIKELY(rc != MPI_SUCCESS)) {
        c->r->rc = rc;
        c->flags |= CS_F_ERROR;
    }
}

CS_HOT void cs_mpi_emit(cs_mpi_call *c, int x)
{
    if (x)
        cs_wd_end(c->r->t1);
    if (CS_LIKELY(c->r != &c->scratch))
        cs_log_release(c->r, CS_REC_HDR(CS_REC_SPAN, c->flags));
    cs_core_busy = 0;
}

/* Communicators. */
cs_mpi_comm *cs_mpi_comm_lookup(uint64_t key, MPI_Comm comm);
extern CS_INTERNAL __thread cs_mpi_comm *cs_mpi_comm_last __attribute__((tls_model("initial-exec")));

CS_HOT void cs_mpi_set_comm(cs_mpi_call *c, MPI_Comm comm, int collective)
{
    uint64_t key = CS_H(comm);
    cs_mpi_comm *m = cs_mpi_comm_last;
    if (CS_UNLIKELY(!m || m->key != key)) {
        m = cs_mpi_comm_lookup(key, comm);
        if (!m)
            return;
        cs_mpi_comm_last = m;
    }
    c->comm = m;
    c->r->comm = (uint16_t)m->local;
    c->flags |= CS_F_HAS_COMM;
    if (collective) {
        /* MPI forbids concurrent collectives on one communicator, so the
         * count needs no atomic read-modify-write (a locked add costs more
         * than the rest of this function). */
        uint32_t seq = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);
        __atomic_store_n(&m->seq, seq + 1, __ATOMIC_RELAXED);
        c->r->seq = seq;
        c->flags |= CS_F_HAS_SEQ;
    }
}

/* Datatypes: size and name id, cached for predefined types. */
typedef struct cs_mpi_dt {
    uint32_t size;
    uint16_t id;
} cs_mpi_dt;
cs_mpi_dt cs_mpi_dtype(uint64_t key, MPI_Datatype dt);
/* The last predefined datatype this thread used: most calls hit it. */
extern CS_INTERNAL __thread uint64_t cs_mpi_dt_last_key __attribute__((tls_model("initial-exec")));
extern CS_INTERNAL __thread cs_mpi_dt cs_mpi_dt_last __attribute__((tls_model("initial-exec")));

CS_HOT void cs_mpi_set_count(cs_mpi_call *c, int count, MPI_Datatype dt)
{
    c->r->count = (uint32_t)count;
    uint64_t key = CS_H(dt);
    if (count <= 0 || key == 0)
        return;
    cs_mpi_dt d;
    if (CS_LIKELY(key == cs_mpi_dt_last_key)) {
        d = cs_mpi_dt_last;
    } else {
        if (dt == MPI_DATATYPE_NULL)
            return;
        d = cs_mpi_dtype(key, dt);
    }
    c->r->dtype = d.id;
    c->r->bytes = (uint64_t)count * d.size;
}

CS_HOT void cs_mpi_set_peer(cs_mpi_call *c, int peer)
{
    c->r->peer = peer;
    c->flags |= CS_F_HAS_PEER;
    if (peer == MPI_ANY_SOURCE)
        c->flags |= CS_F_ANY_SOURCE;
}

CS_HOT int cs_mpi_is_inplace(const void *buf)
{
    return buf == MPI_IN_PLACE;
}

CS_HOT void cs_mpi_set_inplace(cs_mpi_call *c, const void *buf)
{
    if (buf == MPI_IN_PLACE)
        c->flags |= CS_F_INPLACE;
}

/* Receives: the actual source and tag, from the status. */
CS_HOT void cs_mpi_set_status(cs_mpi_call *c, const MPI_Status *st, int rc)
{
    if (rc != MPI_SUCCESS || st == MPI_STATUS_IGNORE)
        return;
    if (c->r->op == CS_OP_MPI_Sendrecv || c->r->op == CS_OP_MPI_Sendrecv_replace) {
        c->r->req = (uint32_t)st->MPI_SOURCE; /* the receive side's source */
        return;
    }
    if (c->flags & CS_F_ANY_SOURCE)
        c->r->peer = st->MPI_SOURCE;
    c->r->tag = st->MPI_TAG;
}

/* Test-only seams for the slow-link verdicts, set at trace start; both
 * stall by busy waiting inside the traced call, after the ranks have
 * arrived, so the call's transfer grows and its arrivals stay on time.
 *   COLLSCOPE_TEST_P2P_DELAY=SRC:DST:USEC  every send from world rank SRC
 *       to world rank DST stalls USEC microseconds before the real send.
 *   COLLSCOPE_TEST_COMM_DELAY=LOCAL:USEC  every blocking collective on the
 *       communicator whose process-local index (cs_mpi_comm.local: world 0,
 *       self 1, then each created communicator in creation order; the same
 *       on every member of communicators created collectively in the same
 *       order) is LOCAL stalls USEC microseconds after the real call
 *       returns, on every member. */
extern CS_INTERNAL int cs_mpi_test_p2p_src, cs_mpi_test_p2p_dst, cs_mpi_test_p2p_us;
extern CS_INTERNAL int cs_mpi_test_comm_local, cs_mpi_test_comm_us;
void cs_mpi_test_stall_us(int us);

/* Test-only stall inside a send (COLLSCOPE_TEST_P2P_DELAY). */
CS_HOT void cs_mpi_p2p_stall(cs_mpi_call *c, int x)
{
    if (CS_UNLIKELY(x && cs_mpi_test_p2p_us > 0) && c->comm && c->comm->is_world &&
        c->comm->rank == cs_mpi_test_p2p_src && c->r->peer == cs_mpi_test_p2p_dst)
        cs_mpi_test_stall_us(cs_mpi_test_p2p_us);
}

/* Test-only stall after a blocking collective (COLLSCOPE_TEST_COMM_DELAY). */
CS_HOT void cs_mpi_coll_stall(cs_mpi_call *c, int x)
{
    if (CS_UNLIKELY(x && cs_mpi_test_comm_us > 0) && c->comm && c->comm->local == (uint32_t)cs_mpi_test_comm_local)
        cs_mpi_test_stall_us(cs_mpi_test_comm_us);
}

uint64_t cs_mpi_bytes_n(int count, MPI_Datatype dt, MPI_Comm comm);
uint64_t cs_mpi_bytes_v(CS_CONST int counts[], MPI_Datatype dt, MPI_Comm comm);
uint64_t cs_mpi_bytes_w(CS_CONST int counts[], CS_CONST MPI_Datatype dts[], MPI_Comm comm);
int cs_mpi_group_leader(MPI_Group group);

void cs_mpi_started(cs_mpi_call *c, MPI_Request *req, int rc);
void cs_mpi_init_begin(cs_mpi_call *c);
void cs_mpi_init_end(cs_mpi_call *c, int rc);
void cs_mpi_finalize_begin(cs_mpi_call *c);
void cs_mpi_comm_created(cs_mpi_call *c, MPI_Comm parent, MPI_Comm *newcomm, int how, int color, int skey, int rc);
/* After MPI_Comm_set_name returned rc: a COMMNAME record for the call's
 * communicator (c->comm). Writes nothing when tracing is off or the log
 * is full; errno as it was. */
void cs_mpi_comm_named(cs_mpi_call *c, const char *name, int rc);
void cs_mpi_comm_freed(cs_mpi_call *c, MPI_Comm freed, int rc);

/* The MPI flavor and its test seams, as a module (mpi_wrap.c). */
extern CS_INTERNAL const cs_module cs_mpi_module;

/* Completion calls: _pre saves the requests (and supplies a status array
 * when the caller ignores them) and returns the status pointer to pass on;
 * _post writes a REQDONE record for every request that completed. */
MPI_Status *cs_mpi_complete_one_pre(cs_mpi_call *, cs_mpi_reqs *, MPI_Request *, MPI_Status *);
void cs_mpi_complete_one_post(cs_mpi_call *, cs_mpi_reqs *, int, MPI_Request *, MPI_Status *);
MPI_Status *cs_mpi_complete_testone_pre(cs_mpi_call *, cs_mpi_reqs *, MPI_Request *, int *, MPI_Status *);
void cs_mpi_complete_testone_post(cs_mpi_call *, cs_mpi_reqs *, int, MPI_Request *, int *, MPI_Status *);
MPI_Status *cs_mpi_complete_all_pre(cs_mpi_call *, cs_mpi_reqs *, int, MPI_Request *, MPI_Status *);
void cs_mpi_complete_all_post(cs_mpi_call *, cs_mpi_reqs *, int, int, MPI_Request *, MPI_Status *);
MPI_Status *cs_mpi_complete_testall_pre(cs_mpi_call *, cs_mpi_reqs *, int, MPI_Request *, int *, MPI_Status *);
void cs_mpi_complete_testall_post(cs_mpi_call *, cs_mpi_reqs *, int, int, MPI_Request *, int *, MPI_Status *);
MPI_Status *cs_mpi_complete_any_pre(cs_mpi_call *, cs_mpi_reqs *, int, MPI_Request *, int *, MPI_Status *);
void cs_mpi_complete_any_post(cs_mpi_call *, cs_mpi_reqs *, int, int, MPI_Request *, int *, MPI_Status *);
MPI_Status *cs_mpi_complete_testany_pre(cs_mpi_call *, cs_mpi_reqs *, int, MPI_Request *, int *, int *, MPI_Status *);
void cs_mpi_complete_testany_post(cs_mpi_call *, cs_mpi_reqs *, int, int, MPI_Request *, int *, int *, MPI_Status *);
MPI_Status *cs_mpi_complete_some_pre(cs_mpi_call *, cs_mpi_reqs *, int, MPI_Request *, int *, int *, MPI_Status *);
void cs_mpi_complete_some_post(cs_mpi_call *, cs_mpi_reqs *, int, int, MPI_Request *, int *, int *, MPI_Status *);

/* Apply mode's MPI engine (fuse/mpi_fuse.c), registered here by its
 * module when COLLSCOPE_FUSE is on, else NULL: the wrappers call it
 * through this table and never name it (mpi_fuse.h says what each does). */
typedef struct cs_mpi_fuse_ops {
    int (*iallreduce)(cs_mpi_call *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                      MPI_Comm comm, MPI_Request *request, int *rc);
    void (*flush_all)(void);
    void (*flush_comm)(MPI_Comm comm);
    void (*progress)(cs_mpi_call *c, int how, int n, MPI_Request *reqs);
    void (*finish)(void);             /* at MPI_Finalize: the engine's own requests completed */
    void (*close)(int op);            /* a guard window's call (op) returned (cs_mpi_fuse_close) */
    void (*comm_free)(MPI_Comm comm); /* MPI_Comm_free(comm) is about to run */
} cs_mpi_fuse_ops;
extern CS_INTERNAL const cs_mpi_fuse_ops *cs_mpi_fuse;
/* Members not yet started, and fused calls started but not completed
 * (kept by the engine; 0 while it is not registered). */
extern CS_INTERNAL int cs_mpi_fuse_npending, cs_mpi_fuse_nflight;
/* Communicators whose guard window ends at the next call that may wait
 * (fuse_guard.h): the flush hooks run while it is non-zero too. */
extern CS_INTERNAL int cs_mpi_fuse_armed;

/* How a completion call waits for the fused calls it names: block until
 * all (Wait, Waitall), poll (Test*), until one can complete (Waitany,
 * Waitsome). */
enum { CS_FUSE_BLOCK_ALL, CS_FUSE_POLL, CS_FUSE_BLOCK_ANY };

/* The wrappers' hooks. Called inside a traced call's span (so never from a
 * call the library or the tool makes itself): the fused call's span nests
 * in the call that started it, and that call's time includes the start. */
CS_HOT void cs_mpi_fuse_before_all(int x)
{
    if (CS_UNLIKELY(x && (cs_mpi_fuse_npending | cs_mpi_fuse_armed)))
        cs_mpi_fuse->flush_all();
}

CS_HOT void cs_mpi_fuse_before_comm(int x, MPI_Comm comm)
{
    if (CS_UNLIKELY(x && (cs_mpi_fuse_npending | cs_mpi_fuse_armed)))
        cs_mpi_fuse->flush_comm(comm);
}

/* MPI_Comm_free, before the real call: the engine completes what it
 * still has in flight on the communicator (the guard's votes). */
static inline void cs_mpi_fuse_before_free(int x, MPI_Comm comm)
{
    if (CS_UNLIKELY(x && cs_mpi_fuse && cs_mpi_fuse_timing))
        cs_mpi_fuse->comm_free(comm);
}

CS_HOT void cs_mpi_fuse_complete(cs_mpi_call *c, int x, int how, int n, MPI_Request *reqs)
{
    if (CS_UNLIKELY(x && cs_mpi_fuse_nflight))
        cs_mpi_fuse->progress(c, how, n, reqs);
}

#endif
