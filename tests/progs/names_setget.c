/* names_setget: communicators named the way training code names them.
 *
 * Splits MPI_COMM_WORLD into halves by rank parity, names each half twice
 * with MPI_Comm_set_name (a short name, then a long one: the last one
 * counts), renames MPI_COMM_WORLD, dups the half without naming the dup,
 * runs a few allreduces on each, and prints on every rank what
 * MPI_Comm_get_name gives back and what the calls returned:
 *
 *   names: rank R half='NAME' world='NAME' dup='NAME' rc=RC,RC,RC sum=S
 *
 * so a test can compare a traced run with an untraced one. */
#include <mpi.h>
#include <stdio.h>

#define LONG_NAME "gradient-buckets-of-the-second-half-of-the-layers-0123456"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int rc1 = MPI_Comm_set_name(half, "first");
    int rc2 = MPI_Comm_set_name(half, LONG_NAME);
    int rc3 = MPI_Comm_set_name(MPI_COMM_WORLD, "everyone");
    MPI_Comm_dup(half, &dup);
    double x = rank + 1, y = 0, z = 0;
    for (int i = 0; i < 8; i++) {
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, half);
        MPI_Allreduce(&y, &z, 1, MPI_DOUBLE, MPI_SUM, dup);
    }
    char nh[MPI_MAX_OBJECT_NAME], nw[MPI_MAX_OBJECT_NAME], nd[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(half, nh, &len);
    MPI_Comm_get_name(MPI_COMM_WORLD, nw, &len);
    MPI_Comm_get_name(dup, nd, &len);
    printf("names: rank %d half='%s' world='%s' dup='%s' rc=%d,%d,%d sum=%g\n", rank, nh, nw, nd, rc1, rc2, rc3, z);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
