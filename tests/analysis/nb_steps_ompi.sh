#!/bin/sh
# Steps without markers and nonblocking collectives under Open MPI (nb_steps.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=openmpi
. "$S/tests/analysis/nb_steps.inc.sh"
