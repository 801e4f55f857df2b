#!/bin/sh
# The straggler cases on nonblocking code without step markers under MPICH
# (verdicts_nb.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
. "$S/tests/analysis/verdicts_nb.inc.sh"
