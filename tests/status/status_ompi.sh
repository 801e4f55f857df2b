#!/bin/sh
# status_ompi.sh: status.inc.sh under Open MPI.
. "$srcdir/tests/lib.sh"
CS_MPI=openmpi
. "$S/tests/status/status.inc.sh"
