/* mpi_loop.c: the cost of one intercepted MPI call, measured in the program.
 *
 * One rank calls MPI_Allreduce on 1 byte (MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD)
 * N times per round, for R rounds, timing each round with CLOCK_MONOTONIC.
 * Run it bare, then with the collscope preload: the difference of the
 * ns/call figures is what the tool adds to every call. Built once per MPI
 * implementation from this one source (bench/mpi_loop_ompi, _mpich).
 *
 * usage: mpi_loop [-n ITERS] [-r ROUNDS] [-w WARMUP]
 * Output (rank 0), one "key: value" a line:
 *   ns_per_call_median: X     median over the rounds
 *   ns_per_call_min: X        best round
 *   calls: N                  MPI_Allreduce calls made in all
 *   maxrss_kb: K              peak resident set of the process (getrusage)
 * Exit status 2 with a message for a bad option. */
#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define ML_MAX_ROUNDS 1000

static double ml_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int ml_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Parse a positive count; exits 2 naming the option on a bad value. */
static long ml_count(const char *opt, const char *v, long max)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < 1 || n > max) {
        fprintf(stderr, "mpi_loop: %s %s: expected a count from 1 to %ld\n", opt, v, max);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    long iters = 2000000, rounds = 5, warmup = 100000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "-n") == 0)
            iters = ml_count("-n", argv[++i], 1L << 40);
        else if (i + 1 < argc && strcmp(argv[i], "-r") == 0)
            rounds = ml_count("-r", argv[++i], ML_MAX_ROUNDS);
        else if (i + 1 < argc && strcmp(argv[i], "-w") == 0)
            warmup = ml_count("-w", argv[++i], 1L << 40);
        else {
            fprintf(stderr, "usage: mpi_loop [-n ITERS] [-r ROUNDS] [-w WARMUP]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    unsigned char in = 1, out = 0;
    for (long i = 0; i < warmup; i++)
        MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);

    double ns[ML_MAX_ROUNDS];
    for (long r = 0; r < rounds; r++) {
        double t0 = ml_now_ns();
        for (long i = 0; i < iters; i++)
            MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
        ns[r] = (ml_now_ns() - t0) / (double)iters;
    }
    qsort(ns, (size_t)rounds, sizeof *ns, ml_cmp_double);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (rank == 0) {
        double med = rounds % 2 ? ns[rounds / 2] : (ns[rounds / 2 - 1] + ns[rounds / 2]) / 2;
        printf("ns_per_call_median: %.2f\n", med);
        printf("ns_per_call_min: %.2f\n", ns[0]);
        printf("calls: %ld\n", warmup + rounds * iters);
        printf("maxrss_kb: %ld\n", ru.ru_maxrss);
    }
    MPI_Finalize();
    return out == 1 ? 0 : 1;
}
