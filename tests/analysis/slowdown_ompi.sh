#!/bin/sh
# slowdown_ompi.sh: slowdown.inc.sh under Open MPI.
. "$srcdir/tests/lib.sh"
CS_MPI=openmpi
. "$S/tests/analysis/slowdown.inc.sh"
