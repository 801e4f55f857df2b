/* par_fork.h: `collscope analyze -j K` without MPI: the parallel
 * analysis (analyzer/analysis/par.h) by K-1 forked worker processes and
 * this one, over socket pairs. */
#ifndef CS_PAR_FORK_H
#define CS_PAR_FORK_H

#include <stdio.h>

#include "analyzer/analysis/par.h"

/* K-1 worker processes forked, each running cs_analysis_run_par with this
 * one as the root. Returns the root's result (a worker that stops is an
 * error). */
int cs_par_fork_run(int k, const cs_source *src, int force, FILE *log, char *err, size_t errlen);

#endif
