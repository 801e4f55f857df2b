#!/bin/sh
# The four straggler cases and offset recovery under MPICH (verdicts.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
. "$S/tests/analysis/verdicts.inc.sh"
