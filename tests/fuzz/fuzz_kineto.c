/* fuzz_kineto.c: the PyTorch profiler (Kineto) reader as `collscope
 * import` uses it. The bytes become DIR/rank0.json; cs_import_kineto_read
 * turns it into its per-rank store (what each import worker does) and,
 * when that succeeds, the store starts a job store whose collectives
 * without Seq are numbered and that is finished with its indexes (what the
 * import's merge does). */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "analyzer/formats/import.h"
#include "libtrace/store.h"
#include "libtrace/store_bulk.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = cs_fuzz_dir();
    char file[PATH_MAX], rank_db[PATH_MAX], job[PATH_MAX], err[1024];
    cs_fuzz_clear(dir);
    snprintf(file, sizeof file, "%s/rank0.json", dir);
    snprintf(rank_db, sizeof rank_db, "%s/rank0.db", dir);
    snprintf(job, sizeof job, "%s/trace.db", dir);
    if (cs_fuzz_write(file, data, size) != 0)
        return 0;
    cs_import_opts o = { "rank([0-9]+)" };
    cs_import_rank_info info;
    if (cs_import_kineto_read(file, rank_db, &o, &info, err, sizeof err) != CS_IMPORT_OK)
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
    int ndis = 0;
    cs_store_bulk_number_seqs(st, NULL, NULL, &ndis);
    cs_store_finish(st, "fuzz", err, sizeof err);
    cs_store_close(st);
    return 0;
}
