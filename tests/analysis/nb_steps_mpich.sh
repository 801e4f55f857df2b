#!/bin/sh
# Steps without markers and nonblocking collectives under MPICH (nb_steps.inc.sh).
. "$srcdir/tests/lib.sh"
CS_MPI=mpich
. "$S/tests/analysis/nb_steps.inc.sh"
