/* mpi_fuse.h: apply mode for MPI (COLLSCOPE_FUSE=1): nonblocking
 * allreduces fused into one, in the unmodified program.
 *
 * An eligible MPI_Iallreduce is not started: it joins its communicator's
 * pending batch and the caller gets a generalized request (MPI_Grequest).
 * The batch is started as ONE MPI_Iallreduce on a packed buffer when the
 * program makes any call that could wait for it (every blocking call, every
 * completion call), when a call breaks the batch (another collective on the
 * communicator, a different op or datatype, in-place mixed with
 * out-of-place, a buffer that overlaps) or when it is full. A completion
 * call that names a member first completes the fused call it is in, unpacks
 * it and completes the members' requests, then lets the real call run.
 *
 * Batch boundaries depend only on the order of the program's MPI calls and
 * on arguments every rank passes alike (counts, types, ops, in-place), so
 * every rank forms the same batches: see docs/guide.md "Apply mode" for the
 * one requirement this puts on programs.
 *
 * The wrappers call it through the hooks of mpi_wrap.h; they cost one
 * load and a branch while nothing is pending. */
#ifndef CS_MPI_FUSE_H
#define CS_MPI_FUSE_H

#include "interpose/fuse/fuse.h"
#include "interpose/mpi_wrap.h"

/* The engine's module: at start, registers the engine with the MPI
 * wrappers (cs_mpi_fuse, mpi_wrap.h) when apply mode is on. The
 * functions below are the engine's entries, reached through that table;
 * it keeps the counts the wrappers' hooks read (cs_mpi_fuse_npending,
 * cs_mpi_fuse_nflight). */
extern CS_INTERNAL const cs_module cs_mpi_fuse_module;

/* MPI_Iallreduce: 1 when the call joined a batch (*rc and *request set, the
 * span marked), 0 when it must be passed to the library as it is. */
int cs_mpi_fuse_iallreduce(cs_mpi_call *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                           MPI_Comm comm, MPI_Request *request, int *rc);

/* Start every pending batch (a call that may wait), or comm's only (another
 * nonblocking collective on it, which must stay in order). */
void cs_mpi_fuse_flush_all(void);
void cs_mpi_fuse_flush_comm(MPI_Comm comm);

/* Completion calls, inside their span: finish the fused calls their
 * requests belong to (how: CS_FUSE_BLOCK_ALL, _POLL, _BLOCK_ANY). */
void cs_mpi_fuse_progress(cs_mpi_call *c, int how, int n, MPI_Request *reqs);

#endif
