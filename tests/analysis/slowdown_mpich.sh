#!/bin/sh
# slowdown_mpich.sh: slowdown.inc.sh under MPICH: the clean run, the slow
# worker and the slow stage (the imbalance, the Kineto twin and the gate:
# slowdown_ompi.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
SLOWDOWN_EXTRAS=0
. "$S/tests/analysis/slowdown.inc.sh"
