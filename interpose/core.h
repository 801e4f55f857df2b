/* core.h: what every wrapper family (MPI, NCCL, CUDA) shares inside the
 * traced process: the tracing switch, the re-entry guard, call sites,
 * counters and the test-only settings. Nothing here is MPI-specific. */
#ifndef CS_CORE_H
#define CS_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "libtrace/clock.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"
#include "libtrace/span.h"

#define CS_EXPORT __attribute__((visibility("default")))
/* For the few helpers of the per-call fast path: always inlined, whatever
 * the compiler's size heuristics say about 200 generated wrappers. */
#define CS_HOT static inline __attribute__((always_inline))
#define CS_LIKELY(x) __builtin_expect(!!(x), 1)
#define CS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* 1 while spans are recorded: the log is open and nothing turned it off. */
extern int cs_tracing;
/* Per-thread re-entry guard: calls made inside a wrapped call (by the MPI
 * library itself, or by the tool) are passed through unrecorded. */
extern __thread int cs_busy __attribute__((tls_model("initial-exec")));

/* Open this process's log if it is not open yet (idempotent, thread-safe).
 * Returns cs_tracing. Launcher processes and COLLSCOPE_DISABLE=1 never
 * trace. `api` names the flavor that started it ("openmpi", "nccl"). */
int cs_trace_start(const char *api);
/* The job rank and size, once known (MPI_Init, NCCL comm init). */
void cs_trace_set_rank(int rank, int size);
int cs_trace_rank(void);
/* Print one line to stderr, prefixed "collscope: ", at most once per key. */
void cs_warn_once(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cs_warn_once for what every rank meets alike (apply mode's fallbacks):
 * one line for the job, from rank 0 (or a process whose rank is unknown). */
#define cs_warn_job(once, ...)               \
    do {                                     \
        if (cs_trace_rank() <= 0)            \
            cs_warn_once(once, __VA_ARGS__); \
    } while (0)

/* Call site of the current wrapped call: an id of the deduplicated stack,
 * or 0 when call sites are off. Cheap on a known stack (no system call). */
uint32_t cs_callsite_capture(void);
/* Record the loaded objects (path, address range) next to the log. */
void cs_modules_snapshot(void);
extern int cs_callsites_on;

/* PAPI: deltas of the configured counters since the last traced call on
 * this thread, written as a COUNTERS record; `after`: the call's span slot
 * is already claimed (MPI), so the record follows it in the log. */
extern int cs_papi_on;
void cs_papi_sample(uint16_t tid, int after);

/* Test-only seams for the slow-link verdicts, read once at trace start;
 * both stall by busy waiting inside the traced call, after the ranks have
 * arrived, so the call's transfer grows and its arrivals stay on time.
 *   COLLSCOPE_TEST_P2P_DELAY=SRC:DST:USEC  every send from world rank SRC
 *       to world rank DST stalls USEC microseconds before the real send.
 *   COLLSCOPE_TEST_COMM_DELAY=LOCAL:USEC  every blocking collective on the
 *       communicator whose process-local index (cs_mpi_comm.local: world 0,
 *       self 1, then each created communicator in creation order; the same
 *       on every member of communicators created collectively in the same
 *       order) is LOCAL stalls USEC microseconds after the real call
 *       returns, on every member. */
extern int cs_test_p2p_src, cs_test_p2p_dst, cs_test_p2p_us;
extern int cs_test_comm_local, cs_test_comm_us;
void cs_test_stall_us(int us);

/* Apply mode (COLLSCOPE_FUSE=1, docs/guide.md "Apply mode"): read once at
 * trace start, the same on every rank (the launcher passes the environment).
 *   COLLSCOPE_FUSE_THRESHOLD  largest user call that is fused, bytes
 *                             (default 64 KiB; suffixes K, M, G)
 *   COLLSCOPE_FUSE_BUFFER     largest fused call, bytes (default 4 MiB)
 *   COLLSCOPE_TEST_FUSE_NOMEM=1  test-only: every fusion-buffer allocation
 *                             fails, to exercise the fallback. */
extern int cs_fuse_on;
extern size_t cs_fuse_threshold, cs_fuse_buffer;
extern int cs_fuse_test_nomem;
/* malloc for fusion buffers, failing under COLLSCOPE_TEST_FUSE_NOMEM. */
void *cs_fuse_alloc(size_t n);

/* Write a COMMDEF record: communicator `local` of this process is job-wide
 * `id` (made from `parent` as `how`), of `size` members, this rank `rank`. */
void cs_emit_commdef(int how, uint64_t id, uint64_t parent, uint32_t local, uint32_t size, int32_t rank);

/* Write a span record (hdr last). r->hdr is ignored. */
static inline void cs_emit_rec(const cs_rec *r, uint32_t flags)
{
    cs_rec *slot = cs_log_slot();
    if (!slot)
        return;
    *slot = *r;
    cs_log_commit(slot, CS_REC_HDR(CS_REC_SPAN, flags));
}

#endif
