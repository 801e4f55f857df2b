/* fuse.h: apply mode's settings, shared by the MPI and NCCL fusion
 * engines (mpi_fuse.h, nccl_fuse.h; docs/guide.md "Apply mode").
 *
 * Set once at trace start from COLLSCOPE_FUSE, COLLSCOPE_FUSE_THRESHOLD,
 * COLLSCOPE_FUSE_BUFFER and COLLSCOPE_TEST_FUSE_NOMEM, the same on every
 * rank (the launcher passes the environment). */
#ifndef CS_FUSE_H
#define CS_FUSE_H

#include <stddef.h>

#include "interpose/fuse/fuse_guard.h"
#include "interpose/module.h"

extern CS_INTERNAL int cs_fuse_on;           /* apply mode is on */
extern CS_INTERNAL size_t cs_fuse_threshold; /* largest user call that is fused, bytes */
extern CS_INTERNAL size_t cs_fuse_buffer;    /* largest fused call, bytes */
extern CS_INTERNAL int cs_fuse_guard;        /* the on-line guard is on (fuse_guard.h) */
extern CS_INTERNAL int cs_fuse_test_nomem;
/* test-only: stall each fused call started / each guarded call left
 * unfused by this many microseconds (COLLSCOPE_TEST_GUARD_SLOW) */
extern CS_INTERNAL int cs_fuse_test_fused_us,
    cs_fuse_test_unfused_us; /* test-only: every fusion-buffer allocation fails */

/* malloc for fusion buffers, failing under COLLSCOPE_TEST_FUSE_NOMEM. */
void *cs_fuse_alloc(size_t n);

/* The guard's books, shared by both engines (fuse_guard.h decides; the
 * engines measure and agree): the figure of window w of a guard has come
 * back from every rank as sums (time in the family's calls and in waits,
 * ticks; fusable calls; wall time, ticks): write its FUSEGUARD record, feed
 * it to the guard, and write the decision it makes, if any. comm is the
 * communicator's local index, nccl says which engine (the record's flag
 * CS_FG_F_NCCL). */
void cs_fuse_guard_consume(cs_guard *g, uint32_t comm, int nccl, uint32_t w, const int64_t sum[3]);
/* Start the tick-to-ns conversion of the records (first guard made). */
void cs_fuse_guard_clock(void);

extern CS_INTERNAL const cs_module cs_fuse_module;

#endif
