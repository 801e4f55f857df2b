/*
 * nccl_trainer: a small data-parallel trainer on the GPU with NCCL, written
 * as a workload for collscope. One CUDA C source: it trains on a GPU, and
 * under the CPU stand-ins of tests/standins/ (which run each kernel's host
 * twin, NAME__host, exported from this program).
 *
 * Every rank holds the same linear model (IN -> OUT, mean squared error)
 * and its own shard of synthetic data from a fixed seed. Each step runs
 * forward and backward kernels, sums the gradient across ranks with
 * ncclAllReduce (per bucket; buckets > 1 are grouped in ncclGroupStart/End),
 * and takes an SGD step with the mean gradient. MPI only bootstraps: rank 0
 * gets the unique id and broadcasts it, as nccl-tests do.
 *
 * The program counts the traced NCCL, CUDA and MPI calls it makes, per
 * function, and prints them as "calls: rank R name=N ...". See
 * examples/README.md and `nccl_trainer --help`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

/* ---- counted calls ---- */
// clang-format off
#define TR_COUNTED(X) \
  X(MPI_Init) X(MPI_Bcast) X(MPI_Pcontrol) X(MPI_Finalize) \
  X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommSplit) X(ncclCommFinalize) X(ncclCommDestroy) \
  X(ncclAllReduce) X(ncclBroadcast) X(ncclBcast) X(ncclReduce) X(ncclAllGather) X(ncclReduceScatter) \
  X(ncclAlltoAll) X(ncclGather) X(ncclScatter) X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd) \
  X(cudaMalloc) X(cudaFree) X(cudaMemcpy) X(cudaMemcpyAsync) X(cudaMemsetAsync) X(cudaStreamSynchronize) \
  X(cudaDeviceSynchronize) X(__cudaLaunchKernel)
// clang-format on

enum {
#define TR_ENUM(n) TR_##n,
    TR_COUNTED(TR_ENUM)
#undef TR_ENUM
        TR_N
};
static const char *const tr_azName[TR_N] = {
#define TR_NAME(n) #n,
    TR_COUNTED(TR_NAME)
#undef TR_NAME
};
static unsigned long long tr_aCount[TR_N];
static int tr_rank = -1;

static void tr_die(const char *zWhat, long rc)
{
    fprintf(stderr, "nccl_trainer: rank %d: %s failed (%ld)\n", tr_rank, zWhat, rc);
    exit(1);
}

/* CALL(ncclAllReduce, ...): call, count it, stop the job on an error. */
#define CALL(name, ...)                     \
    do {                                    \
        long rc_ = (long)name(__VA_ARGS__); \
        tr_aCount[TR_##name]++;             \
        if (rc_ != 0)                       \
            tr_die(#name, rc_);             \
    } while (0)
/* LAUNCH(kernel, n, stream, args...): a 1-D launch of n threads, counted. */
#define LAUNCH(k, n, s, ...)                                 \
    do {                                                     \
        unsigned n_ = (unsigned)(n);                         \
        k<<<(n_ + 127) / 128, 128, 0, s>>>(n_, __VA_ARGS__); \
        tr_aCount[TR___cudaLaunchKernel]++;                  \
    } while (0)

static void tr_print_counts(void)
{
    char z[4096];
    int n = snprintf(z, sizeof z, "calls: rank %d", tr_rank);
    for (int i = 0; i < TR_N && n < (int)sizeof z; i++)
        if (tr_aCount[i])
            n += snprintf(z + n, sizeof z - n, " %s=%llu", tr_azName[i], tr_aCount[i]);
    printf("%s\n", z);
    fflush(stdout);
}

/* ---- kernels: one body for the device and the host twin ---- */
#define IN 64
#define OUT 8
#define NPARAM (IN * OUT + OUT)

/* A kernel K(unsigned n, args...) runs body K_at(i, args...) for i < n; its
 * host twin K__host(void **args, unsigned nthreads) runs the same body on
 * the CPU (the cudart stand-in calls it). */
#define TR_KERNEL2(K, T1, T2)                                 \
    extern "C" __global__ void K(unsigned n, T1 a1, T2 a2)    \
    {                                                         \
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x;   \
        if (i < n)                                            \
            K##_at(i, a1, a2);                                \
    }                                                         \
    extern "C" void K##__host(void **args, unsigned nthreads) \
    {                                                         \
        unsigned n = *(unsigned *)args[0];                    \
        T1 a1 = *(T1 *)args[1];                               \
        T2 a2 = *(T2 *)args[2];                               \
        for (unsigned i = 0; i < n && i < nthreads; i++)      \
            K##_at(i, a1, a2);                                \
    }
#define TR_KERNEL4(K, T1, T2, T3, T4)                                    \
    extern "C" __global__ void K(unsigned n, T1 a1, T2 a2, T3 a3, T4 a4) \
    {                                                                    \
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x;              \
        if (i < n)                                                       \
            K##_at(i, a1, a2, a3, a4);                                   \
    }                                                                    \
    extern "C" void K##__host(void **args, unsigned nthreads)            \
    {                                                                    \
        unsigned n = *(unsigned *)args[0];                               \
        T1 a1 = *(T1 *)args[1];                                          \
        T2 a2 = *(T2 *)args[2];                                          \
        T3 a3 = *(T3 *)args[3];                                          \
        T4 a4 = *(T4 *)args[4];                                          \
        for (unsigned i = 0; i < n && i < nthreads; i++)                 \
            K##_at(i, a1, a2, a3, a4);                                   \
    }

/* Forward: err[b][o] = x[b] . W[:, o] + bias[o] - y[b][o]. i = b*OUT + o. */
__host__ __device__ static inline void forward_at(unsigned i, const double *w, const double *x, const double *y,
                                                  double *err)
{
    unsigned b = i / OUT, o = i % OUT;
    double s = w[IN * OUT + o];
    for (int k = 0; k < IN; k++)
        s += x[b * IN + k] * w[k * OUT + o];
    err[i] = s - y[i];
}
TR_KERNEL4(forward, const double *, const double *, const double *, double *)

/* Backward: the gradient of the mean squared error over nb samples,
 * parameter j (W[k][o] for j < IN*OUT, bias[o] after). */
__host__ __device__ static inline void backward_at(unsigned j, const double *x, const double *err, double *g,
                                                   unsigned nb)
{
    double s = 0;
    if (j < IN * OUT) {
        unsigned k = j / OUT, o = j % OUT;
        for (unsigned b = 0; b < nb; b++)
            s += x[b * IN + k] * err[b * OUT + o];
    } else {
        unsigned o = j - IN * OUT;
        for (unsigned b = 0; b < nb; b++)
            s += err[b * OUT + o];
    }
    g[j] = 2.0 * s / (double)(nb * OUT);
}
TR_KERNEL4(backward, const double *, const double *, double *, unsigned)

/* SGD with the mean of the summed gradients: w -= lr * g. */
__host__ __device__ static inline void update_at(unsigned j, double *w, const double *g)
{
    w[j] -= g[j];
}
TR_KERNEL2(update, double *, const double *)

/* g *= scale (lr / size), before the update. */
__host__ __device__ static inline void scale_at(unsigned j, double *g, double scale)
{
    g[j] *= scale;
}
TR_KERNEL2(scale, double *, double)

/* Loss of the batch into loss[0] (one thread). */
__host__ __device__ static inline void loss_at(unsigned i, const double *err, double *loss)
{
    (void)i;
    double s = 0;
    for (unsigned k = 0; k < (unsigned)loss[1]; k++)
        s += err[k] * err[k];
    loss[0] = s / loss[1];
}
TR_KERNEL2(loss, const double *, double *)

/* A kernel that holds its stream ns nanoseconds: its first thread waits on
 * the GPU's global timer. The host twin (the stand-ins run kernels when
 * they are enqueued) sleeps. */
extern "C" __global__ void spin(unsigned n, unsigned long long ns)
{
    if (n == 0 || blockIdx.x * blockDim.x + threadIdx.x != 0)
        return;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
}
extern "C" void spin__host(void **args, unsigned nthreads)
{
    (void)nthreads;
    unsigned long long ns = *(unsigned long long *)args[1];
    struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
    nanosleep(&ts, NULL);
}

/* ---- options ---- */
typedef struct Options {
    long nStep, nBatch, nBucket, delayUs, gpuDelayUs, gpuDelayStep;
    int aDelay[64];
    int nDelay;
    int split, allOps, pcontrol;
    double lr;
} Options;

static const char tr_zUsage[] = "usage: nccl_trainer [OPTION]...   (under mpirun; one GPU per rank)\n"
                                "  --steps N            training steps (default 20)\n"
                                "  --batch B            samples per rank and step (default 32)\n"
                                "  --buckets K          K gradient allreduces per step, grouped in\n"
                                "                       ncclGroupStart/End when K > 1 (default 1)\n"
                                "  --split              an ncclCommSplit communicator (even/odd ranks):\n"
                                "                       an allreduce and a broadcast on it every step\n"
                                "  --all-ops            every NCCL collective once per step on the world\n"
                                "                       communicator, and a grouped ncclSend/ncclRecv ring\n"
                                "  --delay-us D         listed ranks sleep D us before the gradient allreduce\n"
                                "  --delay-ranks LIST   ranks to delay, e.g. 1 or 0,3 (default 1)\n"
                                "  --gpu-delay-us D     listed ranks launch a kernel that holds their stream\n"
                                "                       D us before the gradient allreduce of one step\n"
                                "  --gpu-delay-step S   that step (default 1, the second)\n"
                                "  --lr X               learning rate (default 0.05)\n"
                                "  --no-pcontrol        no MPI_Pcontrol(1) step marker at the start of each step\n"
                                "Output: rank 0 prints 'final loss: X', 'weights checksum: H' and 'step time\n"
                                "median: U us' (its own clock, steps after the first); every rank\n"
                                "prints 'calls: rank R name=count ...' (the NCCL, CUDA and MPI calls it made).\n";

static long opt_long(const char *zOpt, const char *zVal, long lo, long hi)
{
    char *zEnd;
    errno = 0;
    long v = zVal ? strtol(zVal, &zEnd, 10) : 0;
    if (!zVal || errno || zEnd == zVal || *zEnd || v < lo || v > hi) {
        fprintf(stderr, "nccl_trainer: %s: '%s' is not an integer in [%ld, %ld]\n", zOpt, zVal ? zVal : "", lo, hi);
        exit(2);
    }
    return v;
}

static void options_parse(Options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->nStep = 20;
    o->nBatch = 32;
    o->nBucket = 1;
    o->gpuDelayStep = 1;
    o->lr = 0.05;
    o->aDelay[0] = 1;
    o->nDelay = 1;
    o->pcontrol = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--steps")) {
            o->nStep = opt_long(a, v, 0, 1L << 30);
            i++;
        } else if (!strcmp(a, "--batch")) {
            o->nBatch = opt_long(a, v, 1, 1 << 16);
            i++;
        } else if (!strcmp(a, "--buckets")) {
            o->nBucket = opt_long(a, v, 1, NPARAM);
            i++;
        } else if (!strcmp(a, "--delay-us")) {
            o->delayUs = opt_long(a, v, 0, 60000000);
            i++;
        } else if (!strcmp(a, "--gpu-delay-us")) {
            o->gpuDelayUs = opt_long(a, v, 0, 600000000);
            i++;
        } else if (!strcmp(a, "--gpu-delay-step")) {
            o->gpuDelayStep = opt_long(a, v, 0, 1L << 30);
            i++;
        } else if (!strcmp(a, "--delay-ranks")) {
            if (!v)
                opt_long(a, v, 0, 0);
            char *zCopy = strdup(v), *zSave = NULL;
            o->nDelay = 0;
            for (char *z = strtok_r(zCopy, ",", &zSave); z && o->nDelay < 64; z = strtok_r(NULL, ",", &zSave))
                o->aDelay[o->nDelay++] = (int)opt_long(a, z, 0, 1 << 20);
            free(zCopy);
            i++;
        } else if (!strcmp(a, "--lr")) {
            char *zEnd;
            o->lr = v ? strtod(v, &zEnd) : 0;
            if (!v || *zEnd || !(o->lr > 0 && o->lr < 10)) {
                fprintf(stderr, "nccl_trainer: --lr: bad value\n");
                exit(2);
            }
            i++;
        } else if (!strcmp(a, "--split"))
            o->split = 1;
        else if (!strcmp(a, "--no-pcontrol"))
            o->pcontrol = 0;
        else if (!strcmp(a, "--all-ops"))
            o->allOps = 1;
        else if (!strcmp(a, "--help")) {
            fputs(tr_zUsage, stdout);
            exit(0);
        } else {
            fprintf(stderr, "nccl_trainer: %s: unknown option (see --help)\n", a);
            exit(2);
        }
    }
}

/* ---- data ---- */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static double rng_uniform(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

int main(int argc, char **argv)
{
    Options o;
    options_parse(&o, argc, argv);
    CALL(MPI_Init, &argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &tr_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nDev = 0;
    if (cudaGetDeviceCount(&nDev) != cudaSuccess || nDev < 1)
        tr_die("cudaGetDeviceCount", nDev);
    if (cudaSetDevice(tr_rank % nDev) != cudaSuccess)
        tr_die("cudaSetDevice", tr_rank % nDev);
    cudaStream_t st;
    if (cudaStreamCreate(&st) != cudaSuccess)
        tr_die("cudaStreamCreate", 0);

    ncclUniqueId id;
    if (tr_rank == 0)
        CALL(ncclGetUniqueId, &id);
    CALL(MPI_Bcast, &id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t world, half = NULL;
    CALL(ncclCommInitRank, &world, size, id, tr_rank);
    if (o.split)
        CALL(ncclCommSplit, world, tr_rank % 2, tr_rank, &half, NULL);

    /* Data: a fixed true model plus noise; this rank's shard. */
    const unsigned nb = (unsigned)o.nBatch;
    size_t nX = (size_t)nb * IN, nY = (size_t)nb * OUT;
    double *hX = (double *)malloc(nX * sizeof(double)), *hY = (double *)malloc(nY * sizeof(double));
    double *hW = (double *)calloc(NPARAM, sizeof(double));
    uint64_t s = 12345 + (uint64_t)tr_rank * 7919;
    for (size_t i = 0; i < nX; i++)
        hX[i] = rng_uniform(&s);
    for (unsigned b = 0; b < nb; b++)
        for (int k = 0; k < OUT; k++) {
            double t = 0.1 * k;
            for (int j = 0; j < IN; j++)
                t += hX[b * IN + j] * (((j * 7 + k * 3) % 11) - 5) * 0.05;
            hY[b * OUT + k] = t + 0.01 * rng_uniform(&s);
        }
    double *dX, *dY, *dW, *dG, *dErr, *dLoss, *dSmall, *dBig;
    CALL(cudaMalloc, (void **)&dX, nX * sizeof(double));
    CALL(cudaMalloc, (void **)&dY, nY * sizeof(double));
    CALL(cudaMalloc, (void **)&dW, NPARAM * sizeof(double));
    CALL(cudaMalloc, (void **)&dG, NPARAM * sizeof(double));
    CALL(cudaMalloc, (void **)&dErr, nY * sizeof(double));
    CALL(cudaMalloc, (void **)&dLoss, 2 * sizeof(double));
    CALL(cudaMalloc, (void **)&dSmall, 64 * sizeof(double));
    CALL(cudaMalloc, (void **)&dBig, 64 * (size_t)size * sizeof(double));
    CALL(cudaMemcpy, dX, hX, nX * sizeof(double), cudaMemcpyHostToDevice);
    CALL(cudaMemcpy, dY, hY, nY * sizeof(double), cudaMemcpyHostToDevice);
    CALL(cudaMemcpyAsync, dW, hW, NPARAM * sizeof(double), cudaMemcpyHostToDevice, st);
    double hLossInit[2] = { 0, (double)nY };
    CALL(cudaMemcpyAsync, dLoss, hLossInit, sizeof hLossInit, cudaMemcpyHostToDevice, st);
    CALL(cudaMemsetAsync, dSmall, 0, 64 * sizeof(double), st);
    CALL(cudaMemsetAsync, dBig, 0, 64 * (size_t)size * sizeof(double), st);
    /* Everyone starts from rank 0's weights. */
    CALL(ncclBroadcast, dW, dW, NPARAM, ncclFloat64, 0, world, st);

    int delayed = 0;
    for (int i = 0; i < o.nDelay; i++)
        delayed |= o.aDelay[i] == tr_rank;
    /* the program's own step times (start of a step to the end of its
     * stream synchronization), for rank 0's 'step time median' */
    double *aStep = (double *)calloc((size_t)o.nStep, sizeof(double));
    for (long step = 0; step < o.nStep; step++) {
        struct timespec ts0, ts1;
        clock_gettime(CLOCK_MONOTONIC, &ts0);
        if (o.pcontrol)
            CALL(MPI_Pcontrol, 1);
        LAUNCH(forward, nY, st, dW, dX, dY, dErr);
        LAUNCH(backward, NPARAM, st, dX, dErr, dG, nb);
        if (delayed && o.delayUs > 0)
            sleep_us(o.delayUs);
        if (delayed && o.gpuDelayUs > 0 && step == o.gpuDelayStep)
            LAUNCH(spin, 1, st, (unsigned long long)o.gpuDelayUs * 1000ull);
        /* Gradient sum, in buckets. */
        long per = (NPARAM + o.nBucket - 1) / o.nBucket;
        if (o.nBucket > 1)
            CALL(ncclGroupStart);
        for (long b = 0, off = 0; b < o.nBucket && off < NPARAM; b++, off += per) {
            long n = off + per > NPARAM ? NPARAM - off : per;
            CALL(ncclAllReduce, dG + off, dG + off, (size_t)n, ncclFloat64, ncclSum, world, st);
        }
        if (o.nBucket > 1)
            CALL(ncclGroupEnd);
        LAUNCH(scale, NPARAM, st, dG, o.lr / size);
        LAUNCH(update, NPARAM, st, dW, dG);
        if (o.split) {
            LAUNCH(loss, 1, st, dErr, dLoss);
            CALL(ncclAllReduce, dLoss, dSmall, 1, ncclFloat64, ncclSum, half, st);
            CALL(ncclBroadcast, dSmall, dSmall, 8, ncclFloat64, 0, half, st);
        }
        if (o.allOps) {
            CALL(ncclBcast, dSmall, 8, ncclFloat64, 0, world, st);
            CALL(ncclReduce, dSmall, dSmall + 8, 8, ncclFloat64, ncclMax, 0, world, st);
            CALL(ncclAllGather, dSmall, dBig, 8, ncclFloat64, world, st);
            CALL(ncclReduceScatter, dBig, dSmall, 8, ncclFloat64, ncclSum, world, st);
            CALL(ncclAlltoAll, dBig, dBig + 32 * (size_t)size, 4, ncclFloat64, world, st);
            CALL(ncclGather, dSmall, dBig, 4, ncclFloat64, 0, world, st);
            CALL(ncclScatter, dBig, dSmall, 4, ncclFloat64, 0, world, st);
            CALL(ncclGroupStart);
            CALL(ncclSend, dSmall, 16, ncclFloat64, (tr_rank + 1) % size, world, st);
            CALL(ncclRecv, dSmall + 16, 16, ncclFloat64, (tr_rank + size - 1) % size, world, st);
            CALL(ncclGroupEnd);
            CALL(cudaMemsetAsync, dBig, 0, 64 * (size_t)size * sizeof(double), st);
        }
        CALL(cudaStreamSynchronize, st);
        clock_gettime(CLOCK_MONOTONIC, &ts1);
        if (aStep)
            aStep[step] = 1e6 * (double)(ts1.tv_sec - ts0.tv_sec) + 1e-3 * (double)(ts1.tv_nsec - ts0.tv_nsec);
    }
    /* Final loss (mean over ranks) and the weights. */
    LAUNCH(forward, nY, st, dW, dX, dY, dErr);
    LAUNCH(loss, 1, st, dErr, dLoss);
    CALL(ncclAllReduce, dLoss, dLoss, 1, ncclFloat64, ncclSum, world, st);
    double hLoss[2];
    CALL(cudaMemcpyAsync, hLoss, dLoss, sizeof hLoss, cudaMemcpyDeviceToHost, st);
    CALL(cudaStreamSynchronize, st);
    CALL(cudaMemcpy, hW, dW, NPARAM * sizeof(double), cudaMemcpyDeviceToHost);
    CALL(cudaDeviceSynchronize);
    if (tr_rank == 0) {
        uint64_t h = 1469598103934665603ULL;
        const unsigned char *p = (const unsigned char *)hW;
        for (size_t i = 0; i < NPARAM * sizeof(double); i++)
            h = (h ^ p[i]) * 1099511628211ULL;
        printf("config: ranks=%d params=%d buckets=%ld steps=%ld batch=%ld\n", size, NPARAM, o.nBucket, o.nStep,
               o.nBatch);
        printf("final loss: %.9f\n", hLoss[0] / size);
        printf("weights checksum: %016llx\n", (unsigned long long)h);
        if (aStep && o.nStep > 1) {
            /* median over the steps after the first (warm-up) */
            long n = o.nStep - 1;
            double *v = aStep + 1;
            for (long i = 1; i < n; i++)
                for (long j = i; j > 0 && v[j] < v[j - 1]; j--) {
                    double t = v[j];
                    v[j] = v[j - 1];
                    v[j - 1] = t;
                }
            printf("step time median: %.1f us\n", n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
        }
    }
    double *aFree[] = { dX, dY, dW, dG, dErr, dLoss, dSmall, dBig };
    for (int i = 0; i < 8; i++)
        CALL(cudaFree, aFree[i]);
    free(aStep);
    if (half) {
        CALL(ncclCommFinalize, half);
        CALL(ncclCommDestroy, half);
    }
    CALL(ncclCommFinalize, world);
    CALL(ncclCommDestroy, world);
    free(hX);
    free(hY);
    free(hW);
    cudaStreamDestroy(st);
    tr_aCount[TR_MPI_Finalize]++; /* counted before it is called */
    tr_print_counts();
    MPI_Finalize();
    return 0;
}
