/* fuse_kern.h: libcskernels for the fusion engine (apply mode), loaded
 * lazily with dlopen on first need, never linked into the preload and never
 * loaded by a job without COLLSCOPE_FUSE=1.
 *
 * Where it is looked for, in order:
 *   $COLLSCOPE_KERNELS_LIB, when set;
 *   next to the preload: the installed layout ($libdir/collscope/ holds the
 *     preload, $libdir/libcskernels.so.0 the kernels), then the build tree
 *     (BUILD/interpose/.libs/ and BUILD/kernels/.libs/libcskernels.so.0);
 *   "libcskernels.so.0" on the loader's ordinary search path. */
#ifndef CS_FUSE_KERN_H
#define CS_FUSE_KERN_H

#include "kernels/cskernels.h"

/* The few entry points the engine uses. */
typedef struct cs_fuse_kern {
    int (*ctx_new)(cs_kern_backend backend, cs_kern_ctx **out);
    void (*ctx_free)(cs_kern_ctx *ctx);
    int (*ctx_set_stream)(cs_kern_ctx *ctx, void *stream);
    int (*pack)(cs_kern_ctx *ctx, const cs_kern_table *t, void *packed);
    int (*unpack)(cs_kern_ctx *ctx, const cs_kern_table *t, const void *packed);
    const char *(*strerror)(int rc);
} cs_fuse_kern;

/* The kernels, loaded on the first call (thread-safe; tried once). NULL
 * when no candidate loads or one lacks a symbol: one warning then, with
 * the loader's message. errno is left as it was. */
const cs_fuse_kern *cs_fuse_kern_get(void);

#endif
