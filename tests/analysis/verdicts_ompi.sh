#!/bin/sh
# The four straggler cases and offset recovery under Open MPI (verdicts.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=openmpi
. "$S/tests/analysis/verdicts.inc.sh"
