/* gpu_wrap.h: the pieces every generated NCCL and CUDA runtime wrapper is
 * made of (interpose/nccl.spec, interpose/cuda.spec): the call in flight,
 * its span and extension record, NCCL group state and correlation ids
 * (gpu_wrap.c).
 *
 * Compiled against the CUDA and NCCL headers only: libcudart and libnccl
 * are found at run time (cuda_wrap.h, nccl_wrap.h), never linked. A
 * process without them never calls these wrappers. Tracing starts at the
 * first NCCL or CUDA call of a process that has no MPI (cs_gpu_start). */
#ifndef CS_GPU_WRAP_H
#define CS_GPU_WRAP_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "interpose/callsite.h"
#include "interpose/core.h"
#include "interpose/cupti.h"
#include "interpose/papi.h"

/* One call in flight: its span and its extension record. */
typedef struct cs_gpu_call {
    cs_rec rec;
    cs_rec_spanx x;
    uint32_t flags;
    int has_x;  /* write the SPANX record */
    void *comm; /* cs_nccl_comm *, NULL = none */
    int ev;     /* gputime: pool slot of the begin event, -1 = none */
} cs_gpu_call;

/* Per-process correlation ids of NCCL calls (GPUTIME records join on them):
 * unique in the process, handed to threads in blocks; a new block for this
 * thread. */
void cs_gpu_corr_refill(void);
/* Per-thread NCCL group state and correlation ids. */
typedef struct cs_gpu_tls {
    int depth;          /* ncclGroupStart nesting */
    uint32_t grp;       /* id of the open group, 0 = none */
    uint64_t corr_next; /* next id of this thread's block */
    uint64_t corr_end;  /* end of the block */
} cs_gpu_tls;
extern CS_INTERNAL __thread cs_gpu_tls cs_gpu_t __attribute__((tls_model("initial-exec")));

/* The first NCCL or CUDA call of a process starts the trace: 1 tracing, 0
 * not (tried once). */
int cs_gpu_start(void);
/* 0 untried, 1 tracing, -1 will not trace. */
extern CS_INTERNAL int cs_gpu_start_state;

/* The fast path below makes no call that can set errno: every slow path
 * that can (trace start, call sites, PAPI, CUPTI, log refill, GPU timing,
 * communicator set-up) saves and restores it itself, so the application
 * sees the errno the library left. */

/* Begin a traced call: 0 means pass the call through untraced. */
CS_HOT int cs_gpu_enter(cs_gpu_call *c, int op)
{
    if (CS_UNLIKELY(cs_core_busy))
        return 0;
    if (CS_UNLIKELY(!__atomic_load_n(&cs_core_tracing, __ATOMIC_RELAXED)) && !cs_gpu_start())
        return 0;
    cs_core_busy = 1;
    memset(&c->rec, 0, sizeof c->rec);
    c->rec.op = (uint16_t)op;
    c->flags = 0;
    c->has_x = 0;
    c->comm = NULL;
    c->ev = -1;
    c->x.stream = 0;
    c->x.corr = 0;
    c->x.grp = cs_gpu_t.grp;
    c->x.redop = -1;
    c->x.dir = -1;
    c->x.device = -1;
    c->rec.callsite = cs_callsite_capture();
    return 1;
}

CS_HOT void cs_gpu_set_peer(cs_gpu_call *c, int peer)
{
    c->rec.peer = peer;
    c->flags |= CS_F_HAS_PEER;
}

CS_HOT void cs_gpu_set_stream(cs_gpu_call *c, cudaStream_t s)
{
    c->x.stream = (uint64_t)(uintptr_t)s;
    c->has_x = 1;
}

CS_HOT void cs_gpu_begin(cs_gpu_call *c)
{
    if (CS_UNLIKELY(cs_papi_on))
        cs_papi_sample(cs__log_tls.tid, 0);
    cs_cupti_call_begin();
    c->rec.t0 = cs_clock_ticks();
}

/* Apply mode's NCCL guard (fuse/nccl_fuse.c) measures the time a thread
 * spends in NCCL and CUDA runtime calls (the enqueues, the group ends, the
 * synchronizations that wait for the GPU): while cs_gpu_fuse_timing is
 * set, every traced call but the engine's own fused calls (the engine
 * counts its whole flush and unpack itself) adds its duration (ticks) to
 * the thread's cs_gpu_fuse_busy. */
extern CS_INTERNAL int cs_gpu_fuse_timing;
extern CS_INTERNAL __thread uint64_t cs_gpu_fuse_busy __attribute__((tls_model("initial-exec")));

CS_HOT void cs_gpu_end(cs_gpu_call *c, int rc, int failed)
{
    c->rec.t1 = cs_clock_ticks();
    if (CS_UNLIKELY(cs_gpu_fuse_timing) && !(c->flags & CS_F_FUSED))
        cs_gpu_fuse_busy += c->rec.t1 - c->rec.t0;
    c->rec.rc = rc;
    if (CS_UNLIKELY(failed))
        c->flags |= CS_F_ERROR;
    if (CS_UNLIKELY(cs_cupti_on) && c->has_x) {
        if (c->x.corr == 0 && cs_cupti_corr) /* a CUDA call (NCCL calls have their own ids) */
            c->x.corr = cs_cupti_corr;
        cs_cupti_note_stream_slow(c->x.stream);
    }
}

/* Write the extension record (if any), then the span; leave the call. */
CS_HOT void cs_gpu_emit(cs_gpu_call *c)
{
    if (c->has_x || c->x.grp) {
        cs_rec_spanx *x = (cs_rec_spanx *)cs_log_slot();
        if (CS_LIKELY(x != NULL)) {
            x->op = c->rec.op;
            x->tid = cs__log_tls.tid;
            x->stream = c->x.stream;
            x->corr = c->x.corr;
            x->grp = c->x.grp;
            x->redop = c->x.redop;
            x->dir = c->x.dir;
            x->device = c->x.device;
            cs_log_commit(x, CS_REC_HDR(CS_REC_SPANX, 0));
        }
    }
    cs_rec *slot = cs_log_slot();
    if (CS_LIKELY(slot != NULL)) {
        c->rec.tid = cs__log_tls.tid;
        *slot = c->rec;
        cs_log_commit(slot, CS_REC_HDR(CS_REC_SPAN, c->flags));
    }
    cs_core_busy = 0;
}

#endif
