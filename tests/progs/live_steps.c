/*
 * live_steps: a training-style loop for `collscope top`'s tests: each
 * step starts with MPI_Pcontrol(1) (a step marker, unless --no-markers),
 * "computes" by sleeping --work-us (a sleep, so that ranks sharing few
 * cores do not slow each other), then sums a small gradient with
 * MPI_Allreduce (--buckets of them). From step --slow-from on, rank
 * --slow-rank sleeps --slow-us more per step: it turns slow half-way.
 * --hang-at S: every rank blocks in an MPI_Recv nobody sends at step S.
 *
 *   live_steps [--steps N] [--work-us U] [--buckets B] [--slow-rank R]
 *              [--slow-from S] [--slow-us U] [--no-markers] [--hang-at S]
 *
 * Rank 0 prints "LIVE_STEPS steps=N slow_rank=R slow_from=S" at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

static void nap(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (us > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    long steps = 300, work = 4000, slow_rank = -1, slow_from = -1, slow_us = 0, buckets = 2, hang_at = -1;
    int markers = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long *dst = NULL;
        if (strcmp(a, "--no-markers") == 0) {
            markers = 0;
            continue;
        }
        if (strcmp(a, "--steps") == 0)
            dst = &steps;
        else if (strcmp(a, "--work-us") == 0)
            dst = &work;
        else if (strcmp(a, "--buckets") == 0)
            dst = &buckets;
        else if (strcmp(a, "--slow-rank") == 0)
            dst = &slow_rank;
        else if (strcmp(a, "--slow-from") == 0)
            dst = &slow_from;
        else if (strcmp(a, "--slow-us") == 0)
            dst = &slow_us;
        else if (strcmp(a, "--hang-at") == 0)
            dst = &hang_at;
        if (!dst || i + 1 >= argc) {
            fprintf(stderr, "live_steps: bad argument '%s'\n", a);
            return 2;
        }
        *dst = strtol(argv[++i], NULL, 10);
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double grad[256], sum[256];
    for (int i = 0; i < 256; i++)
        grad[i] = rank + i;
    for (long s = 0; s < steps; s++) {
        if (markers)
            MPI_Pcontrol(1);
        nap(work);
        if (rank == slow_rank && slow_from >= 0 && s >= slow_from)
            nap(slow_us);
        if (s == hang_at) {
            int x;
            MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (long b = 0; b < buckets; b++)
            MPI_Allreduce(grad, sum, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("LIVE_STEPS steps=%ld slow_rank=%ld slow_from=%ld\n", steps, slow_rank, slow_from);
    MPI_Finalize();
    return 0;
}
