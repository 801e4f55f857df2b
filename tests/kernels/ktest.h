/* ktest.h: tiny assertion helpers of the kernels tests. Every check counts;
 * kt_done() prints the totals and gives the exit status. */
#ifndef KTEST_H
#define KTEST_H

#include <stdio.h>

static int kt_pass, kt_fail;

#define KT_CHECK(cond, ...)                                      \
    do {                                                         \
        if (cond) {                                              \
            kt_pass++;                                           \
        } else {                                                 \
            kt_fail++;                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

/* rc must equal want (both cs_kern_err codes). */
#define KT_RC(rc, want, what)                                                                            \
    KT_CHECK((rc) == (want), "%s: rc %d (%s), want %d (%s)", (what), (rc), cs_kern_strerror(rc), (want), \
             cs_kern_strerror(want))

static inline int kt_done(const char *name)
{
    printf("%s: %d checks passed, %d failed\n", name, kt_pass, kt_fail);
    return kt_fail ? 1 : 0;
}

#endif
