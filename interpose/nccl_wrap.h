/* nccl_wrap.h: NCCL communicators, sequence numbers and groups for the
 * generated NCCL wrappers (interpose/nccl.spec).
 *
 * Job-wide communicator ids, agreed by every member with no communication:
 *   ncclCommInitRank*: a hash of the ncclUniqueId bytes (all members pass
 *     the same id); InitRankScalable hashes all its ids;
 *   ncclCommInitAll: the device list and how many InitAll calls came before;
 *   ncclCommSplit/Shrink: the parent's id, the number of splits made on the
 *     parent before it, and the color (Shrink: color -1).
 * Process-local indices of NCCL communicators start at 0x8000, above the
 * MPI wrappers' (the two families share the span's 16-bit comm field). */
#ifndef CS_NCCL_WRAP_H
#define CS_NCCL_WRAP_H

#include <nccl.h>

#include "interpose/gpu_wrap.h"
#include "interpose/gputime.h"
#include "libtrace/dtypes.h"

#define CS_NCCL_LOCAL_BASE 0x8000u

extern CS_INTERNAL void *cs_nccl_real_fns[CS_OP_COUNT];
/* The real functions' names, from nccl.spec (the generated wrappers). */
extern CS_INTERNAL const char *const cs_nccl_real_names[CS_OP_COUNT];
void *cs_nccl_resolve(int op);
int cs_nccl_missing(int op);

static inline void *cs_nccl_real(int op)
{
    void *f = __atomic_load_n(&cs_nccl_real_fns[op], __ATOMIC_RELAXED);
    return CS_LIKELY(f != NULL) ? f : cs_nccl_resolve(op);
}

typedef struct cs_nccl_comm {
    uint64_t key;   /* ncclComm_t bits; 0 once destroyed */
    uint64_t id;    /* job-wide id */
    uint32_t local; /* index used in span records */
    uint32_t size;
    int32_t rank;
    uint32_t seq;    /* collectives issued so far (atomic) */
    uint32_t splits; /* ncclCommSplit/Shrink calls on it (atomic) */
    uint32_t fused;  /* fused calls the fusion engine issued on it (atomic;
                             the last id, see nccl_fuse.h) */
    void *ext;       /* apply mode's state for it: cs_nccl_comm_extra zeroed
                        bytes in the record's own allocation, or NULL */
} cs_nccl_comm;

/* Bytes of state apply mode's guard keeps with every NCCL communicator
 * (set by its module at start, before any communicator is known), in the
 * same allocation as the record: every rank that knows a communicator
 * has them (docs/fusion.md, "Every rank tracks every communicator"). */
extern CS_INTERNAL size_t cs_nccl_comm_extra;

cs_nccl_comm *cs_nccl_comm_find(ncclComm_t comm);
extern CS_INTERNAL __thread cs_nccl_comm *cs_nccl_comm_last __attribute__((tls_model("initial-exec")));

CS_HOT void cs_nccl_set_comm(cs_gpu_call *c, ncclComm_t comm, int collective)
{
    uint64_t key = (uint64_t)(uintptr_t)comm;
    cs_nccl_comm *m = cs_nccl_comm_last;
    if (CS_UNLIKELY(!m || m->key != key)) {
        m = cs_nccl_comm_find(comm);
        if (!m)
            return;
        cs_nccl_comm_last = m;
    }
    c->comm = m;
    c->rec.comm = (uint16_t)m->local;
    c->flags |= CS_F_HAS_COMM;
    c->has_x = 1;
    if (collective) {
        c->rec.seq = __atomic_fetch_add(&m->seq, 1, __ATOMIC_RELAXED);
        c->flags |= CS_F_HAS_SEQ;
    }
}

/* Size in bytes of an NCCL datatype, 0 when unknown. */
CS_HOT uint32_t cs_nccl_dtsize(int dt)
{
    static const uint8_t size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
    return dt >= 0 && dt < (int)sizeof size ? size[dt] : 0;
}

CS_HOT void cs_nccl_set_count(cs_gpu_call *c, size_t count, ncclDataType_t dt, uint64_t mult)
{
    int d = (int)dt;
    c->rec.count = count > 0xffffffffu ? 0xffffffffu : (uint32_t)count;
    c->rec.bytes = (uint64_t)count * cs_nccl_dtsize(d) * mult;
    c->rec.dtype = (uint16_t)(d >= 0 && d <= ncclFloat8e5m2 ? CS_DT_ncclInt8 + d : CS_DT_OTHER);
}

/* The size of a communicator we know (for AlltoAll and ReduceScatter bytes). */
static inline uint64_t cs_nccl_nranks(ncclComm_t comm)
{
    cs_nccl_comm *m = cs_nccl_comm_last;
    if (!m || m->key != (uint64_t)(uintptr_t)comm)
        m = cs_nccl_comm_find(comm);
    return m ? m->size : 1;
}

void cs_nccl_init_uid(cs_gpu_call *c, ncclResult_t rc, ncclComm_t *newcomm, int nranks, const ncclUniqueId *id,
                      int rank);
void cs_nccl_init_ids(cs_gpu_call *c, ncclResult_t rc, ncclComm_t *newcomm, int nranks, int nid,
                      const ncclUniqueId *ids, int rank);
void cs_nccl_init_all(cs_gpu_call *c, ncclResult_t rc, ncclComm_t *comms, int ndev, const int *devlist);
void cs_nccl_init_split(cs_gpu_call *c, ncclResult_t rc, ncclComm_t parent, int color, ncclComm_t *newcomm);
void cs_nccl_init_shrink(cs_gpu_call *c, ncclResult_t rc, ncclComm_t parent, ncclComm_t *newcomm);
void cs_nccl_comm_freed(cs_gpu_call *c, ncclComm_t comm, ncclResult_t rc);

/* Groups: every call between the outermost ncclGroupStart and its
 * ncclGroupEnd carries the group's id (per process, from 1). */
void cs_nccl_group_start(cs_gpu_call *c);
void cs_nccl_group_started(cs_gpu_call *c, ncclResult_t rc);
void cs_nccl_group_end_pre(cs_gpu_call *c);
/* Returns what ncclGroupEnd returns to the application: rc, or the error
 * of a call the fusion engine issued for it at the end (nccl_fuse.h). */
ncclResult_t cs_nccl_group_end_post(cs_gpu_call *c, ncclResult_t rc);

/* Apply mode's NCCL engine (fuse/nccl_fuse.c), registered here by its
 * module when COLLSCOPE_FUSE is on, else NULL: the wrappers call it
 * through this table and never name it (nccl_fuse.h says what each does). */
typedef struct cs_nccl_fuse_ops {
    int (*allreduce)(cs_gpu_call *c, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
    int (*held)(void);
    void (*flush)(void);
    ncclResult_t (*finish)(ncclResult_t rc);
    void (*comm_freed)(cs_nccl_comm *m);
    ncclResult_t (*group_end_untraced)(ncclResult_t (*real)(void));
} cs_nccl_fuse_ops;
extern CS_INTERNAL const cs_nccl_fuse_ops *cs_nccl_fuse;

#endif
