/* fuse.h: apply mode's settings, shared by the MPI and NCCL fusion
 * engines (mpi_fuse.h, nccl_fuse.h; docs/guide.md "Apply mode").
 *
 * Set once at trace start from COLLSCOPE_FUSE, COLLSCOPE_FUSE_THRESHOLD,
 * COLLSCOPE_FUSE_BUFFER and COLLSCOPE_TEST_FUSE_NOMEM, the same on every
 * rank (the launcher passes the environment). */
#ifndef CS_FUSE_H
#define CS_FUSE_H

#include <stddef.h>

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

extern CS_INTERNAL const cs_module cs_fuse_module;

#endif
