/* kernels_host_bench: figures of the host reference backend on this CPU:
 * pack / unpack bandwidth against memcpy of the same bytes, and one pack
 * call of 256 buffers against 256 memcpy calls. Prints one line per
 * figure with the ratio. Usage: kernels_host_bench [total-MB] */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cskernels.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of reps timings of the loop body. */
#define BEST(var, reps, body)                 \
    do {                                      \
        var = 1e30;                           \
        for (int r_ = 0; r_ < (reps); r_++) { \
            double t0_ = now();               \
            body;                             \
            double t_ = now() - t0_;          \
            if (t_ < var)                     \
                var = t_;                     \
        }                                     \
    } while (0)

static void run(cs_kern_ctx *ctx, size_t total, size_t nbufs, int reps)
{
    size_t each = total / nbufs, i;
    char *src = malloc(total + 64), *packed = malloc(total + 64), *dst = malloc(total + 64);
    void **bufs = malloc(nbufs * sizeof *bufs), **outs = malloc(nbufs * sizeof *outs);
    size_t *sizes = malloc(nbufs * sizeof *sizes);
    cs_kern_table t = { bufs, sizes, nbufs }, t2 = { outs, sizes, nbufs };
    double tpack, tunpack, tmemcpy, tloop;

    memset(src, 1, total + 64);
    memset(packed, 2, total + 64);
    memset(dst, 3, total + 64);
    for (i = 0; i < nbufs; i++) {
        bufs[i] = src + i * each;
        outs[i] = dst + i * each;
        sizes[i] = each;
    }
    total = each * nbufs;
    BEST(tmemcpy, reps, memcpy(packed, src, total));
    BEST(tpack, reps, cs_kern_pack(ctx, &t, packed));
    BEST(tunpack, reps, cs_kern_unpack(ctx, &t2, packed));
    BEST(tloop, reps, for (i = 0; i < nbufs; i++) memcpy(packed + i * each, bufs[i], each));
    printf("host pack   %7.2f MB in %5zu buffers: %8.2f GB/s  memcpy %8.2f GB/s  ratio %5.2f\n", total / 1e6, nbufs,
           total / tpack / 1e9, total / tmemcpy / 1e9, tmemcpy / tpack);
    printf("host unpack %7.2f MB in %5zu buffers: %8.2f GB/s  memcpy %8.2f GB/s  ratio %5.2f\n", total / 1e6, nbufs,
           total / tunpack / 1e9, total / tmemcpy / 1e9, tmemcpy / tunpack);
    printf("host pack   %7.2f MB in %5zu buffers: one call %9.1f us  %zu memcpy calls %9.1f us  ratio %5.2f\n",
           total / 1e6, nbufs, tpack * 1e6, nbufs, tloop * 1e6, tloop / tpack);
    free(src);
    free(packed);
    free(dst);
    free(bufs);
    free(outs);
    free(sizes);
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    cs_kern_ctx *ctx;
    int rc = cs_kern_ctx_new(CS_KERN_HOST, &ctx);

    if (rc != CS_KERN_OK) {
        fprintf(stderr, "kernels_host_bench: %s\n", cs_kern_strerror(rc));
        return 1;
    }
    if (mb == 0 || mb > 4096) {
        fprintf(stderr, "kernels_host_bench: total-MB must be 1..4096, not %s\n", argv[1]);
        return 1;
    }
    run(ctx, 1u << 20, 1, 50);
    run(ctx, 1u << 20, 256, 50);
    run(ctx, mb << 20, 256, 5);
    run(ctx, mb << 20, 4096, 5);
    cs_kern_ctx_free(ctx);
    return 0;
}
