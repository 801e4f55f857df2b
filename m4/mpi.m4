dnl CS_CHECK_MPI: Open MPI and MPICH, each through pkg-config (ompi-c, mpich).
dnl The preload is built once per implementation found, since their handles
dnl (MPI_Comm, MPI_Request, MPI_Status) have different ABIs.
AC_DEFUN([CS_CHECK_MPI], [
  CS_WITH([mpi], [trace MPI (Open MPI and/or MPICH)])
  cs_have_ompi=no; cs_have_mpich=no
  AS_IF([test "x$cs_with_mpi" != xno], [
    PKG_CHECK_MODULES([OMPI], [ompi-c], [cs_have_ompi=yes], [cs_have_ompi=no])
    PKG_CHECK_MODULES([MPICH], [mpich], [cs_have_mpich=yes], [cs_have_mpich=no])
    AS_IF([test $cs_have_ompi = no && test $cs_have_mpich = no], [CS_NOT_FOUND([mpi], [MPI (pkg-config ompi-c or mpich)])])
  ])
  AM_CONDITIONAL([HAVE_OMPI], [test $cs_have_ompi = yes])
  AM_CONDITIONAL([HAVE_MPICH], [test $cs_have_mpich = yes])
  AC_PATH_PROGS([MPIRUN_OMPI], [mpirun.openmpi orterun], [no])
  AC_PATH_PROGS([MPIRUN_MPICH], [mpirun.mpich mpiexec.hydra], [no])
  AC_PATH_PROGS([MPIFC_OMPI], [mpif90.openmpi], [no])
])
