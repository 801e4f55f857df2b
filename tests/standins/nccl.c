/* nccl.c: a CPU stand-in for libnccl.so.2, for tests without a GPU. Never
 * installed; tests put its folder first on LD_LIBRARY_PATH.
 *
 * Buffers are host memory (see the cudart stand-in); collectives are
 * carried over MPI (the program must have initialised MPI, as nccl-tests
 * do to share the unique id), called through its PMPI_ names so that the
 * stand-in's own traffic is never traced, whatever the calling path. A communicator is an MPI communicator:
 * ncclCommInitRank splits MPI_COMM_WORLD by the unique id, ncclCommSplit
 * splits the parent. Work runs when it is enqueued, so every stream runs
 * in order; inside a group, sends and receives are posted and completed at
 * ncclGroupEnd. Reductions of 16-bit floats are not supported, of 8-bit
 * floats only max and min (compared by value; NaNs are not handled).
 *
 * Profiler plugins, as the real library loads them: the library named by
 * NCCL_PROFILER_PLUGIN is dlopen()ed at the first communicator, its
 * ncclProfiler_v5 (else, or with NCCL_STANDIN_PROFILER_V4=1, _v4)
 * initialised for each communicator, and each
 * collective gets a collective event with two or four kernel-channel
 * events (GPU "globaltimer" = CLOCK_REALTIME ns around the work).
 * AllReduce reports Tree/LL on 4 channels, the others Ring/Simple on 2.
 * As in NCCL, the collective event stops before its channels do, and the
 * events of grouped collectives come at ncclGroupEnd, largest count first.
 *
 * A stalled kernel (test-only): CS_STANDIN_STALL_RANK=R (a rank of
 * MPI_COMM_WORLD) and CS_STANDIN_STALL_AFTER=N (default 0) stall the
 * collective of sequence number N (the N+1th) of a communicator that has
 * rank R as a member (each such communicator's, whichever comes first on
 * a stream), as a GPU does whose kernel on rank R never finishes. On rank R the collective's stream stops before the collective
 * (its begin event, when one was recorded just before it, never
 * completes: its GPU work never starts); on every other member it stops
 * inside it (what was recorded before completes, nothing after): their
 * kernels wait for rank R forever, as a real NCCL collective's do (every
 * member's result needs every member's part, so none completes). The
 * calls return ncclSuccess at once, as NCCL's enqueue does; the work of
 * that collective and of everything enqueued after it on that stream
 * never runs (no MPI traffic, no profiler events), and the program's next
 * synchronization with the stream waits forever (see cudart.c). Inside a
 * group the stall takes effect at ncclGroupEnd, where the group's work
 * starts: none of the group's collectives completes (the stand-in ran
 * those before the stalled one, but sends no profiler events for them).
 *
 * A cost per allreduce (test-only, for apply mode's guard):
 * CS_STANDIN_ALLREDUCE_COST=US[:BYTES:US2] makes every ncclAllReduce take
 * US microseconds more, and one of more than BYTES bytes US2 more again
 * (a fixed cost per call makes fusing win; a cost over a size, fused
 * calls only, makes it lose). The time is spent where the work runs, at
 * enqueue (inside ncclGroupEnd for the engine's calls), outside the
 * profiler's events; CS_STANDIN_ALLREDUCE_GPU=COUNT:US adds US inside them
 * to every allreduce of exactly COUNT elements. */
#include <nccl.h>
#include <mpi.h>

#include "interpose/ncclprof.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SI_EXPORT __attribute__((visibility("default")))

#define SI_NFUNC 10
struct ncclComm {
    MPI_Comm mc;
    int rank, size;
    int stall_member;       /* the stalled rank is a member */
    uint64_t ncoll;         /* collectives issued on it (for the stall) */
    void *prof_ctx;         /* the profiler plugin's context */
    int prof_mask;          /* its activation mask */
    uint64_t seq[SI_NFUNC]; /* collectives per function (seqNumber) */
};

static __thread int si_depth;
static __thread MPI_Request *si_reqs;
static __thread int si_nreq, si_capreq;

/* ---- the stalled kernel ---- */
static struct {
    int on, rank, me;
    uint64_t after;
    void (*stall)(cudaStream_t, int);
    int (*stalled)(cudaStream_t);
} si_stall;
static __thread cudaStream_t si_grp_stall[16]; /* streams to stall at ncclGroupEnd */
static __thread int si_grp_nstall;

__attribute__((constructor)) static void si_stall_init(void)
{
    const char *r = getenv("CS_STANDIN_STALL_RANK"), *n = getenv("CS_STANDIN_STALL_AFTER");
    if (!r || !*r)
        return;
    si_stall.rank = atoi(r);
    si_stall.after = n && *n ? strtoull(n, NULL, 10) : 0;
    si_stall.stall = (void (*)(cudaStream_t, int))dlsym(RTLD_DEFAULT, "csStandinStreamStall");
    si_stall.stalled = (int (*)(cudaStream_t))dlsym(RTLD_DEFAULT, "csStandinStreamStalled");
    if (!si_stall.stall || !si_stall.stalled) {
        fprintf(stderr, "nccl stand-in: CS_STANDIN_STALL_RANK needs the cudart stand-in\n");
        return;
    }
    si_stall.on = 1;
}

/* Before a collective's work (or a send or receive's, collective 0):
 * 1 when it must not run (its stream is stalled, or it is the stalled
 * collective). */
static int si_stall_hit(ncclComm_t comm, cudaStream_t st, int collective)
{
    if (!si_stall.on)
        return 0;
    if (si_stall.stalled(st))
        return 1;
    for (int i = 0; i < si_grp_nstall; i++)
        if (si_grp_stall[i] == st)
            return 1;
    if (!collective || !comm || !comm->stall_member || comm->ncoll++ != si_stall.after)
        return 0;
    if (si_depth > 0 && si_grp_nstall < 16) {
        si_grp_stall[si_grp_nstall++] = st;
        return 1;
    }
    si_stall.stall(st, si_stall.me == si_stall.rank);
    return 1;
}

/* ncclGroupEnd: the group's work starts, and with it the stall. */
static void si_stall_group_end(void)
{
    for (int i = 0; i < si_grp_nstall; i++)
        si_stall.stall(si_grp_stall[i], si_stall.me == si_stall.rank);
    si_grp_nstall = 0;
}

SI_EXPORT ncclResult_t ncclGetVersion(int *v)
{
    *v = NCCL_VERSION_CODE;
    return ncclSuccess;
}
SI_EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
    return r == ncclSuccess ? "no error" : "stand-in error";
}
SI_EXPORT const char *ncclGetLastError(ncclComm_t c)
{
    (void)c;
    return "";
}

SI_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long v[3] = { (long)getpid(), ts.tv_sec, ts.tv_nsec };
    memcpy(id->internal, v, sizeof v);
    static int n;
    id->internal[sizeof v] = (char)++n;
    return ncclSuccess;
}

static int si_mpi_ready(void)
{
    int ok = 0;
    PMPI_Initialized(&ok);
    return ok;
}

/* ---- the profiler plugin ---- */
static struct {
    int tried;
    const cs_np_plugin_v5 *v5;
    const cs_np_plugin_v4 *v4;
} si_prof;

static void si_prof_load(void)
{
    if (si_prof.tried)
        return;
    si_prof.tried = 1;
    const char *name = getenv("NCCL_PROFILER_PLUGIN");
    if (!name || !*name)
        return;
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "nccl stand-in: NCCL_PROFILER_PLUGIN %s: %s\n", name, dlerror());
        return;
    }
    /* NCCL_STANDIN_PROFILER_V4=1: what a library that knows only v4 does. */
    const char *v4 = getenv("NCCL_STANDIN_PROFILER_V4");
    if (!v4 || strcmp(v4, "1") != 0)
        si_prof.v5 = dlsym(h, "ncclProfiler_v5");
    if (!si_prof.v5)
        si_prof.v4 = dlsym(h, "ncclProfiler_v4");
    if (!si_prof.v5 && !si_prof.v4)
        fprintf(stderr, "nccl stand-in: %s has no ncclProfiler_v5 or _v4\n", name);
}

static void si_prof_init(struct ncclComm *c)
{
    si_prof_load();
    uint64_t hash = (uint64_t)(uintptr_t)c;
    if (si_prof.v5)
        si_prof.v5->init(&c->prof_ctx, hash, &c->prof_mask, "", 1, c->size, c->rank, NULL);
    else if (si_prof.v4)
        si_prof.v4->init(&c->prof_ctx, &c->prof_mask, "", hash, 1, c->size, c->rank, NULL);
}

static ncclResult_t si_prof_start(void *ctx, void **h, uint64_t type, void *parent, int rank, const cs_np_coll *coll,
                                  const cs_np_kernel_ch *kch)
{
    if (si_prof.v5) {
        cs_np_descr_v5 d;
        memset(&d, 0, sizeof d);
        d.type = type;
        d.parentObj = parent;
        d.rank = rank;
        if (coll)
            d.coll = *coll;
        else
            d.kernelCh = *kch;
        return si_prof.v5->startEvent(ctx, h, &d);
    }
    cs_np_descr_v4 d;
    memset(&d, 0, sizeof d);
    d.type = (uint8_t)type;
    d.parentObj = parent;
    d.rank = rank;
    if (coll)
        d.coll = *coll;
    else
        d.kernelCh = *kch;
    return si_prof.v4->startEvent(ctx, h, &d);
}

static uint64_t si_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One collective's events: described at the call, sent when it ran (or,
 * grouped, at ncclGroupEnd). */
typedef struct si_pev {
    struct ncclComm *comm;
    cs_np_coll d;
    uint64_t t0, t1;
} si_pev;

enum {
    SI_F_ALLREDUCE,
    SI_F_BROADCAST,
    SI_F_REDUCE,
    SI_F_ALLGATHER,
    SI_F_REDUCESCATTER,
    SI_F_ALLTOALL,
    SI_F_GATHER,
    SI_F_SCATTER
};
static const char *const si_func_names[SI_NFUNC] = {
    "AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AlltoAll", "Gather", "Scatter",
};
static const char *const si_dt_names[] = {
    "ncclInt8",   "ncclUint8",   "ncclInt32",   "ncclUint32",  "ncclInt64",
    "ncclUint64", "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16",
};

static void si_pev_send(si_pev *p)
{
    struct ncclComm *c = p->comm;
    ncclResult_t (*stop)(void *) = si_prof.v5 ? si_prof.v5->stopEvent : si_prof.v4->stopEvent;
    ncclResult_t (*state)(void *, int, cs_np_state_args *) =
        si_prof.v5 ? si_prof.v5->recordEventState : si_prof.v4->recordEventState;
    void *coll = NULL, *ch[4] = { 0 };
    si_prof_start(c->prof_ctx, &coll, CS_NP_COLL, NULL, c->rank, &p->d, NULL);
    if (c->prof_mask & CS_NP_KERNEL_CH)
        for (int i = 0; i < p->d.nChannels && i < 4; i++) {
            cs_np_kernel_ch k = { .channelId = (uint8_t)i, .pTimer = p->t0 + (uint64_t)i * 100 };
            si_prof_start(c->prof_ctx, &ch[i], CS_NP_KERNEL_CH, coll, c->rank, NULL, &k);
        }
    if (coll)
        stop(coll);
    for (int i = 0; i < 4; i++)
        if (ch[i]) {
            cs_np_state_args a;
            memset(&a, 0, sizeof a);
            a.kernelCh.pTimer = p->t1 - (uint64_t)i * 100;
            state(ch[i], CS_NP_STATE_KERNEL_CH_STOP, &a);
            stop(ch[i]);
        }
}

static __thread si_pev *si_grp_ev;
static __thread int si_grp_nev, si_grp_capev;

/* Before a collective's work: 1 if the plugin wants its events. */
static int si_prof_begin(si_pev *p, ncclComm_t comm, int func, size_t count, ncclDataType_t t, int root)
{
    if (!comm->prof_ctx || !(comm->prof_mask & CS_NP_COLL))
        return 0;
    int tree = func == SI_F_ALLREDUCE;
    p->comm = comm;
    memset(&p->d, 0, sizeof p->d);
    p->d.seqNumber = comm->seq[func]++;
    p->d.func = si_func_names[func];
    p->d.count = count;
    p->d.root = root;
    p->d.datatype = (int)t >= 0 && (int)t < (int)(sizeof si_dt_names / sizeof *si_dt_names) ? si_dt_names[t] : "other";
    p->d.nChannels = tree ? 4 : 2;
    p->d.nWarps = 16;
    p->d.algo = tree ? "Tree" : "Ring";
    p->d.proto = tree ? "LL" : "Simple";
    p->t0 = si_now_ns();
    return 1;
}

/* After it: the events now, or at the end of the group. */
static void si_prof_end(si_pev *p, int on)
{
    if (!on)
        return;
    p->t1 = si_now_ns();
    if (si_depth == 0) {
        si_pev_send(p);
        return;
    }
    if (si_grp_nev == si_grp_capev) {
        int cap = si_grp_capev ? si_grp_capev * 2 : 16;
        si_pev *np = realloc(si_grp_ev, (size_t)cap * sizeof *np);
        if (!np)
            return;
        si_grp_ev = np;
        si_grp_capev = cap;
    }
    si_grp_ev[si_grp_nev++] = *p;
}

/* ncclGroupEnd: the group's collectives, largest count first (stable). */
static void si_prof_group_end(void)
{
    for (int i = 1; i < si_grp_nev; i++) {
        si_pev v = si_grp_ev[i];
        int j = i;
        while (j > 0 && si_grp_ev[j - 1].d.count < v.d.count) {
            si_grp_ev[j] = si_grp_ev[j - 1];
            j--;
        }
        si_grp_ev[j] = v;
    }
    for (int i = 0; i < si_grp_nev; i++)
        si_pev_send(&si_grp_ev[i]);
    si_grp_nev = 0;
}

static ncclResult_t si_new(MPI_Comm mc, ncclComm_t *out)
{
    if (mc == MPI_COMM_NULL) {
        *out = NULL;
        return ncclSuccess;
    }
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    c->mc = mc;
    PMPI_Comm_rank(mc, &c->rank);
    PMPI_Comm_size(mc, &c->size);
    if (si_stall.on) {
        MPI_Group wg, g;
        int in = MPI_UNDEFINED;
        PMPI_Comm_rank(MPI_COMM_WORLD, &si_stall.me);
        PMPI_Comm_group(MPI_COMM_WORLD, &wg);
        PMPI_Comm_group(mc, &g);
        PMPI_Group_translate_ranks(wg, 1, &si_stall.rank, g, &in);
        PMPI_Group_free(&g);
        PMPI_Group_free(&wg);
        c->stall_member = in != MPI_UNDEFINED;
    }
    si_prof_init(c);
    *out = c;
    return ncclSuccess;
}

SI_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
        return ncclInvalidArgument;
    if (!si_mpi_ready())
        return ncclInvalidUsage;
    unsigned h = 2166136261u;
    for (size_t i = 0; i < sizeof id.internal; i++)
        h = (h ^ (unsigned char)id.internal[i]) * 16777619u;
    MPI_Comm mc;
    if (PMPI_Comm_split(MPI_COMM_WORLD, (int)(h & 0x3fffffff), rank, &mc) != MPI_SUCCESS)
        return ncclSystemError;
    int n = 0;
    PMPI_Comm_size(mc, &n);
    if (n != nranks) {
        PMPI_Comm_free(&mc);
        return ncclInvalidUsage;
    }
    return si_new(mc, comm);
}

SI_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                              ncclConfig_t *cfg)
{
    (void)cfg;
    return ncclCommInitRank(comm, nranks, id, rank);
}

SI_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nid, ncclUniqueId *ids,
                                                ncclConfig_t *cfg)
{
    (void)cfg;
    if (nid < 1 || !ids)
        return ncclInvalidArgument;
    return ncclCommInitRank(comm, nranks, ids[0], rank);
}

SI_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    (void)devlist;
    if (ndev != 1 || !si_mpi_ready())
        return ncclInvalidUsage; /* one host "device" */
    MPI_Comm mc;
    PMPI_Comm_dup(MPI_COMM_SELF, &mc);
    return si_new(mc, &comms[0]);
}

SI_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *cfg)
{
    (void)cfg;
    if (!comm || !newcomm)
        return ncclInvalidArgument;
    MPI_Comm mc;
    if (PMPI_Comm_split(comm->mc, color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key, &mc) != MPI_SUCCESS)
        return ncclSystemError;
    return si_new(mc, newcomm);
}

SI_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excl, int nexcl, ncclComm_t *newcomm, ncclConfig_t *cfg,
                                      int flags)
{
    (void)cfg;
    (void)flags;
    if (!comm || !newcomm)
        return ncclInvalidArgument;
    int out = 0;
    for (int i = 0; i < nexcl; i++)
        out |= excl[i] == comm->rank;
    MPI_Comm mc;
    if (PMPI_Comm_split(comm->mc, out ? MPI_UNDEFINED : 0, comm->rank, &mc) != MPI_SUCCESS)
        return ncclSystemError;
    return si_new(mc, newcomm);
}

SI_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    return comm ? ncclSuccess : ncclInvalidArgument;
}
SI_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclInvalidArgument;
    if (comm->prof_ctx)
        si_prof.v5 ? si_prof.v5->finalize(comm->prof_ctx) : si_prof.v4->finalize(comm->prof_ctx);
    if (si_mpi_ready())
        PMPI_Comm_free(&comm->mc);
    free(comm);
    return ncclSuccess;
}
SI_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    return ncclCommDestroy(comm);
}
SI_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *e)
{
    (void)comm;
    *e = ncclSuccess;
    return ncclSuccess;
}
SI_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *n)
{
    if (!comm)
        return ncclInvalidArgument;
    *n = comm->size;
    return ncclSuccess;
}
SI_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *r)
{
    if (!comm)
        return ncclInvalidArgument;
    *r = comm->rank;
    return ncclSuccess;
}
SI_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *d)
{
    (void)comm;
    *d = 0;
    return ncclSuccess;
}

/* ---- collectives over MPI ---- */
static MPI_Datatype si_dt(ncclDataType_t t, size_t *size)
{
    switch (t) {
    case ncclInt8: *size = 1; return MPI_INT8_T;
    case ncclUint8: *size = 1; return MPI_UINT8_T;
    case ncclInt32: *size = 4; return MPI_INT32_T;
    case ncclUint32: *size = 4; return MPI_UINT32_T;
    case ncclInt64: *size = 8; return MPI_INT64_T;
    case ncclUint64: *size = 8; return MPI_UINT64_T;
    case ncclFloat32: *size = 4; return MPI_FLOAT;
    case ncclFloat64: *size = 8; return MPI_DOUBLE;
    case ncclFloat16:
    case ncclBfloat16: *size = 2; return MPI_DATATYPE_NULL;
    default: *size = 1; return MPI_DATATYPE_NULL;
    }
}

/* Moves without reduction take any type as bytes. */
static MPI_Datatype si_move_dt(ncclDataType_t t, size_t *count)
{
    size_t sz;
    MPI_Datatype d = si_dt(t, &sz);
    if (d != MPI_DATATYPE_NULL)
        return d;
    *count *= sz;
    return MPI_BYTE;
}

static MPI_Op si_op(ncclRedOp_t op)
{
    switch (op) {
    case ncclSum:
    case ncclAvg: return MPI_SUM;
    case ncclProd: return MPI_PROD;
    case ncclMax: return MPI_MAX;
    case ncclMin: return MPI_MIN;
    default: return MPI_OP_NULL;
    }
}

static void si_avg(void *buf, size_t count, ncclDataType_t t, int n)
{
    if (t == ncclFloat32)
        for (size_t i = 0; i < count; i++)
            ((float *)buf)[i] /= (float)n;
    else if (t == ncclFloat64)
        for (size_t i = 0; i < count; i++)
            ((double *)buf)[i] /= n;
}

#define SI_CHECK(comm, count)           \
    do {                                \
        if (!(comm))                    \
            return ncclInvalidArgument; \
        if ((count) > 0x7fffffff)       \
            return ncclInvalidArgument; \
    } while (0)

/* 8-bit floats are sign and magnitude: order them by value. */
static int si_f8_key(unsigned char b)
{
    return b & 0x80 ? -(int)(b & 0x7f) : (int)(b & 0x7f);
}
static void si_f8_max(void *in, void *io, int *len, MPI_Datatype *d)
{
    (void)d;
    unsigned char *a = in, *b = io;
    for (int i = 0; i < *len; i++)
        if (si_f8_key(a[i]) > si_f8_key(b[i]))
            b[i] = a[i];
}
static void si_f8_min(void *in, void *io, int *len, MPI_Datatype *d)
{
    (void)d;
    unsigned char *a = in, *b = io;
    for (int i = 0; i < *len; i++)
        if (si_f8_key(a[i]) < si_f8_key(b[i]))
            b[i] = a[i];
}
static MPI_Op si_f8_op(ncclRedOp_t op)
{
    static MPI_Op ops[2] = { MPI_OP_NULL, MPI_OP_NULL };
    int i = op == ncclMax ? 0 : op == ncclMin ? 1 : -1;
    if (i < 0)
        return MPI_OP_NULL;
    if (ops[i] == MPI_OP_NULL && PMPI_Op_create(i == 0 ? si_f8_max : si_f8_min, 1, &ops[i]) != MPI_SUCCESS)
        return MPI_OP_NULL;
    return ops[i];
}

static ncclResult_t si_allreduce(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                 ncclComm_t comm, cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    size_t sz;
    MPI_Datatype d = si_dt(t, &sz);
    MPI_Op mop = si_op(op);
    if (t == ncclFloat8e4m3 || t == ncclFloat8e5m2) {
        d = MPI_BYTE;
        mop = si_f8_op(op);
    }
    if (d == MPI_DATATYPE_NULL || mop == MPI_OP_NULL)
        return ncclInvalidArgument;
    if (PMPI_Allreduce(s == r ? MPI_IN_PLACE : s, r, (int)count, d, mop, comm->mc) != MPI_SUCCESS)
        return ncclSystemError;
    if (op == ncclAvg)
        si_avg(r, count, t, comm->size);
    return ncclSuccess;
}

static ncclResult_t si_reduce(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op, int root,
                              ncclComm_t comm, cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    size_t sz;
    MPI_Datatype d = si_dt(t, &sz);
    if (d == MPI_DATATYPE_NULL || si_op(op) == MPI_OP_NULL)
        return ncclInvalidArgument;
    const void *sb = s == r && comm->rank == root ? MPI_IN_PLACE : s;
    if (PMPI_Reduce(sb, r, (int)count, d, si_op(op), root, comm->mc) != MPI_SUCCESS)
        return ncclSystemError;
    if (op == ncclAvg && comm->rank == root)
        si_avg(r, count, t, comm->size);
    return ncclSuccess;
}

static ncclResult_t si_broadcast(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                                 cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    if (comm->rank == root && s != r) {
        int sz;
        PMPI_Type_size(d, &sz);
        memmove(r, s, count * (size_t)sz);
    }
    return PMPI_Bcast(r, (int)count, d, root, comm->mc) == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

SI_EXPORT ncclResult_t ncclBcast(void *b, size_t count, ncclDataType_t t, int root, ncclComm_t comm, cudaStream_t st)
{
    return ncclBroadcast(b, b, count, t, root, comm, st);
}

static ncclResult_t si_allgather(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t comm,
                                 cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    int sz;
    PMPI_Type_size(d, &sz);
    const void *sb = (const char *)r + (size_t)comm->rank * count * (size_t)sz == s ? MPI_IN_PLACE : s;
    return PMPI_Allgather(sb, (int)count, d, r, (int)count, d, comm->mc) == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

static ncclResult_t si_reducescatter(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                     ncclComm_t comm, cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    size_t sz;
    MPI_Datatype d = si_dt(t, &sz);
    if (d == MPI_DATATYPE_NULL || si_op(op) == MPI_OP_NULL)
        return ncclInvalidArgument;
    void *tmp = malloc(count * sz * (size_t)comm->size);
    if (!tmp)
        return ncclSystemError;
    memcpy(tmp, s, count * sz * (size_t)comm->size);
    int rc = PMPI_Reduce_scatter_block(tmp, r, (int)count, d, si_op(op), comm->mc);
    free(tmp);
    if (op == ncclAvg)
        si_avg(r, count, t, comm->size);
    return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

static ncclResult_t si_alltoall(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t comm,
                                cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    int sz;
    PMPI_Type_size(d, &sz);
    size_t n = count * (size_t)sz * (size_t)comm->size;
    void *tmp = malloc(n ? n : 1);
    if (!tmp)
        return ncclSystemError;
    memcpy(tmp, s, n);
    int rc = PMPI_Alltoall(tmp, (int)count, d, r, (int)count, d, comm->mc);
    free(tmp);
    return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

static ncclResult_t si_gather(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                              cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    return PMPI_Gather(s, (int)count, d, r, (int)count, d, root, comm->mc) == MPI_SUCCESS ? ncclSuccess
                                                                                          : ncclSystemError;
}

static ncclResult_t si_scatter(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                               cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    return PMPI_Scatter(s, (int)count, d, r, (int)count, d, root, comm->mc) == MPI_SUCCESS ? ncclSuccess
                                                                                           : ncclSystemError;
}

/* The exported collectives: the work, inside the profiler's events. */
/* ---- the cost per allreduce ---- */
static struct {
    long us, over, us2;
} si_cost;

__attribute__((constructor)) static void si_cost_init(void)
{
    const char *v = getenv("CS_STANDIN_ALLREDUCE_COST");
    if (v && *v && sscanf(v, "%ld:%ld:%ld", &si_cost.us, &si_cost.over, &si_cost.us2) < 1)
        fprintf(stderr, "nccl stand-in: CS_STANDIN_ALLREDUCE_COST=%s is not US[:BYTES:US2]; no cost\n", v);
}

/* CS_STANDIN_ALLREDUCE_GPU=COUNT:US: an allreduce of exactly COUNT
 * elements spends US microseconds inside its work, so the profiler
 * plugin's GPU times of that call hold them (the guard's vote, 3 int64,
 * told from the program's calls in tests/nccl/fuse_prof.sh). */
static struct {
    long count, us;
} si_gpu_cost;

__attribute__((constructor)) static void si_gpu_cost_init(void)
{
    const char *v = getenv("CS_STANDIN_ALLREDUCE_GPU");
    if (v && *v && sscanf(v, "%ld:%ld", &si_gpu_cost.count, &si_gpu_cost.us) != 2)
        fprintf(stderr, "nccl stand-in: CS_STANDIN_ALLREDUCE_GPU=%s is not COUNT:US; no cost\n", v);
}

static void si_gpu_cost_pay(size_t count)
{
    if (si_gpu_cost.us <= 0 || count != (size_t)si_gpu_cost.count)
        return;
    struct timespec ts = { si_gpu_cost.us / 1000000, (si_gpu_cost.us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void si_cost_pay(size_t count, ncclDataType_t t)
{
    size_t sz = 0;
    si_dt(t, &sz);
    long us = si_cost.us + (si_cost.us2 > 0 && count * sz > (size_t)si_cost.over ? si_cost.us2 : 0);
    if (us <= 0)
        return;
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

SI_EXPORT ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                     ncclComm_t comm, cudaStream_t st)
{
    if (si_stall_hit(comm, st, 1))
        return comm ? ncclSuccess : ncclInvalidArgument;
    si_cost_pay(count, t);
    si_pev pe;
    int on = comm && si_prof_begin(&pe, comm, SI_F_ALLREDUCE, count, t, -1);
    si_gpu_cost_pay(count);
    ncclResult_t rc = si_allreduce(s, r, count, t, op, comm, st);
    si_prof_end(&pe, on && rc == ncclSuccess);
    return rc;
}

SI_EXPORT ncclResult_t ncclReduce(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op, int root,
                                  ncclComm_t comm, cudaStream_t st)
{
    if (si_stall_hit(comm, st, 1))
        return comm ? ncclSuccess : ncclInvalidArgument;
    si_pev pe;
    int on = comm && si_prof_begin(&pe, comm, SI_F_REDUCE, count, t, root);
    ncclResult_t rc = si_reduce(s, r, count, t, op, root, comm, st);
    si_prof_end(&pe, on && rc == ncclSuccess);
    return rc;
}

SI_EXPORT ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                                     cudaStream_t st)
{
    if (si_stall_hit(comm, st, 1))
        return comm ? ncclSuccess : ncclInvalidArgument;
    si_pev pe;
    int on = comm && si_prof_begin(&pe, comm, SI_F_BROADCAST, count, t, root);
    ncclResult_t rc = si_broadcast(s, r, count, t, root, comm, st);
    si_prof_end(&pe, on && rc == ncclSuccess);
    return rc;
}

SI_EXPORT ncclResult_t ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t comm,
                                     cudaStream_t st)
{
    if (si_stall_hit(comm, st, 1))
        return comm ? ncclSuccess : ncclInvalidArgument;
    si_pev pe;
    int on = comm && si_prof_begin(&pe, comm, SI_F_ALLGATHER, count, t, -1);
    ncclResult_t rc = si_allgather(s, r, count, t, comm, st);
    si_prof_end(&pe, on && rc == ncclSuccess);
    return rc;
}

SI_EXPORT ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                         ncclComm_t comm, cudaStream_t st)
{
    if (si_stall_hit(comm, st, 1))
        return comm ? ncclSuccess : ncclInvalidArgument;
    si_pev pe;
    int on = comm && si_prof_begin(&pe, comm, SI_F_REDUCESCATTER, count, t, -1);
    ncclResult_t rc = si_reducescatter(s, r, count, t, op, comm, st);
    si_prof_end(&pe, on && rc == ncclSuccess);
    return rc;
}

SI_EXPORT ncclResult_t ncclAlltoAll(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t comm,
                                    cudaStream_t st)
{
    if (si_stall_hit(comm, st, 1))
        return comm ? ncclSuccess : ncclInvalidArgument;
    si_pev pe;
    int on = comm && si_prof_begin(&pe, comm, SI_F_ALLTOALL, count, t, -1);
    ncclResult_t rc = si_alltoall(s, r, count, t, comm, st);
    si_prof_end(&pe, on && rc == ncclSuccess);
    return rc;
}

SI_EXPORT ncclResult_t ncclGather(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                                  cudaStream_t st)
{
    if (si_stall_hit(comm, st, 1))
        return comm ? ncclSuccess : ncclInvalidArgument;
    si_pev pe;
    int on = comm && si_prof_begin(&pe, comm, SI_F_GATHER, count, t, root);
    ncclResult_t rc = si_gather(s, r, count, t, root, comm, st);
    si_prof_end(&pe, on && rc == ncclSuccess);
    return rc;
}

SI_EXPORT ncclResult_t ncclScatter(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                                   cudaStream_t st)
{
    if (si_stall_hit(comm, st, 1))
        return comm ? ncclSuccess : ncclInvalidArgument;
    si_pev pe;
    int on = comm && si_prof_begin(&pe, comm, SI_F_SCATTER, count, t, root);
    ncclResult_t rc = si_scatter(s, r, count, t, root, comm, st);
    si_prof_end(&pe, on && rc == ncclSuccess);
    return rc;
}

/* ---- point to point and groups ---- */
static ncclResult_t si_p2p(int send, void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm)
{
    SI_CHECK(comm, count);
    if (peer < 0 || peer >= comm->size)
        return ncclInvalidArgument;
    MPI_Datatype d = si_move_dt(t, &count);
    if (si_depth == 0) {
        int rc = send ? PMPI_Send(buf, (int)count, d, peer, 0x4e43, comm->mc)
                      : PMPI_Recv(buf, (int)count, d, peer, 0x4e43, comm->mc, MPI_STATUS_IGNORE);
        return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
    }
    if (si_nreq == si_capreq) {
        si_capreq = si_capreq ? si_capreq * 2 : 16;
        MPI_Request *np = realloc(si_reqs, (size_t)si_capreq * sizeof *np);
        if (!np)
            return ncclSystemError;
        si_reqs = np;
    }
    int rc = send ? PMPI_Isend(buf, (int)count, d, peer, 0x4e43, comm->mc, &si_reqs[si_nreq])
                  : PMPI_Irecv(buf, (int)count, d, peer, 0x4e43, comm->mc, &si_reqs[si_nreq]);
    if (rc != MPI_SUCCESS)
        return ncclSystemError;
    si_nreq++;
    return ncclSuccess;
}

SI_EXPORT ncclResult_t ncclSend(const void *b, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                                cudaStream_t st)
{
    if (si_stall_hit(comm, st, 0))
        return ncclSuccess;
    return si_p2p(1, (void *)b, count, t, peer, comm);
}

SI_EXPORT ncclResult_t ncclRecv(void *b, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st)
{
    if (si_stall_hit(comm, st, 0))
        return ncclSuccess;
    return si_p2p(0, b, count, t, peer, comm);
}

SI_EXPORT ncclResult_t ncclGroupStart(void)
{
    si_depth++;
    return ncclSuccess;
}

SI_EXPORT ncclResult_t ncclGroupEnd(void)
{
    if (si_depth == 0)
        return ncclInvalidUsage;
    if (--si_depth > 0)
        return ncclSuccess;
    int rc = si_nreq ? PMPI_Waitall(si_nreq, si_reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    si_nreq = 0;
    if (si_grp_nstall)
        si_grp_nev = 0; /* the group's work never completes: no events */
    si_prof_group_end();
    if (si_stall.on)
        si_stall_group_end();
    return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}
