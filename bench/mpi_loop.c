/* mpi_loop.c: the cost of one intercepted MPI call, measured in the program.
 *
 * One rank calls MPI_Allreduce on 1 byte (MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD)
 * N times per round, for R rounds, timing each round with CLOCK_MONOTONIC.
 * Run it bare, then with the collscope preload: the difference of the
 * ns/call figures is what the tool adds to every call. Built once per MPI
 * implementation from this one source (bench/mpi_loop_ompi, _mpich).
 *
 * usage: mpi_loop [-n ITERS] [-r ROUNDS] [-w WARMUP] [-l]
 * -l: the limit of a tracer, measured in the same program: around every
 *     call, two timestamps (rdtsc, as the preload reads them on x86-64)
 *     and one 64-byte record stored into a 64 MiB ring mapped ahead, with
 *     its header word stored last (release), as the preload's log does.
 * Output (rank 0), one "key: value" a line:
 *   ns_per_call_median: X     median over the rounds
 *   ns_per_call_min: X        best round
 *   cpu_ns_per_call_min: X    this thread's CPU time a call (CLOCK_THREAD_CPUTIME_ID),
 *                             best round: what the calling thread pays, waits left out
 *   proc_cpu_ns_per_call_min: X  the whole process's CPU time a call
 *                             (CLOCK_PROCESS_CPUTIME_ID), best round: with the
 *                             threads a tracer adds (its log's prefault thread)
 *   calls: N                  MPI_Allreduce calls made in all
 *   maxrss_kb: K              peak resident set of the process (getrusage)
 * Exit status 2 with a message for a bad option. */
#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define ML_MAX_ROUNDS 1000

static double ml_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline uint64_t ml_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* One 64-byte record, like the preload's. */
typedef struct ml_rec {
    uint32_t hdr;
    uint16_t op, tid;
    uint64_t t0, t1, bytes;
    uint32_t count, seq;
    uint16_t comm, dtype;
    uint32_t pad[5];
} ml_rec;
#define ML_RING (1u << 20) /* records: 64 MiB */

static double ml_cpu_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
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
    int limit = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-l") == 0)
            limit = 1;
        else if (i + 1 < argc && strcmp(argv[i], "-n") == 0)
            iters = ml_count("-n", argv[++i], 1L << 40);
        else if (i + 1 < argc && strcmp(argv[i], "-r") == 0)
            rounds = ml_count("-r", argv[++i], ML_MAX_ROUNDS);
        else if (i + 1 < argc && strcmp(argv[i], "-w") == 0)
            warmup = ml_count("-w", argv[++i], 1L << 40);
        else {
            fprintf(stderr, "usage: mpi_loop [-n ITERS] [-r ROUNDS] [-w WARMUP] [-l]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    unsigned char in = 1, out = 0;
    for (long i = 0; i < warmup; i++)
        MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);

    ml_rec *ring = NULL;
    if (limit) {
        ring = mmap(NULL, (size_t)ML_RING * sizeof *ring, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (ring == MAP_FAILED) {
            perror("mpi_loop: mmap");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    double ns[ML_MAX_ROUNDS], cpu_min = 1e300, proc_min = 1e300;
    for (long r = 0; r < rounds; r++) {
        double c0 = ml_cpu_ns(CLOCK_THREAD_CPUTIME_ID), p0 = ml_cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
        double t0 = ml_now_ns();
        if (limit) {
            for (long i = 0; i < iters; i++) {
                ml_rec *rec = &ring[(unsigned long)i & (ML_RING - 1)];
                rec->t0 = ml_ticks();
                MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
                rec->t1 = ml_ticks();
                rec->op = 7;
                rec->count = 1;
                rec->bytes = 1;
                rec->seq = (uint32_t)i;
                __atomic_store_n(&rec->hdr, 1u, __ATOMIC_RELEASE);
            }
        } else {
            for (long i = 0; i < iters; i++)
                MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
        }
        ns[r] = (ml_now_ns() - t0) / (double)iters;
        double c = (ml_cpu_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)iters;
        double p = (ml_cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - p0) / (double)iters;
        if (c < cpu_min)
            cpu_min = c;
        if (p < proc_min)
            proc_min = p;
    }
    qsort(ns, (size_t)rounds, sizeof *ns, ml_cmp_double);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (rank == 0) {
        double med = rounds % 2 ? ns[rounds / 2] : (ns[rounds / 2 - 1] + ns[rounds / 2]) / 2;
        printf("ns_per_call_median: %.2f\n", med);
        printf("ns_per_call_min: %.2f\n", ns[0]);
        printf("cpu_ns_per_call_min: %.2f\n", cpu_min);
        printf("proc_cpu_ns_per_call_min: %.2f\n", proc_min);
        printf("calls: %ld\n", warmup + rounds * iters);
        printf("maxrss_kb: %ld\n", ru.ru_maxrss);
    }
    MPI_Finalize();
    return out == 1 ? 0 : 1;
}
