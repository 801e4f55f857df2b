/* errnorc.c: prints what MPI gives the application (return codes, errno,
 * statuses) so a test can compare a traced run with an untraced one. It
 * also exits with status 3, which the tool must pass on. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = rank, y = 0;
    errno = EAGAIN;
    int rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int e1 = errno;
    /* Invalid: a destination rank that does not exist. */
    errno = EINTR;
    int bad = MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    int e2 = errno;
    int cls = -1;
    MPI_Error_class(bad, &cls);
    /* Invalid: a negative count. */
    int bad2 = MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Request rq;
    MPI_Status st;
    int flag = 0;
    MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rq);
    MPI_Send(&rank, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD);
    while (!flag)
        MPI_Test(&rq, &flag, &st);
    printf(
        "rank %d: allreduce rc=%d y=%d errno=%d; bad send class=%d errno=%d; bad bcast rc!=0:%d; recv from %d tag %d\n",
        rank, rc, y, e1, cls, e2, bad2 != MPI_SUCCESS, st.MPI_SOURCE, st.MPI_TAG);
    MPI_Finalize();
    return 3;
}
