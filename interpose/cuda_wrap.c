/* cuda_wrap.c: the out-of-line parts of the CUDA runtime wrappers: finding
 * the real functions, and noticing a program whose CUDA runtime cannot be
 * interposed. */
#include "config.h"
#include "interpose/cuda_wrap.h"

#include <dlfcn.h>
#include <stdlib.h>

void *cs_cuda_real_fns[CS_OP_COUNT];
cs_cudart cs_rt;

static const char *const cs_libcudart_names[] = { "libcudart.so.13", "libcudart.so.12", "libcudart.so", NULL };

void *cs_cudart_handle(void)
{
    static void *lib;
    if (!lib)
        for (int i = 0; cs_libcudart_names[i] && !lib; i++)
            lib = dlopen(cs_libcudart_names[i], RTLD_LAZY | RTLD_NOLOAD);
    return lib;
}

static void *cs_cuda_sym(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f)
        return f;
    void *lib = cs_cudart_handle();
    return lib ? dlsym(lib, name) : NULL;
}

void *cs_cuda_resolve(int op)
{
    int saved = errno;
    const char *name = cs_cuda_real_names[op];
    void *f = name ? cs_cuda_sym(name) : NULL;
    if (f)
        __atomic_store_n(&cs_cuda_real_fns[op], f, __ATOMIC_RELAXED);
    errno = saved;
    return f;
}

int cs_cuda_missing(int op)
{
    static int warned[CS_OP_COUNT];
    cs_warn_once(&warned[op], "no CUDA runtime provides %s; the call fails with cudaErrorSymbolNotFound",
                 cs_ops[op].name);
    return cudaErrorSymbolNotFound;
}

/* The CUDA functions the tool calls itself: from the shared libcudart of
 * the process, else (cudart linked statically) from one loaded privately
 * for the events of GPU timing only. */
int cs_cudart_load(void)
{
    if (cs_rt.ready)
        return cs_rt.ready > 0;
    void *lib = cs_cudart_handle();
    if (!lib) {
        static int warned;
        cs_warn_once(&warned, "the program has no shared CUDA runtime (is cudart linked statically? "
                              "nvcc does so unless given -cudart shared): its CUDA calls are not traced");
        for (int i = 0; cs_libcudart_names[i] && !lib; i++)
            lib = dlopen(cs_libcudart_names[i], RTLD_LAZY | RTLD_LOCAL);
    }
    int ok = lib != NULL;
#define CS_RT(field, name) (ok = ok && (*(void **)&cs_rt.field = dlsym(lib, name)) != NULL)
    CS_RT(event_create, "cudaEventCreateWithFlags");
    CS_RT(event_record, "cudaEventRecord");
    CS_RT(event_query, "cudaEventQuery");
    CS_RT(event_sync, "cudaEventSynchronize");
    CS_RT(event_elapsed, "cudaEventElapsedTime");
    CS_RT(stream_create, "cudaStreamCreateWithFlags");
    CS_RT(get_device, "cudaGetDevice");
    CS_RT(set_device, "cudaSetDevice");
    CS_RT(peek_error, "cudaPeekAtLastError");
    CS_RT(get_error, "cudaGetLastError");
#undef CS_RT
    cs_rt.ready = ok ? 1 : -1;
    return ok;
}
