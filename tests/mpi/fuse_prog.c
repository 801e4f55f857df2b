/* fuse_prog: nonblocking allreduces in the patterns apply mode must fuse,
 * and in those it must not (tests/mpi/fuse.sh).
 *
 * Each pattern starts with MPI_Pcontrol(P) so the test can group the trace
 * by pattern. Every result is checked against its exact expected value
 * (integer-valued sums, exact in double) and folded into a checksum of the
 * result bits, printed by rank 0, which must be the same with and without
 * apply mode. Exit 0 when every value was right, 1 otherwise. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, nbad;
static uint64_t sum_bits = 1469598103934665603ull;

static void fold(const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        sum_bits = (sum_bits ^ c[i]) * 1099511628211ull;
}

/* Rank r's element i of call k, and the sum over ranks. */
static double val(int r, int k, int i)
{
    return (double)((r + 1) * (k + 3) + i % 17);
}
static double want(int k, int i)
{
    double s = 0;
    for (int r = 0; r < size; r++)
        s += val(r, k, i);
    return s;
}

static void fill(double *p, int n, int k)
{
    for (int i = 0; i < n; i++)
        p[i] = val(rank, k, i);
}

static void expect(const char *what, const double *p, int n, int k)
{
    for (int i = 0; i < n; i++)
        if (p[i] != want(k, i)) {
            if (nbad++ < 10)
                fprintf(stderr, "fuse_prog: rank %d %s k=%d [%d] = %g, want %g\n", rank, what, k, i, p[i], want(k, i));
            break;
        }
    fold(p, sizeof(double) * (size_t)n);
}

#define NB 40

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int steps = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    double *a[NB], *o[NB];
    for (int k = 0; k < NB; k++) {
        a[k] = malloc(sizeof(double) * 400);
        o[k] = malloc(sizeof(double) * 400);
    }
    MPI_Request rq[NB + 4];
    MPI_Status st[NB + 4];

    for (int step = 0; step < steps; step++) {
        /* 1: a burst of in-place double sums of mixed sizes, one Waitall. */
        MPI_Pcontrol(1);
        for (int k = 0; k < NB; k++) {
            fill(a[k], 1 + k * 7, k);
            MPI_Iallreduce(MPI_IN_PLACE, a[k], 1 + k * 7, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k]);
        }
        MPI_Waitall(NB, rq, st);
        for (int k = 0; k < NB; k++)
            expect("burst", a[k], 1 + k * 7, k);

        /* 2: out-of-place integer sums and maxima (two batches: op differs). */
        MPI_Pcontrol(2);
        int32_t si[20][64], ri[20][64];
        for (int k = 0; k < 20; k++) {
            for (int i = 0; i < 64; i++)
                si[k][i] = (rank + 1) * (k + 1) * 1000 + i;
            MPI_Iallreduce(si[k], ri[k], 64, MPI_INT, k < 12 ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD, &rq[k]);
        }
        MPI_Waitall(20, rq, st);
        for (int k = 0; k < 20; k++) {
            for (int i = 0; i < 64; i++) {
                int64_t w = 0;
                for (int r = 0; r < size; r++)
                    w = k < 12 ? w + (r + 1) * (k + 1) * 1000 + i : (r + 1) * (k + 1) * 1000 + i;
                if (ri[k][i] != w && nbad++ < 10)
                    fprintf(stderr, "fuse_prog: rank %d int k=%d [%d] = %d, want %lld\n", rank, k, i, ri[k][i],
                            (long long)w);
            }
            fold(ri[k], sizeof ri[k]);
        }

        /* 3: a completion call in between: {A, B} and {C, D}, never all four. */
        MPI_Pcontrol(3);
        int flag = 0;
        for (int k = 0; k < 4; k++)
            fill(a[k], 50, k);
        MPI_Iallreduce(MPI_IN_PLACE, a[0], 50, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Iallreduce(MPI_IN_PLACE, a[1], 50, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
        MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
        MPI_Iallreduce(MPI_IN_PLACE, a[2], 50, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[2]);
        MPI_Iallreduce(MPI_IN_PLACE, a[3], 50, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[3]);
        if (!flag)
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        MPI_Waitall(3, &rq[1], st);
        for (int k = 0; k < 4; k++)
            expect("completion-between", a[k], 50, k);

        /* 4: two communicators interleaved: world {X, Z}, dup {Y}. */
        MPI_Pcontrol(4);
        for (int k = 0; k < 3; k++)
            fill(a[k], 30, k);
        MPI_Iallreduce(MPI_IN_PLACE, a[0], 30, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Iallreduce(MPI_IN_PLACE, a[1], 30, MPI_DOUBLE, MPI_SUM, dup, &rq[1]);
        MPI_Iallreduce(MPI_IN_PLACE, a[2], 30, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[2]);
        MPI_Waitall(3, rq, st);
        for (int k = 0; k < 3; k++)
            expect("two-comms", a[k], 30, k);

        /* 5: overlapping buffers: the second call writes where the first
         * reads and writes (both deliver the same values there), so it is
         * not fused. */
        MPI_Pcontrol(5);
        fill(o[0], 60, 5);
        fill(o[1], 60, 5);
        MPI_Iallreduce(o[0], a[0], 60, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Iallreduce(o[1], a[0] + 10, 50, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, st);
        expect("overlap", a[0], 10, 5);

        /* 6: in-place, out-of-place, in-place: never fused together. */
        MPI_Pcontrol(6);
        for (int k = 0; k < 3; k++)
            fill(k == 1 ? o[k] : a[k], 20, k);
        MPI_Iallreduce(MPI_IN_PLACE, a[0], 20, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Iallreduce(o[1], a[1], 20, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
        MPI_Iallreduce(MPI_IN_PLACE, a[2], 20, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[2]);
        MPI_Waitall(3, rq, st);
        for (int k = 0; k < 3; k++)
            expect("inplace-mix", a[k], 20, k);

        /* 7: unsupported types: a pair with MINLOC, and long double (not
         * fused: padding bytes). */
        MPI_Pcontrol(7);
        struct {
            double v;
            int i;
        } pin[8], pout[8];
        for (int i = 0; i < 8; i++) {
            pin[i].v = (double)((rank * 7 + i) % size);
            pin[i].i = rank;
        }
        long double ld[12];
        for (int i = 0; i < 12; i++)
            ld[i] = val(rank, 1, i);
        MPI_Iallreduce(pin, pout, 8, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD, &rq[0]);
        MPI_Iallreduce(MPI_IN_PLACE, ld, 12, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, st);
        for (int i = 0; i < 8; i++) {
            int wr = -1;
            for (int r = 0; r < size && wr < 0; r++)
                if ((r * 7 + i) % size == 0)
                    wr = r;
            if ((pout[i].v != 0 || pout[i].i != wr) && nbad++ < 10)
                fprintf(stderr, "fuse_prog: rank %d minloc [%d] = (%g,%d)\n", rank, i, pout[i].v, pout[i].i);
            fold(&pout[i].v, sizeof pout[i].v);
            fold(&pout[i].i, sizeof pout[i].i);
        }
        for (int i = 0; i < 12; i++) {
            double d = (double)ld[i];
            if (d != want(1, i) && nbad++ < 10)
                fprintf(stderr, "fuse_prog: rank %d long double [%d] = %g\n", rank, i, d);
            fold(&d, sizeof d);
        }

        /* 8: a call above the threshold is not fused: {A}, B, {C}. */
        MPI_Pcontrol(8);
        double *big = malloc(sizeof(double) * 10000);
        fill(a[0], 40, 0);
        fill(big, 10000, 8);
        fill(a[2], 40, 2);
        MPI_Iallreduce(MPI_IN_PLACE, a[0], 40, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Iallreduce(MPI_IN_PLACE, big, 10000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
        MPI_Iallreduce(MPI_IN_PLACE, a[2], 40, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[2]);
        MPI_Waitall(3, rq, st);
        expect("threshold", a[0], 40, 0);
        expect("threshold-big", big, 10000, 8);
        expect("threshold", a[2], 40, 2);
        free(big);

        /* 9: Waitany / Testsome over fused members mixed with a ring's
         * point-to-point requests (which do not start the batch). */
        MPI_Pcontrol(9);
        double sbuf = rank, rbuf = -1;
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        MPI_Irecv(&rbuf, 1, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, &rq[0]);
        for (int k = 1; k <= 4; k++) {
            fill(a[k], 25, k);
            MPI_Iallreduce(MPI_IN_PLACE, a[k], 25, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k]);
        }
        MPI_Isend(&sbuf, 1, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, &rq[5]);
        int left_n = 6, idx, outc, ind[6];
        while (left_n > 3) {
            MPI_Waitany(6, rq, &idx, MPI_STATUS_IGNORE);
            if (idx == MPI_UNDEFINED)
                break;
            left_n--;
        }
        while (left_n > 0) {
            MPI_Testsome(6, rq, &outc, ind, st);
            if (outc == MPI_UNDEFINED)
                break;
            left_n -= outc;
        }
        if (rbuf != left && nbad++ < 10)
            fprintf(stderr, "fuse_prog: rank %d ring got %g\n", rank, rbuf);
        for (int k = 1; k <= 4; k++)
            expect("waitany", a[k], 25, k);

        /* 10: a blocking collective on the communicator in between: {A}, {B}. */
        MPI_Pcontrol(10);
        double one = 1, total = 0;
        fill(a[0], 15, 0);
        fill(a[1], 15, 1);
        MPI_Iallreduce(MPI_IN_PLACE, a[0], 15, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Allreduce(&one, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Iallreduce(MPI_IN_PLACE, a[1], 15, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, st);
        expect("blocking-between", a[0], 15, 0);
        expect("blocking-between", a[1], 15, 1);
        if (total != size && nbad++ < 10)
            fprintf(stderr, "fuse_prog: rank %d blocking allreduce %g\n", rank, total);

        /* 11: each member waited for on its own, in reverse order. */
        MPI_Pcontrol(11);
        for (int k = 0; k < 6; k++) {
            fill(a[k], 10, k);
            MPI_Iallreduce(MPI_IN_PLACE, a[k], 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k]);
        }
        for (int k = 5; k >= 0; k--) {
            MPI_Wait(&rq[k], &st[k]);
            if (rq[k] != MPI_REQUEST_NULL && nbad++ < 10)
                fprintf(stderr, "fuse_prog: rank %d request %d not freed by MPI_Wait\n", rank, k);
        }
        for (int k = 0; k < 6; k++)
            expect("wait-each", a[k], 10, k);

        /* 12: polled with MPI_Request_get_status only, then freed by Wait. */
        MPI_Pcontrol(12);
        for (int k = 0; k < 3; k++) {
            fill(a[k], 33, k);
            MPI_Iallreduce(MPI_IN_PLACE, a[k], 33, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k]);
        }
        for (int k = 0; k < 3; k++) {
            int done = 0;
            while (!done)
                MPI_Request_get_status(rq[k], &done, MPI_STATUS_IGNORE);
            MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
        }
        for (int k = 0; k < 3; k++)
            expect("get-status", a[k], 33, k);
    }

    int bad = nbad, allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    uint64_t mine = sum_bits, *all = malloc(sizeof(uint64_t) * (size_t)size);
    MPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        uint64_t c = 0;
        for (int r = 0; r < size; r++)
            c = c * 31 + all[r];
        printf("fuse_prog: checksum %016llx wrong values %d\n", (unsigned long long)c, allbad);
    }
    free(all);
    MPI_Comm_free(&dup);
    for (int k = 0; k < NB; k++) {
        free(a[k]);
        free(o[k]);
    }
    MPI_Finalize();
    return allbad ? 1 : 0;
}
