/* nccl_overhead.c: the CPU cost collscope adds to one intercepted NCCL
 * call, traced and bare in the same process.
 *
 * One rank (a singleton, no launcher) loads libnccl.so.2 at run time (the
 * CPU stand-in: put tests/standins/.libs first on LD_LIBRARY_PATH), makes
 * a communicator of one through the traced entry points, then times
 * rounds of ncclAllReduce(1 float, sum) alternately through the traced
 * entry point (the symbol the process sees: the preload's wrapper) and the
 * bare one (the library's own, dlsym on its handle). With
 * NCCL_PROFILER_PLUGIN naming the preload, the stand-in sends its profiler
 * events to collscope on both paths; only traced calls' events are
 * recorded (bare ones find no call to match), so the difference includes
 * the plugin's matching and its GPUTIME record.
 *
 * usage: nccl_overhead [-n ITERS] [-r ROUNDS] [-w WARMUP]
 * Output, one "key: value" a line:
 *   traced: yes|no          whether the process sees a wrapper (LD_PRELOAD)
 *   profiler_plugin: PATH   NCCL_PROFILER_PLUGIN, or "none"
 *   ns_per_call_bare_median, ns_per_call_traced_median: X   medians of the rounds
 *   added_ns_per_call_median: X   median of the per-pair differences
 *   added_ns_per_call_best: X     best traced round minus best bare round
 *                                 (steadier on a loaded machine)
 *   calls: N                ncclAllReduce calls made in all
 * Exit status 2 for a bad option, 1 when NCCL cannot be used. */
#include <mpi.h>
#include <nccl.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO_MAX_ROUNDS 1000

typedef ncclResult_t (*no_allreduce_t)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                       cudaStream_t);
typedef ncclResult_t (*no_uid_t)(ncclUniqueId *);
typedef ncclResult_t (*no_init_t)(ncclComm_t *, int, ncclUniqueId, int);
typedef ncclResult_t (*no_destroy_t)(ncclComm_t);

static double no_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int no_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double no_median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, no_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long no_count(const char *opt, const char *v, long max)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < 1 || n > max) {
        fprintf(stderr, "nccl_overhead: %s %s: expected a count from 1 to %ld\n", opt, v, max);
        exit(2);
    }
    return n;
}

/* ns per call of one round of `iters` allreduces through f. */
static double no_round(no_allreduce_t f, long iters, float *in, float *out, ncclComm_t comm)
{
    double t0 = no_now_ns();
    for (long i = 0; i < iters; i++)
        f(in, out, 1, ncclFloat32, ncclSum, comm, NULL);
    return (no_now_ns() - t0) / (double)iters;
}

int main(int argc, char **argv)
{
    long iters = 20000, rounds = 31, warmup = 10000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "-n") == 0)
            iters = no_count("-n", argv[++i], 1L << 40);
        else if (i + 1 < argc && strcmp(argv[i], "-r") == 0)
            rounds = no_count("-r", argv[++i], NO_MAX_ROUNDS);
        else if (i + 1 < argc && strcmp(argv[i], "-w") == 0)
            warmup = no_count("-w", argv[++i], 1L << 40);
        else {
            fprintf(stderr, "usage: nccl_overhead [-n ITERS] [-r ROUNDS] [-w WARMUP]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "nccl_overhead: cannot load libnccl.so.2: %s\n", dlerror());
        MPI_Finalize();
        return 1;
    }
    no_allreduce_t bare = (no_allreduce_t)dlsym(lib, "ncclAllReduce");
    no_allreduce_t traced = (no_allreduce_t)dlsym(RTLD_DEFAULT, "ncclAllReduce");
    no_uid_t uid = (no_uid_t)dlsym(RTLD_DEFAULT, "ncclGetUniqueId");
    no_init_t init = (no_init_t)dlsym(RTLD_DEFAULT, "ncclCommInitRank");
    no_destroy_t destroy = (no_destroy_t)dlsym(RTLD_DEFAULT, "ncclCommDestroy");
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    if (!bare || !traced || !uid || !init || !destroy || uid(&id) != ncclSuccess ||
        init(&comm, 1, id, 0) != ncclSuccess) {
        fprintf(stderr, "nccl_overhead: libnccl.so.2 cannot make a communicator of one rank "
                        "(run it on the CPU stand-in: LD_LIBRARY_PATH=BUILD/tests/standins/.libs)\n");
        MPI_Finalize();
        return 1;
    }
    float in = 1, out = 0;
    for (long i = 0; i < warmup; i++) {
        bare(&in, &out, 1, ncclFloat32, ncclSum, comm, NULL);
        traced(&in, &out, 1, ncclFloat32, ncclSum, comm, NULL);
    }
    double b[NO_MAX_ROUNDS], t[NO_MAX_ROUNDS], d[NO_MAX_ROUNDS];
    for (long r = 0; r < rounds; r++) {
        /* Alternate which goes first, so drift favours neither. */
        if (r % 2) {
            t[r] = no_round(traced, iters, &in, &out, comm);
            b[r] = no_round(bare, iters, &in, &out, comm);
        } else {
            b[r] = no_round(bare, iters, &in, &out, comm);
            t[r] = no_round(traced, iters, &in, &out, comm);
        }
        d[r] = t[r] - b[r];
    }
    const char *plugin = getenv("NCCL_PROFILER_PLUGIN");
    printf("traced: %s\n", traced != bare ? "yes" : "no");
    printf("profiler_plugin: %s\n", plugin && *plugin ? plugin : "none");
    printf("ns_per_call_bare_median: %.1f\n", no_median(b, rounds));
    printf("ns_per_call_traced_median: %.1f\n", no_median(t, rounds));
    printf("added_ns_per_call_median: %.1f\n", no_median(d, rounds));
    printf("added_ns_per_call_best: %.1f\n", t[0] - b[0]); /* sorted by no_median */
    printf("calls: %ld\n", 2 * (warmup + rounds * iters));
    destroy(comm);
    MPI_Finalize();
    return out == 1 ? 0 : 1;
}
