/* cuda_wrap.h: the CUDA runtime wrappers' own pieces (cuda_wrap.c): the
 * real functions, found with dlsym(RTLD_NEXT), else in the libcudart a
 * host loaded RTLD_LOCAL (dlopen(RTLD_NOLOAD)); and the CUDA functions the
 * tool calls itself. */
#ifndef CS_CUDA_WRAP_H
#define CS_CUDA_WRAP_H

#include "interpose/gpu_wrap.h"

extern CS_INTERNAL void *cs_cuda_real_fns[CS_OP_COUNT];
/* The real functions' names, from cuda.spec (the generated wrappers). */
extern CS_INTERNAL const char *const cs_cuda_real_names[CS_OP_COUNT];
void *cs_cuda_resolve(int op);
int cs_cuda_missing(int op);

static inline void *cs_cuda_real(int op)
{
    void *f = __atomic_load_n(&cs_cuda_real_fns[op], __ATOMIC_RELAXED);
    return CS_LIKELY(f != NULL) ? f : cs_cuda_resolve(op);
}

/* Stream 0 in a _ptsz entry point is the calling thread's default stream. */
static inline cudaStream_t cs_cuda_ptsz(cudaStream_t s)
{
    return s ? s : cudaStreamPerThread;
}

static inline uint32_t cs_cuda_threads(dim3 g, dim3 b)
{
    uint64_t n = (uint64_t)g.x * g.y * g.z * b.x * b.y * b.z;
    return n > 0xffffffffu ? 0xffffffffu : (uint32_t)n;
}

/* The real CUDA functions the tool itself uses (never traced). */
typedef struct cs_cudart {
    cudaError_t (*event_create)(cudaEvent_t *, unsigned int);
    cudaError_t (*event_record)(cudaEvent_t, cudaStream_t);
    cudaError_t (*event_query)(cudaEvent_t);
    cudaError_t (*event_sync)(cudaEvent_t);
    cudaError_t (*event_elapsed)(float *, cudaEvent_t, cudaEvent_t);
    cudaError_t (*stream_create)(cudaStream_t *, unsigned int);
    cudaError_t (*get_device)(int *);
    cudaError_t (*set_device)(int);
    cudaError_t (*peek_error)(void);
    cudaError_t (*get_error)(void);
    int ready; /* 1 found, -1 not found */
} cs_cudart;
extern CS_INTERNAL cs_cudart cs_rt;
int cs_cudart_load(void);
/* A shared libcudart in the process (cuda_wrap.c): 0 when none is loaded
 * (the program links cudart statically); says so once. */
void *cs_cudart_handle(void);

#endif
