/* analysis.c: `collscope analyze` in process, the entry point of
 * libcsanalysis for its clients (the command, the TUI's "analyse" key):
 * a trace by this process (an_open.c), a job of rank stores by the
 * parallel steps with this process alone (an_par.c). */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/par.h"

int cs_analysis_run(const cs_source *src, int force, FILE *log, char *err, size_t errlen)
{
    /* A job kept as rank stores: the parallel analysis's steps, by this
     * process alone. It reads the job through a part in the job's folder
     * and writes the wait rows into a store of their own, so that past
     * the 2 GB SQLite maps of a file those rows and the spans it reads do
     * not evict each other from one page cache (docs/scale.md). */
    if (src->kind == CS_SOURCE_JOB) {
        cs_par self;
        cs_par_self(&self);
        return cs_analysis_run_par(src, force, &self, log, err, errlen);
    }
    return cs__an_open_run(src, force, log, err, errlen);
}
