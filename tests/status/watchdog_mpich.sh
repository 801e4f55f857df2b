#!/bin/sh
# watchdog_mpich.sh: watchdog.inc.sh under MPICH.
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
. "$S/tests/status/watchdog.inc.sh"
