/* fuse_prog.c: grouped bursts of small ncclAllReduce calls, for the tests
 * of apply mode's NCCL fusion (tests/nccl/fuse.sh under the CPU stand-ins,
 * tests/gpu/run.sh on a GPU). Any number of ranks (MPI shares the NCCL id).
 *
 * Each step, in one ncclGroupStart/End on communicator A and stream 1:
 * NF float32 sums and NI int32 sums of different sizes (interleaved), then
 * one float32 sum on stream 2, one on communicator B (a split of A), one
 * larger than the default fusion threshold; then one small call outside any
 * group. --mode adds, inside the group:
 *   overlap  a call whose receive buffer is call 0's send buffer
 *   inplace  three in-place float32 sums (mixed with the out-of-place
 *            ones) and three in-place float32 max calls (in-place only)
 *   dtype    three 8-bit float (e4m3) max calls
 * and --mode guard leaves out the call over the threshold (its cost would
 * hide the others' in tests/nccl/fuse_guard.sh).
 * Values are multiples of 1/4 small enough that every sum is exact in any
 * order, so results are bit-identical whatever the reduction order.
 * Prints "checksum: HEX" (FNV-1a of every result byte) and "comm_us_med: N"
 * (the median over the steps of rank 0's own time from ncclGroupStart to
 * the end of the step's stream synchronizations, microseconds) on rank 0,
 * and "calls: rank R ncclAllReduce=N grouped=M" on every rank; and on rank 0,
 * "step: N US" for each step (that step's time as above). Exit 0, or 1
 * with a message on any failing call. */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NF 24
#define NI 8
#define NCALL (NF + NI)
#define BIG 40000 /* floats: 160000 bytes, over the 64 KiB default threshold */
#define NX 3      /* extra calls of a mode */

#define CHECK_CUDA(x)                                                           \
    do {                                                                        \
        cudaError_t e_ = (x);                                                   \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "fuse_prog: %s: %s\n", #x, cudaGetErrorString(e_)); \
            exit(1);                                                            \
        }                                                                       \
    } while (0)
#define CHECK_NCCL(x)                                                           \
    do {                                                                        \
        ncclResult_t r_ = (x);                                                  \
        if (r_ != ncclSuccess) {                                                \
            fprintf(stderr, "fuse_prog: %s: %s\n", #x, ncclGetErrorString(r_)); \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

static long ncalls, ngrouped;

static void allreduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c, cudaStream_t st,
                      int grouped)
{
    CHECK_NCCL(ncclAllReduce(s, r, n, t, op, c, st));
    ncalls++;
    ngrouped += grouped;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

int main(int argc, char **argv)
{
    int steps = 3;
    const char *mode = "none";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
            mode = argv[++i];
        else {
            fprintf(stderr, "usage: fuse_prog [--steps N] [--mode none|overlap|inplace|dtype|guard]\n");
            return 2;
        }
    }
    int overlap = !strcmp(mode, "overlap"), inplace = !strcmp(mode, "inplace"), dtype = !strcmp(mode, "dtype"),
        guard = !strcmp(mode, "guard");
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0)
        CHECK_CUDA(cudaSetDevice(rank % ndev));
    ncclUniqueId id;
    if (rank == 0)
        CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t ca, cb;
    CHECK_NCCL(ncclCommInitRank(&ca, size, id, rank));
    CHECK_NCCL(ncclCommSplit(ca, 0, rank, &cb, NULL));
    cudaStream_t s1, s2;
    CHECK_CUDA(cudaStreamCreate(&s1));
    CHECK_CUDA(cudaStreamCreate(&s2));

    /* The calls' element counts and places (in 4-byte elements) in one
     * send area and one receive area. */
    size_t cnt[NCALL + 4], off[NCALL + 4], total = 0;
    for (int i = 0; i < NCALL + 4; i++) {
        cnt[i] = i == NCALL + 2 ? BIG : 5 + (size_t)((i * 37) % 61) * 7;
        off[i] = total;
        total += cnt[i] + 3; /* a gap: no two calls touch */
    }
    size_t xoff = total, xcnt = 96;
    total += 2 * NX * (xcnt + 8);
    size_t bytes = total * 4;
    char *hs = malloc(bytes), *hr = malloc(bytes);
    void *ds, *dr;
    if (!hs || !hr)
        return 1;
    CHECK_CUDA(cudaMalloc(&ds, bytes));
    CHECK_CUDA(cudaMalloc(&dr, bytes));
    uint64_t sum = 0xcbf29ce484222325ull;
    double *comm_us = malloc((size_t)(steps > 0 ? steps : 1) * sizeof *comm_us);
    if (!comm_us)
        return 1;
    for (int step = 0; step < steps; step++) {
        for (size_t e = 0; e < total; e++) {
            float v = (float)((rank + 1) * 0.25 + (double)((e + (size_t)step) % 50) * 0.5), m = -1.0f;
            memcpy(hs + 4 * e, &v, 4);
            memcpy(hr + 4 * e, e >= xoff && inplace ? &v : &m, 4);
        }
        for (int i = 3; i < NCALL; i += 4) /* the int32 calls' buffers */
            for (size_t e = off[i]; e < off[i] + cnt[i]; e++) {
                int32_t v = (int32_t)(rank * 1000 + (int)(e % 977) - 300 + step);
                memcpy(hs + 4 * e, &v, 4);
            }
        if (dtype) /* 8-bit floats: positive values 0x08..0x6f, by rank */
            for (size_t e = 0; e < NX * (xcnt + 8) * 4; e++)
                hs[4 * xoff + e] = (char)(0x08 + (int)((e * 13 + (size_t)rank * 29 + (size_t)step) % 0x68));
        CHECK_CUDA(cudaMemcpy(ds, hs, bytes, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(dr, hr, bytes, cudaMemcpyHostToDevice));
        float *S = ds, *R = dr;
        double t0 = now_us();
        CHECK_NCCL(ncclGroupStart());
        for (int i = 0; i < NCALL; i++) {
            int isint = i % 4 == 3; /* NI = 8 of them */
            allreduce(S + off[i], R + off[i], cnt[i], isint ? ncclInt32 : ncclFloat32, ncclSum, ca, s1, 1);
        }
        allreduce(S + off[NCALL], R + off[NCALL], cnt[NCALL], ncclFloat32, ncclSum, ca, s2, 1);
        allreduce(S + off[NCALL + 1], R + off[NCALL + 1], cnt[NCALL + 1], ncclFloat32, ncclSum, cb, s1, 1);
        if (!guard)
            allreduce(S + off[NCALL + 2], R + off[NCALL + 2], cnt[NCALL + 2], ncclFloat32, ncclSum, ca, s1, 1);
        if (overlap) /* receives into call 0's send buffer */
            allreduce(S + xoff, S + off[0], cnt[0], ncclFloat32, ncclSum, ca, s1, 1);
        for (int k = 0; k < NX && inplace; k++)
            allreduce(R + xoff + k * (xcnt + 8), R + xoff + k * (xcnt + 8), xcnt, ncclFloat32, ncclSum, ca, s1, 1);
        for (int k = NX; k < 2 * NX && inplace; k++)
            allreduce(R + xoff + k * (xcnt + 8), R + xoff + k * (xcnt + 8), xcnt, ncclFloat32, ncclMax, ca, s1, 1);
        for (int k = 0; k < NX && dtype; k++)
            allreduce(S + xoff + k * (xcnt + 8), R + xoff + k * (xcnt + 8), xcnt * 4, ncclFloat8e4m3, ncclMax, ca, s1,
                      1);
        CHECK_NCCL(ncclGroupEnd());
        /* Outside any group: never fused. */
        allreduce(S + off[NCALL + 3], R + off[NCALL + 3], cnt[NCALL + 3], ncclFloat32, ncclSum, ca, s1, 0);
        CHECK_CUDA(cudaStreamSynchronize(s1));
        CHECK_CUDA(cudaStreamSynchronize(s2));
        comm_us[step] = now_us() - t0;
        if (rank == 0)
            printf("step: %d %.0f\n", step, comm_us[step]);
        CHECK_CUDA(cudaMemcpy(hr, dr, bytes, cudaMemcpyDeviceToHost));
        sum = fnv(sum, hr, bytes);
        if (overlap) { /* call 0's send buffer now holds the extra call's result */
            CHECK_CUDA(cudaMemcpy(hs, ds, bytes, cudaMemcpyDeviceToHost));
            sum = fnv(sum, hs + 4 * off[0], 4 * cnt[0]);
        }
    }
    unsigned long long mine = sum, *all = malloc((size_t)size * sizeof *all);
    if (!all)
        return 1;
    MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    qsort(comm_us, (size_t)steps, sizeof *comm_us, cmp_double);
    if (rank == 0) {
        printf("checksum: %016llx\n", (unsigned long long)fnv(0xcbf29ce484222325ull, all, (size_t)size * sizeof *all));
        if (steps > 0)
            printf("comm_us_med: %.0f\n", comm_us[steps / 2]);
    }
    free(comm_us);
    free(all);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("calls: rank %d ncclAllReduce=%ld grouped=%ld\n", rank, ncalls, ngrouped);
    fflush(stdout);
    CHECK_CUDA(cudaFree(ds));
    CHECK_CUDA(cudaFree(dr));
    CHECK_NCCL(ncclCommDestroy(cb));
    CHECK_NCCL(ncclCommDestroy(ca));
    free(hs);
    free(hr);
    MPI_Finalize();
    return 0;
}
