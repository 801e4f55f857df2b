#!/bin/sh
# The straggler cases on nonblocking code without step markers under MPICH
# (verdicts_nb.inc.sh). With markers, verdicts_nb_ompi.sh: steps from
# MPI_Pcontrol do not depend on the MPI (the suite's time).
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
VNB_MODES=nomark
. "$S/tests/analysis/verdicts_nb.inc.sh"
