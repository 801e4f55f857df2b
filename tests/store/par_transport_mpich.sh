#!/bin/sh
# The MPI transport of the parallel analysis under mpich (par_transport_mpi.inc.sh).
. "$srcdir/tests/lib.sh"
MPI=mpich SUF=mpich
. "$S/tests/store/par_transport_mpi.inc.sh"
