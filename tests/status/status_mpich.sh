#!/bin/sh
# status_mpich.sh: status.inc.sh under MPICH.
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
. "$S/tests/status/status.inc.sh"
