/* an_par.c: the analysis of a job kept as rank stores, by the K processes
 * of a cs_par (par.h). */
#include "config.h"
#include "analyzer/csanalysis.h"
#include "analyzer/par.h"

#include <stdlib.h>
#include <string.h>

int cs_analysis_run_par(const char *dir, int force, cs_par *par, FILE *log, char *err, size_t errlen)
{
    /* placeholder until the partitioned passes land: the root analyses,
     * the others wait for its verdict */
    int32_t rc = 0;
    err[0] = '\0';
    if (par->rank == 0)
        rc = cs_analysis_run(dir, force, log, err, errlen);
    void *buf = &rc;
    size_t len = sizeof rc;
    if (par->bcast(par, &buf, &len) != 0) {
        snprintf(err, errlen, "an analysis process stopped");
        return -1;
    }
    if (par->rank != 0) {
        memcpy(&rc, buf, sizeof rc);
        free(buf);
        if (rc < 0)
            snprintf(err, errlen, "the analysis failed (see process 0)");
    }
    return rc;
}
