/* preload.h: what every file of the preload marks its symbols and branches
 * with: exported or hidden, always inlined on the per-call path, likely or
 * not. Includes nothing; below core, settings and every module. */
#ifndef CS_PRELOAD_H
#define CS_PRELOAD_H

#define CS_EXPORT __attribute__((visibility("default")))
/* On extern data the wrappers read: hidden like everything not exported,
 * so a read is one rip-relative load (-fvisibility=hidden covers only
 * definitions, and a declaration would go through the GOT). */
#define CS_INTERNAL __attribute__((visibility("hidden")))
/* For the few helpers of the per-call fast path: always inlined, whatever
 * the compiler's size heuristics say about 200 generated wrappers. */
#define CS_HOT static inline __attribute__((always_inline))
#define CS_LIKELY(x) __builtin_expect(!!(x), 1)
#define CS_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
