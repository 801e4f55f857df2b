#!/bin/sh
# The recurring straggler verdict under MPICH (recurring.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
. "$S/tests/analysis/recurring.inc.sh"
