/* gpu_wrap.c: what the NCCL and CUDA runtime wrappers share out of line:
 * trace start at the first GPU call, correlation ids. */
#include "config.h"
#include "interpose/gpu_wrap.h"

__thread cs_gpu_tls cs_gpu_t __attribute__((tls_model("initial-exec")));
int cs_gpu_fuse_timing;
__thread uint64_t cs_gpu_fuse_busy __attribute__((tls_model("initial-exec")));
int cs_gpu_start_state;
static uint64_t cs_gpu_corr_next;
#define CS_GPU_CORR_BLOCK 64u

/* A new block of correlation ids for this thread (ids start at 1). */
void cs_gpu_corr_refill(void)
{
    uint64_t base = __atomic_fetch_add(&cs_gpu_corr_next, CS_GPU_CORR_BLOCK, __ATOMIC_RELAXED) + 1;
    cs_gpu_t.corr_next = base;
    cs_gpu_t.corr_end = base + CS_GPU_CORR_BLOCK;
}

/* The first NCCL or CUDA call of a process starts the trace (a process
 * with MPI has started it at MPI_Init). Tried once: a process that will
 * not trace (a launcher, COLLSCOPE_DISABLE=1, no writable folder) pays
 * one load per call after that. */
int cs_gpu_start(void)
{
    int st = __atomic_load_n(&cs_gpu_start_state, __ATOMIC_ACQUIRE);
    if (st < 0)
        return 0;
    int saved = errno;
    int on = cs_core_start("cuda");
    __atomic_store_n(&cs_gpu_start_state, on ? 1 : -1, __ATOMIC_RELEASE);
    errno = saved;
    return on;
}
