/* guard_prog: a bucketed gradient loop for apply mode's guard test
 * (tests/mpi/fuse_guard.sh). Each step: compute (sleep), then B
 * MPI_Iallreduce of S bytes of doubles holding whole numbers (sums are
 * exact in any order), one MPI_Waitall. The program times its own MPI
 * calls per step and checks every value it receives; each rank prints
 *
 *   GUARD rank=R steps=N mpi_us_med=X wrong=K checksum=HEX
 *
 * usage: guard_prog STEPS BUCKETS BYTES COMPUTE_US */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#pragma GCC diagnostic ignored "-Wstringop-overflow"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5) {
        if (rank == 0)
            fprintf(stderr, "usage: guard_prog STEPS BUCKETS BYTES COMPUTE_US\n");
        MPI_Finalize();
        return 2;
    }
    int steps = atoi(argv[1]), nb = atoi(argv[2]), n = atoi(argv[3]) / (int)sizeof(double), cus = atoi(argv[4]);
    if (steps < 1 || nb < 1 || nb > 4096 || n < 1) {
        MPI_Finalize();
        return 2;
    }
    double *send = malloc(sizeof(double) * (size_t)nb * (size_t)n);
    double *recv = malloc(sizeof(double) * (size_t)nb * (size_t)n);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)nb);
    double *t = malloc(sizeof(double) * (size_t)steps);
    if (!send || !recv || !req || !t)
        MPI_Abort(MPI_COMM_WORLD, 1);
    uint64_t h = 1469598103934665603ull;
    long wrong = 0;
    for (int s = 0; s < steps; s++) {
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < n; i++)
                send[(size_t)b * n + i] = (double)((rank + 1) * (s + 1) + (b * 7 + i) % 1000);
        if (cus > 0) {
            struct timespec ts = { cus / 1000000, (long)(cus % 1000000) * 1000 };
            nanosleep(&ts, NULL);
        }
        double t0 = now_us();
        for (int b = 0; b < nb; b++)
            MPI_Iallreduce(send + (size_t)b * n, recv + (size_t)b * n, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[b]);
        MPI_Waitall(nb, req, MPI_STATUSES_IGNORE);
        t[s] = now_us() - t0;
        double ranks = (double)size * (size + 1) / 2;
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < n; i++) {
                double v = recv[(size_t)b * n + i];
                if (v != ranks * (s + 1) + (double)size * ((b * 7 + i) % 1000))
                    wrong++;
                unsigned char by[sizeof v];
                memcpy(by, &v, sizeof v);
                for (size_t k = 0; k < sizeof v; k++)
                    h = (h ^ by[k]) * 1099511628211ull;
            }
    }
    qsort(t, (size_t)steps, sizeof *t, cmp);
    printf("GUARD rank=%d steps=%d mpi_us_med=%.1f wrong=%ld checksum=%016llx\n", rank, steps, t[steps / 2], wrong,
           (unsigned long long)h);
    free(send);
    free(recv);
    free(req);
    free(t);
    MPI_Finalize();
    return 0;
}
