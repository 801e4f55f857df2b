#!/bin/sh
# Fusion proposals and check-estimate against the program's timers, nbloop
# without markers, under MPICH (nb_fusion.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
. "$S/tests/analysis/nb_fusion.inc.sh"
