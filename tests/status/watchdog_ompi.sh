#!/bin/sh
# watchdog_ompi.sh: watchdog.inc.sh under Open MPI.
. "$srcdir/tests/lib.sh"
CS_MPI=openmpi
. "$S/tests/status/watchdog.inc.sh"
