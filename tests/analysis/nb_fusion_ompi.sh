#!/bin/sh
# Fusion proposals and check-estimate against the program's timers, nbloop
# without markers, under Open MPI (nb_fusion.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=openmpi
. "$S/tests/analysis/nb_fusion.inc.sh"
