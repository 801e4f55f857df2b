/* stubprog.c: a program for stubmpi.c (see there). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double x[3] = { 1.5, 2.5, 3.5 }, y[3] = { 0 };
    int rc = 0;
    for (int i = 0; i < 10; i++)
        rc |= MPI_Allreduce(x, y, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int bad = MPI_Allreduce(x, y, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("stub: rc=%d bad=%d y=%g %g %g\n", rc, bad, y[0], y[1], y[2]);
    MPI_Finalize();
    return 0;
}
