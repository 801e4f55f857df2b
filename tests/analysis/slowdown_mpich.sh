#!/bin/sh
# slowdown_mpich.sh: slowdown.inc.sh under MPICH.
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
. "$S/tests/analysis/slowdown.inc.sh"
