/* fuzz_log.c: the log reader as `collscope ingest` uses it. The bytes
 * become DIR/logs/fuzz.cslog; cs_store_convert_log turns it into its
 * per-rank store (what each ingest worker does) and, when that succeeds,
 * the per-rank store starts a job store that is finished with its indexes
 * and statistics (what the merge does with the first rank). */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "libtrace/store.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = cs_fuzz_dir();
    char logs[PATH_MAX], log[PATH_MAX + 16], job[PATH_MAX + 16], rank_db[PATH_MAX], err[1024];
    cs_fuzz_clear(dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    snprintf(log, sizeof log, "%s/fuzz.cslog", logs);
    snprintf(job, sizeof job, "%s/trace.db", dir);
    if (mkdir(logs, 0700) != 0 || cs_fuzz_write(log, data, size) != 0)
        return 0;
    if (cs_store_convert_log(log, dir, rank_db, err, sizeof err) != 0)
        return 0;
    cs_store *st = NULL;
    int b = cs_store_create_from(job, rank_db, &st, err, sizeof err);
    if (b == 1 && cs_store_create(job, &st, err, sizeof err) == 0 &&
        cs_store_merge(st, rank_db, err, sizeof err) != 0) {
        cs_store_close(st);
        return 0;
    }
    if (b < 0 || !st)
        return 0;
    cs_store_finish(st, "fuzz", err, sizeof err);
    cs_proc *procs = NULL;
    int np = 0;
    if (cs_store_procs(st, &procs, &np) == 0)
        free(procs);
    cs_store_close(st);
    return 0;
}
