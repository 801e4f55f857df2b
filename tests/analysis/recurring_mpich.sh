#!/bin/sh
# The recurring straggler verdict under MPICH (recurring.inc.sh), blocking
# and nonblocking without markers (with markers: recurring_ompi.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
RECURRING_MARKERS=0
. "$S/tests/analysis/recurring.inc.sh"
