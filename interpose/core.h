/* core.h: the bottom of the preload, what every wrapper family (MPI, NCCL,
 * CUDA) and every optional module (module.h) shares inside the traced
 * process: the tracing switch, the re-entry guard, trace start and the
 * job rank, warnings, and writing records. Nothing here names a wrapper
 * family or a module. */
#ifndef CS_CORE_H
#define CS_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "interpose/preload.h"
#include "interpose/warn.h"
#include "libtrace/clock.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"
#include "libtrace/span.h"

/* 1 while spans are recorded: the log is open and nothing turned it off. */
extern CS_INTERNAL int cs_core_tracing;
/* 1 once an optional hook of the traced calls may run (PAPI counters, the
 * hang watchdog, apply mode, a test seam): the module turning one on sets
 * it first, at trace start or when the rank is known, and it stays set.
 * While it is 0 the MPI wrappers run a copy of their body with every such
 * hook compiled out (gen-wrappers.py); the records are the same. */
extern CS_INTERNAL int cs_core_hooks;
/* Per-thread re-entry guard: calls made inside a wrapped call (by the MPI
 * library itself, or by the tool) are passed through unrecorded. */
extern CS_INTERNAL __thread int cs_core_busy __attribute__((tls_model("initial-exec")));

/* Open this process's log if it is not open yet (idempotent, thread-safe).
 * Returns cs_core_tracing. Launcher processes and COLLSCOPE_DISABLE=1 never
 * trace. `api` names the API whose call started it ("cuda"): the log
 * header's flavor unless a module names one (module.h). Starts every
 * module of the table. */
int cs_core_start(const char *api);
/* The job rank and size, once known (MPI_Init, NCCL comm init). */
void cs_core_set_rank(int rank, int size);
int cs_core_rank(void);
/* cs_warn_once (warn.h) for what every rank meets alike (apply mode's fallbacks):
 * one line for the job, from rank 0 (or a process whose rank is unknown). */
#define cs_core_warn_job(once, ...)          \
    do {                                     \
        if (cs_core_rank() <= 0)             \
            cs_warn_once(once, __VA_ARGS__); \
    } while (0)

/* Write a COMMDEF record: communicator `local` of this process is job-wide
 * `id` (made from `parent` as `how`), of `size` members, this rank `rank`;
 * `args` (CS_COMM_ARG_*) says which of the split's `color` and `key` are set. */
void cs_core_emit_commdef(int how, uint64_t id, uint64_t parent, uint32_t local, uint32_t size, int32_t rank,
                          uint32_t args, int32_t color, int32_t key);

/* Write a span record (hdr last). r->hdr is ignored. */
static inline void cs_core_emit_rec(const cs_rec *r, uint32_t flags)
{
    cs_rec *slot = cs_log_slot();
    if (!slot)
        return;
    *slot = *r;
    cs_log_commit(slot, CS_REC_HDR(CS_REC_SPAN, flags));
}

#endif
