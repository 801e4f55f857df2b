/* kernels_bench: figures of the CUDA backend on a GPU, each against a
 * baseline measured in the same run: pack / unpack bandwidth vs
 * cudaMemcpy device-to-device of the same bytes (target >= 0.80), one pack
 * launch vs 256 cudaMemcpyAsync calls (target >= 10x), one-shot allreduce
 * latency 8 KB..1 MB (peers simulated on one device) vs one cudaMemcpyAsync
 * of the same bytes, and the device's copy bandwidth. */
#include "config.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cskernels.h"

static int failed;

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "kernels_bench: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Mean seconds per call of op over iters calls on stream s (after warm-up). */
typedef void (*op_fn)(void *arg);
static double time_op(op_fn op, void *arg, cudaStream_t s, int iters)
{
    cudaEvent_t a, b;
    float ms;

    for (int i = 0; i < 3; i++)
        op(arg);
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
    check(cudaEventRecord(a, s), "record");
    for (int i = 0; i < iters; i++)
        op(arg);
    check(cudaEventRecord(b, s), "record");
    check(cudaEventSynchronize(b), "sync");
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms * 1e-3 / iters;
}

struct mt {
    cs_kern_ctx *ctx;
    cs_kern_table *t;
    char *packed, *src;
    size_t bytes;
    int n;
    size_t each;
    cudaStream_t s;
};
static void op_pack(void *p)
{
    struct mt *m = p;
    if (cs_kern_pack(m->ctx, m->t, m->packed))
        failed = 1;
}
static void op_unpack(void *p)
{
    struct mt *m = p;
    if (cs_kern_unpack(m->ctx, m->t, m->packed))
        failed = 1;
}
static void op_memcpy(void *p)
{
    struct mt *m = p;
    check(cudaMemcpyAsync(m->packed, m->src, m->bytes, cudaMemcpyDeviceToDevice, m->s), "memcpy");
}
static void op_memcpys(void *p)
{
    struct mt *m = p;
    for (int i = 0; i < m->n; i++)
        check(cudaMemcpyAsync(m->packed + i * m->each, m->t->bufs[i], m->each, cudaMemcpyDeviceToDevice, m->s),
              "memcpy");
}

static void bench_pack(cs_kern_ctx *ctx, cudaStream_t s, size_t total, int nbufs, size_t misalign)
{
    size_t each = total / nbufs;
    char *src, *packed;
    void **bufs = malloc(nbufs * sizeof *bufs);
    size_t *sizes = malloc(nbufs * sizeof *sizes);
    cs_kern_table t = { bufs, sizes, (size_t)nbufs };
    struct mt m;
    int iters = total >= (64u << 20) ? 20 : 200;
    double tp, tu, tm;

    check(cudaMalloc((void **)&src, total + 4096), "malloc");
    check(cudaMalloc((void **)&packed, total + 4096), "malloc");
    for (int i = 0; i < nbufs; i++) {
        bufs[i] = src + misalign + i * each;
        sizes[i] = each;
    }
    m = (struct mt){ ctx, &t, packed + misalign * 2 % 16, src, each * nbufs, nbufs, each, s };
    tm = time_op(op_memcpy, &m, s, iters);
    tp = time_op(op_pack, &m, s, iters);
    tu = time_op(op_unpack, &m, s, iters);
    printf("pack    %8.2f MB %5d bufs%s: %8.1f GB/s  cudaMemcpy D2D %8.1f GB/s  ratio %.2f (target >= 0.80)\n",
           m.bytes / 1e6, nbufs, misalign ? " misaligned" : "", m.bytes / tp / 1e9, m.bytes / tm / 1e9, tm / tp);
    printf("unpack  %8.2f MB %5d bufs%s: %8.1f GB/s  cudaMemcpy D2D %8.1f GB/s  ratio %.2f (target >= 0.80)\n",
           m.bytes / 1e6, nbufs, misalign ? " misaligned" : "", m.bytes / tu / 1e9, m.bytes / tm / 1e9, tm / tu);
    cudaFree(src);
    cudaFree(packed);
    free(bufs);
    free(sizes);
}

/* 256 buffers: one pack vs 256 cudaMemcpyAsync, wall time including launches. */
static void bench_many(cs_kern_ctx *ctx, cudaStream_t s, size_t each)
{
    enum { N = 256, IT = 100 };
    char *src, *packed;
    void *bufs[N];
    size_t sizes[N];
    cs_kern_table t = { bufs, sizes, N };
    struct mt m;
    double t0, tpack, tcopies;

    check(cudaMalloc((void **)&src, N * each), "malloc");
    check(cudaMalloc((void **)&packed, N * each), "malloc");
    for (int i = 0; i < N; i++) {
        bufs[i] = src + i * each;
        sizes[i] = each;
    }
    m = (struct mt){ ctx, &t, packed, src, N * each, N, each, s };
    op_pack(&m);
    op_memcpys(&m);
    cudaStreamSynchronize(s);
    t0 = now();
    for (int i = 0; i < IT; i++)
        op_pack(&m);
    cudaStreamSynchronize(s);
    tpack = (now() - t0) / IT;
    t0 = now();
    for (int i = 0; i < IT; i++)
        op_memcpys(&m);
    cudaStreamSynchronize(s);
    tcopies = (now() - t0) / IT;
    printf("256 bufs of %6zu B: one pack %8.1f us  256 cudaMemcpyAsync %8.1f us  ratio %.1fx (target >= 10x)\n", each,
           tpack * 1e6, tcopies * 1e6, tcopies / tpack);
    cudaFree(src);
    cudaFree(packed);
}

/* n simulated ranks on one device: one context and stream each. */
static void bench_allreduce(int n)
{
    cs_kern_ctx *ctx[CS_KERN_MAX_RANKS];
    cudaStream_t st[CS_KERN_MAX_RANKS], main_s;
    cs_kern_peers pe[CS_KERN_MAX_RANKS];
    void *out[CS_KERN_MAX_RANKS], *scratch;
    cudaEvent_t start, stop, done[CS_KERN_MAX_RANKS];
    size_t maxb = 1u << 20;

    memset(pe, 0, sizeof pe);
    check(cudaStreamCreateWithFlags(&main_s, cudaStreamNonBlocking), "stream");
    check(cudaMalloc(&scratch, maxb), "malloc");
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int r = 0; r < n; r++) {
        check(cudaMalloc(&pe[0].bufs[r], maxb), "malloc");
        check(cudaMalloc((void **)&pe[0].flags[r], cs_kern_signal_bytes()), "malloc");
        check(cudaMemset(pe[0].flags[r], 0, cs_kern_signal_bytes()), "memset");
        check(cudaMemset(pe[0].bufs[r], 0, maxb), "memset");
        check(cudaMalloc(&out[r], maxb), "malloc");
        check(cudaStreamCreateWithFlags(&st[r], cudaStreamNonBlocking), "stream");
        cudaEventCreateWithFlags(&done[r], cudaEventDisableTiming);
        if (cs_kern_ctx_new(CS_KERN_CUDA, &ctx[r]) != CS_KERN_OK || cs_kern_ctx_set_stream(ctx[r], st[r]) != CS_KERN_OK)
            exit(1);
    }
    for (int r = 0; r < n; r++) {
        pe[r] = pe[0];
        pe[r].nranks = n;
        pe[r].rank = r;
        pe[r].capacity = maxb;
    }
    for (size_t bytes = 8192; bytes <= maxb; bytes *= 4) {
        int iters = 200;
        float ms_ar, ms_cp;
        for (int pass = 0; pass < 2; pass++) { /* warm-up, then timed */
            cudaEventRecord(start, main_s);
            for (int i = 0; i < iters; i++) {
                for (int r = 0; r < n; r++) {
                    cudaEventRecord(done[r], main_s);
                    cudaStreamWaitEvent(st[r], done[r], 0);
                }
                for (int r = 0; r < n; r++)
                    if (cs_kern_allreduce(ctx[r], &pe[r], CS_KERN_AR_ONESHOT, out[r], bytes / 4, CS_KERN_F32, 1.0f))
                        failed = 1;
                for (int r = 0; r < n; r++) {
                    cudaEventRecord(done[r], st[r]);
                    cudaStreamWaitEvent(main_s, done[r], 0);
                }
            }
            cudaEventRecord(stop, main_s);
            check(cudaEventSynchronize(stop), "allreduce");
        }
        cudaEventElapsedTime(&ms_ar, start, stop);
        cudaEventRecord(start, main_s);
        for (int i = 0; i < iters; i++)
            cudaMemcpyAsync(scratch, pe[0].bufs[0], bytes, cudaMemcpyDeviceToDevice, main_s);
        cudaEventRecord(stop, main_s);
        cudaEventSynchronize(stop);
        cudaEventElapsedTime(&ms_cp, start, stop);
        printf(
            "one-shot allreduce %d ranks (one device) %7zu B: %7.2f us  one cudaMemcpyAsync %7.2f us  ratio %.2f  selector: %s\n",
            n, bytes, ms_ar * 1e3 / iters, ms_cp * 1e3 / iters, ms_cp / ms_ar,
            cs_kern_allreduce_select(bytes, n, NULL) == CS_KERN_AR_ONESHOT ? "one-shot" : "two-shot/NCCL");
    }
    for (int r = 0; r < n; r++) {
        cs_kern_ctx_free(ctx[r]);
        cudaFree(pe[0].bufs[r]);
        cudaFree(pe[0].flags[r]);
        cudaFree(out[r]);
        cudaStreamDestroy(st[r]);
        cudaEventDestroy(done[r]);
    }
    cudaFree(scratch);
    cudaStreamDestroy(main_s);
}

int main(void)
{
    struct cudaDeviceProp prop;
    cs_kern_ctx *ctx;
    cudaStream_t s;
    int n = 0, rc;

    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    check(cudaGetDeviceProperties(&prop, 0), "properties");
    printf("device: %s, %d SMs, %.1f GiB\n", prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
    rc = cs_kern_ctx_new(CS_KERN_CUDA, &ctx);
    if (rc != CS_KERN_OK) {
        fprintf(stderr, "kernels_bench: %s\n", cs_kern_strerror(rc));
        return 1;
    }
    cs_kern_ctx_set_stream(ctx, s);
    { /* peak: a large D2D copy */
        size_t big = (size_t)1 << 30;
        struct mt m;
        char *a, *b;
        double t;
        check(cudaMalloc((void **)&a, big), "malloc");
        check(cudaMalloc((void **)&b, big), "malloc");
        m = (struct mt){ ctx, NULL, b, a, big, 0, 0, s };
        t = time_op(op_memcpy, &m, s, 10);
        printf("peak memory bandwidth (cudaMemcpy D2D 1 GiB, read + write): %.1f GB/s\n", 2 * big / t / 1e9);
        cudaFree(a);
        cudaFree(b);
    }
    bench_pack(ctx, s, 1u << 20, 64, 0);
    bench_pack(ctx, s, 16u << 20, 64, 0);
    bench_pack(ctx, s, 256u << 20, 64, 0);
    bench_pack(ctx, s, 256u << 20, 4096, 0);
    bench_pack(ctx, s, 256u << 20, 64, 4);
    bench_many(ctx, s, 4096);
    bench_many(ctx, s, 65536);
    bench_allreduce(2);
    bench_allreduce(8);
    cs_kern_ctx_free(ctx);
    if (failed)
        fprintf(stderr, "kernels_bench: a libcskernels call failed\n");
    return failed;
}
