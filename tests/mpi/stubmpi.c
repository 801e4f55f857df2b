/* stubmpi.c: a test-only stand-in for an MPI library that lacks most of
 * the API: one process, built against MPICH's mpi.h and named like it. It
 * has MPI_Init, MPI_Finalize, MPI_Comm_rank/size, MPI_Allreduce and
 * MPI_Barrier (and their PMPI_ names), nothing else. The preload must run
 * a program linked with it undisturbed. */
#include <mpi.h>
#include <string.h>

#define BOTH(ret, name, params, args) \
    ret P##name params;               \
    ret name params                   \
    {                                 \
        return P##name args;          \
    }                                 \
    ret P##name params

BOTH(int, MPI_Init, (int *argc, char ***argv), (argc, argv))
{
    (void)argc;
    (void)argv;
    return MPI_SUCCESS;
}
BOTH(int, MPI_Finalize, (void), ())
{
    return MPI_SUCCESS;
}
BOTH(int, MPI_Comm_rank, (MPI_Comm c, int *r), (c, r))
{
    (void)c;
    *r = 0;
    return MPI_SUCCESS;
}
BOTH(int, MPI_Comm_size, (MPI_Comm c, int *s), (c, s))
{
    (void)c;
    *s = 1;
    return MPI_SUCCESS;
}
BOTH(int, MPI_Barrier, (MPI_Comm c), (c))
{
    (void)c;
    return MPI_SUCCESS;
}
BOTH(int, MPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (s, r, n, t, op, c))
{
    (void)op;
    (void)c;
    if (t != MPI_DOUBLE)
        return MPI_ERR_TYPE;
    if (s != MPI_IN_PLACE)
        memcpy(r, s, (size_t)n * sizeof(double));
    return MPI_SUCCESS;
}
