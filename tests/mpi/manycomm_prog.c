/* manycomm_prog: nonblocking allreduces on many communicators, some of
 * them on a subset of the ranks, for apply mode's guard
 * (tests/mpi/fuse_guard_comms.sh). Run on 2 ranks or more.
 *
 * First rank 0 alone gets SOLO communicators (MPI_Comm_split with
 * MPI_UNDEFINED on the others) and runs ROUNDS windows on each, so on rank
 * 0 they are the first communicators with fusable calls; then every rank
 * gets NCOMM communicators (MPI_Comm_dup and MPI_Comm_split, alternately,
 * the splits with the ranks reversed), each used round-robin: ROUNDS
 * times, B MPI_Iallreduce of S bytes of doubles holding whole numbers
 * (exact sums) and one MPI_Waitall. Then half of them are freed, as many
 * new ones made and used the same way, and everything is freed. Every
 * value received is checked; each rank prints
 *
 *   COMMS rank=R comms=N wrong=K checksum=HEX
 *
 * usage: manycomm_prog SOLO NCOMM ROUNDS BUCKETS BYTES */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#pragma GCC diagnostic ignored "-Wstringop-overflow"

static int rank, size;
static long wrong;
static uint64_t h = 1469598103934665603ull;
static int nb, n;
static double *sendb, *recvb;
static MPI_Request *req;

/* One window on comm: B allreduces of round r's values, one Waitall. */
static void window(MPI_Comm comm, int ci, int r)
{
    int cr, cs;
    MPI_Comm_rank(comm, &cr);
    MPI_Comm_size(comm, &cs);
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < n; i++)
            sendb[(size_t)b * n + i] = (double)((cr + 1) * (r + 1) + (ci * 13 + b * 7 + i) % 1000);
    for (int b = 0; b < nb; b++)
        MPI_Iallreduce(sendb + (size_t)b * n, recvb + (size_t)b * n, n, MPI_DOUBLE, MPI_SUM, comm, &req[b]);
    MPI_Waitall(nb, req, MPI_STATUSES_IGNORE);
    double ranks = (double)cs * (cs + 1) / 2;
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < n; i++) {
            double v = recvb[(size_t)b * n + i];
            if (v != ranks * (r + 1) + (double)cs * ((ci * 13 + b * 7 + i) % 1000))
                wrong++;
            unsigned char by[sizeof v];
            memcpy(by, &v, sizeof v);
            for (size_t k = 0; k < sizeof v; k++)
                h = (h ^ by[k]) * 1099511628211ull;
        }
}

static MPI_Comm make(int i)
{
    MPI_Comm c;
    if (i % 2)
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c);
    else
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 6) {
        if (rank == 0)
            fprintf(stderr, "usage: manycomm_prog SOLO NCOMM ROUNDS BUCKETS BYTES\n");
        MPI_Finalize();
        return 2;
    }
    int solo = atoi(argv[1]), ncomm = atoi(argv[2]), rounds = atoi(argv[3]);
    nb = atoi(argv[4]);
    n = atoi(argv[5]) / (int)sizeof(double);
    if (solo < 0 || ncomm < 2 || rounds < 1 || nb < 1 || nb > 4096 || n < 1) {
        MPI_Finalize();
        return 2;
    }
    sendb = malloc(sizeof(double) * (size_t)nb * (size_t)n);
    recvb = malloc(sizeof(double) * (size_t)nb * (size_t)n);
    req = malloc(sizeof(MPI_Request) * (size_t)nb);
    MPI_Comm *c = malloc(sizeof(MPI_Comm) * (size_t)(ncomm + solo + 1));
    if (!sendb || !recvb || !req || !c)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int made = 0;

    /* communicators of rank 0 alone, used first */
    MPI_Comm *s = c + ncomm;
    for (int i = 0; i < solo; i++)
        MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &s[i]);
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < solo; i++)
            if (s[i] != MPI_COMM_NULL)
                window(s[i], 1000 + i, r);
    made += rank == 0 ? solo : 0;

    /* every rank's communicators */
    for (int i = 0; i < ncomm; i++)
        c[i] = make(i);
    made += ncomm;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < ncomm; i++)
            window(c[i], i, r);

    /* half freed, as many new ones */
    for (int i = 0; i < ncomm; i += 2) {
        MPI_Comm_free(&c[i]);
        c[i] = make(i + 1);
        made++;
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < ncomm; i++)
            window(c[i], i, rounds + r);

    for (int i = 0; i < ncomm; i++)
        MPI_Comm_free(&c[i]);
    for (int i = 0; i < solo; i++)
        if (s[i] != MPI_COMM_NULL)
            MPI_Comm_free(&s[i]);
    printf("COMMS rank=%d comms=%d wrong=%ld checksum=%016llx\n", rank, made, wrong, (unsigned long long)h);
    free(sendb);
    free(recvb);
    free(req);
    free(c);
    MPI_Finalize();
    return 0;
}
