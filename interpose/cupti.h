/* cupti.h: the CUPTI subscriber (cupti.c, COLLSCOPE_CUPTI=1), as the CUDA
 * wrappers see it.
 *
 * On once activity is enabled. The runtime-API callback leaves the
 * correlation id of the runtime call in progress in cs_cupti_corr; a launch
 * or memcpy wrapper stores it in its SPANX record (the importer joins
 * activity to the span by it). Streams a traced call used are noted so
 * activity names them by handle. Built without CUPTI, the hooks are
 * constants and the wrappers' branches on them compile away. */
#ifndef CS_CUPTI_H
#define CS_CUPTI_H

#include <stdint.h>

#include "interpose/module.h"

#if CS_WITH_CUPTI
extern CS_INTERNAL int cs_cupti_on;
extern CS_INTERNAL __thread uint32_t cs_cupti_corr __attribute__((tls_model("initial-exec")));
void cs_cupti_note_stream_slow(uint64_t handle);
extern CS_INTERNAL const cs_module cs_cupti_module;
#else
#define cs_cupti_on 0
#define cs_cupti_corr 0u
static inline void cs_cupti_note_stream_slow(uint64_t handle)
{
    (void)handle;
}
#endif

/* A traced CUDA call begins: forget the previous call's correlation id. */
static inline __attribute__((always_inline)) void cs_cupti_call_begin(void)
{
#if CS_WITH_CUPTI
    if (__builtin_expect(cs_cupti_on, 0))
        cs_cupti_corr = 0;
#endif
}

#endif
