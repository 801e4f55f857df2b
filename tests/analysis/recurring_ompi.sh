#!/bin/sh
# The recurring straggler verdict under Open MPI (recurring.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=openmpi
. "$S/tests/analysis/recurring.inc.sh"
