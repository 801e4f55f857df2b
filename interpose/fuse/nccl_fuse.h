/* nccl_fuse.h: the NCCL fusion engine of apply mode (COLLSCOPE_FUSE=1,
 * docs/gpu.md "Apply mode: NCCL fusion").
 *
 * Inside an NCCL group, small ncclAllReduce calls are held back instead of
 * being issued; at the outermost ncclGroupEnd, the held calls that share
 * communicator, stream, datatype and reduction op are packed into a device
 * fusion buffer (libcskernels, fuse_kern.h), reduced by one real
 * ncclAllReduce issued inside the still-open group, and unpacked on the
 * same stream after the real ncclGroupEnd. Held calls that cannot be fused
 * safely are issued unchanged, in the application's order.
 *
 * Every decision depends only on what every rank sees alike (the calls'
 * sizes, types, ops and their order, the settings), except the rank-local
 * fallbacks (no memory for the fusion buffer, buffers that overlap on one
 * rank only): see docs/gpu.md.
 *
 * Trace: a held call's span has CS_F_FUSE_MEMBER and tag = the id of the
 * fused call that carried it; the fused call's span (op ncclAllReduce,
 * CS_F_FUSED, the same tag, count and bytes the totals, no sequence
 * number) is written by the engine. Ids count from 1 per communicator. */
#ifndef CS_NCCL_FUSE_H
#define CS_NCCL_FUSE_H

#include "interpose/fuse/fuse.h"
#include "interpose/nccl_wrap.h"

/* The engine's module: at start, registers the engine with the NCCL
 * wrappers (cs_nccl_fuse, nccl_wrap.h) when apply mode is on. The
 * functions below are the engine's entries, reached through that table. */
extern CS_INTERNAL const cs_module cs_nccl_fuse_module;

/* In the ncclAllReduce wrapper, inside a group with apply mode on, after
 * cs_gpu_begin: 1 = the call is held (its span is kept for later and the
 * call left: return ncclSuccess), 0 = issue it now as usual. */
int cs_nccl_fuse_allreduce(cs_gpu_call *c, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);

/* Calls held by this thread (0 = nothing to do at ncclGroupEnd). */
int cs_nccl_fuse_held(void);

/* At the outermost ncclGroupEnd, before the real one: pack, issue the
 * fused calls and the held calls that stay unfused, write their spans. */
void cs_nccl_fuse_flush(void);
/* After the real ncclGroupEnd returned rc: unpack. Returns what the
 * application gets: rc, else the first error of a call issued at flush. */
ncclResult_t cs_nccl_fuse_finish(ncclResult_t rc);

/* ncclCommDestroy/Abort of m succeeded: release its fusion buffers. */
void cs_nccl_fuse_comm_freed(cs_nccl_comm *m);

/* ncclGroupEnd when the call is not traced (tracing stopped, or a fork
 * child) but calls are held: issue them without spans, then the real one. */
ncclResult_t cs_nccl_fuse_group_end_untraced(ncclResult_t (*real)(void));

#endif
