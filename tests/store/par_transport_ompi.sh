#!/bin/sh
# The MPI transport of the parallel analysis under openmpi (par_transport_mpi.inc.sh).
. "$srcdir/tests/lib.sh"
MPI=openmpi SUF=ompi
. "$S/tests/store/par_transport_mpi.inc.sh"
