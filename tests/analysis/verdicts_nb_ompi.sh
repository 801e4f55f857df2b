#!/bin/sh
# The straggler cases on nonblocking code without step markers under Open MPI
# (verdicts_nb.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=openmpi
. "$S/tests/analysis/verdicts_nb.inc.sh"
