/* nccl.c: a CPU stand-in for libnccl.so.2, for tests without a GPU. Never
 * installed; tests put its folder first on LD_LIBRARY_PATH.
 *
 * Buffers are host memory (see the cudart stand-in); collectives are
 * carried over MPI (the program must have initialised MPI, as nccl-tests
 * do to share the unique id). A communicator is an MPI communicator:
 * ncclCommInitRank splits MPI_COMM_WORLD by the unique id, ncclCommSplit
 * splits the parent. Work runs when it is enqueued, so every stream runs
 * in order; inside a group, sends and receives are posted and completed at
 * ncclGroupEnd. Reductions of 16-bit and 8-bit floats are not supported. */
#include <nccl.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SI_EXPORT __attribute__((visibility("default")))

struct ncclComm { MPI_Comm mc; int rank, size; };

static __thread int si_depth;
static __thread MPI_Request *si_reqs;
static __thread int si_nreq, si_capreq;

SI_EXPORT ncclResult_t ncclGetVersion(int *v) { *v = NCCL_VERSION_CODE; return ncclSuccess; }
SI_EXPORT const char *ncclGetErrorString(ncclResult_t r) { return r == ncclSuccess ? "no error" : "stand-in error"; }
SI_EXPORT const char *ncclGetLastError(ncclComm_t c) { (void)c; return ""; }

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
    MPI_Initialized(&ok);
    return ok;
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
    MPI_Comm_rank(mc, &c->rank);
    MPI_Comm_size(mc, &c->size);
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
    if (MPI_Comm_split(MPI_COMM_WORLD, (int)(h & 0x3fffffff), rank, &mc) != MPI_SUCCESS)
        return ncclSystemError;
    int n = 0;
    MPI_Comm_size(mc, &n);
    if (n != nranks) {
        MPI_Comm_free(&mc);
        return ncclInvalidUsage;
    }
    return si_new(mc, comm);
}

SI_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *cfg)
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
    MPI_Comm_dup(MPI_COMM_SELF, &mc);
    return si_new(mc, &comms[0]);
}

SI_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *cfg)
{
    (void)cfg;
    if (!comm || !newcomm)
        return ncclInvalidArgument;
    MPI_Comm mc;
    if (MPI_Comm_split(comm->mc, color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key, &mc) != MPI_SUCCESS)
        return ncclSystemError;
    return si_new(mc, newcomm);
}

SI_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excl, int nexcl, ncclComm_t *newcomm, ncclConfig_t *cfg,
                                      int flags)
{
    (void)cfg; (void)flags;
    if (!comm || !newcomm)
        return ncclInvalidArgument;
    int out = 0;
    for (int i = 0; i < nexcl; i++)
        out |= excl[i] == comm->rank;
    MPI_Comm mc;
    if (MPI_Comm_split(comm->mc, out ? MPI_UNDEFINED : 0, comm->rank, &mc) != MPI_SUCCESS)
        return ncclSystemError;
    return si_new(mc, newcomm);
}

SI_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) { return comm ? ncclSuccess : ncclInvalidArgument; }
SI_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclInvalidArgument;
    if (si_mpi_ready())
        MPI_Comm_free(&comm->mc);
    free(comm);
    return ncclSuccess;
}
SI_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) { return ncclCommDestroy(comm); }
SI_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *e) { (void)comm; *e = ncclSuccess; return ncclSuccess; }
SI_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *n) { if (!comm) return ncclInvalidArgument; *n = comm->size; return ncclSuccess; }
SI_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *r) { if (!comm) return ncclInvalidArgument; *r = comm->rank; return ncclSuccess; }
SI_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *d) { (void)comm; *d = 0; return ncclSuccess; }

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
    case ncclFloat16: case ncclBfloat16: *size = 2; return MPI_DATATYPE_NULL;
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
    case ncclSum: case ncclAvg: return MPI_SUM;
    case ncclProd: return MPI_PROD;
    case ncclMax: return MPI_MAX;
    case ncclMin: return MPI_MIN;
    default: return MPI_OP_NULL;
    }
}

static void si_avg(void *buf, size_t count, ncclDataType_t t, int n)
{
    if (t == ncclFloat32)
        for (size_t i = 0; i < count; i++) ((float *)buf)[i] /= (float)n;
    else if (t == ncclFloat64)
        for (size_t i = 0; i < count; i++) ((double *)buf)[i] /= n;
}

#define SI_CHECK(comm, count) \
    do { if (!(comm)) return ncclInvalidArgument; if ((count) > 0x7fffffff) return ncclInvalidArgument; } while (0)

SI_EXPORT ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                     ncclComm_t comm, cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    size_t sz;
    MPI_Datatype d = si_dt(t, &sz);
    if (d == MPI_DATATYPE_NULL || si_op(op) == MPI_OP_NULL)
        return ncclInvalidArgument;
    if (MPI_Allreduce(s == r ? MPI_IN_PLACE : s, r, (int)count, d, si_op(op), comm->mc) != MPI_SUCCESS)
        return ncclSystemError;
    if (op == ncclAvg)
        si_avg(r, count, t, comm->size);
    return ncclSuccess;
}

SI_EXPORT ncclResult_t ncclReduce(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op, int root,
                                  ncclComm_t comm, cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    size_t sz;
    MPI_Datatype d = si_dt(t, &sz);
    if (d == MPI_DATATYPE_NULL || si_op(op) == MPI_OP_NULL)
        return ncclInvalidArgument;
    const void *sb = s == r && comm->rank == root ? MPI_IN_PLACE : s;
    if (MPI_Reduce(sb, r, (int)count, d, si_op(op), root, comm->mc) != MPI_SUCCESS)
        return ncclSystemError;
    if (op == ncclAvg && comm->rank == root)
        si_avg(r, count, t, comm->size);
    return ncclSuccess;
}

SI_EXPORT ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t t, int root,
                                     ncclComm_t comm, cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    if (comm->rank == root && s != r) {
        int sz;
        MPI_Type_size(d, &sz);
        memmove(r, s, count * (size_t)sz);
    }
    return MPI_Bcast(r, (int)count, d, root, comm->mc) == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

SI_EXPORT ncclResult_t ncclBcast(void *b, size_t count, ncclDataType_t t, int root, ncclComm_t comm, cudaStream_t st)
{
    return ncclBroadcast(b, b, count, t, root, comm, st);
}

SI_EXPORT ncclResult_t ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t comm,
                                     cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    int sz;
    MPI_Type_size(d, &sz);
    const void *sb = (const char *)r + (size_t)comm->rank * count * (size_t)sz == s ? MPI_IN_PLACE : s;
    return MPI_Allgather(sb, (int)count, d, r, (int)count, d, comm->mc) == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

SI_EXPORT ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op,
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
    int rc = MPI_Reduce_scatter_block(tmp, r, (int)count, d, si_op(op), comm->mc);
    free(tmp);
    if (op == ncclAvg)
        si_avg(r, count, t, comm->size);
    return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

SI_EXPORT ncclResult_t ncclAlltoAll(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t comm,
                                    cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    int sz;
    MPI_Type_size(d, &sz);
    size_t n = count * (size_t)sz * (size_t)comm->size;
    void *tmp = malloc(n ? n : 1);
    if (!tmp)
        return ncclSystemError;
    memcpy(tmp, s, n);
    int rc = MPI_Alltoall(tmp, (int)count, d, r, (int)count, d, comm->mc);
    free(tmp);
    return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

SI_EXPORT ncclResult_t ncclGather(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                                  cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    return MPI_Gather(s, (int)count, d, r, (int)count, d, root, comm->mc) == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

SI_EXPORT ncclResult_t ncclScatter(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                                   cudaStream_t st)
{
    (void)st;
    SI_CHECK(comm, count);
    MPI_Datatype d = si_move_dt(t, &count);
    return MPI_Scatter(s, (int)count, d, r, (int)count, d, root, comm->mc) == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

/* ---- point to point and groups ---- */
static ncclResult_t si_p2p(int send, void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm)
{
    SI_CHECK(comm, count);
    if (peer < 0 || peer >= comm->size)
        return ncclInvalidArgument;
    MPI_Datatype d = si_move_dt(t, &count);
    if (si_depth == 0) {
        int rc = send ? MPI_Send(buf, (int)count, d, peer, 0x4e43, comm->mc)
                      : MPI_Recv(buf, (int)count, d, peer, 0x4e43, comm->mc, MPI_STATUS_IGNORE);
        return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
    }
    if (si_nreq == si_capreq) {
        si_capreq = si_capreq ? si_capreq * 2 : 16;
        MPI_Request *np = realloc(si_reqs, (size_t)si_capreq * sizeof *np);
        if (!np)
            return ncclSystemError;
        si_reqs = np;
    }
    int rc = send ? MPI_Isend(buf, (int)count, d, peer, 0x4e43, comm->mc, &si_reqs[si_nreq])
                  : MPI_Irecv(buf, (int)count, d, peer, 0x4e43, comm->mc, &si_reqs[si_nreq]);
    if (rc != MPI_SUCCESS)
        return ncclSystemError;
    si_nreq++;
    return ncclSuccess;
}

SI_EXPORT ncclResult_t ncclSend(const void *b, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st)
{
    (void)st;
    return si_p2p(1, (void *)b, count, t, peer, comm);
}

SI_EXPORT ncclResult_t ncclRecv(void *b, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st)
{
    (void)st;
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
    int rc = si_nreq ? MPI_Waitall(si_nreq, si_reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    si_nreq = 0;
    return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}
