/* cmd_merge.c: `collscope merge DIR`: the merged DIR/trace.db of a job
 * kept as rank stores and an index (cs_store_job_merge). */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/analysis/csanalysis.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

const cs_optset cs_optset_merge = {
    .prog = "collscope merge",
    .lead = "DIR",
    .about = "Merge the rank stores of a job kept unmerged (DIR/ranks and the job index\n"
             "DIR/index.db, as `collscope run` and `ingest` leave a job past\n"
             "COLLSCOPE_MERGE_MAX bytes or with --no-merge) into one DIR/trace.db, for\n"
             "tools that read one file. DIR/index.db and DIR/results.db are removed\n"
             "once trace.db is whole; the rank stores stay. Every collscope command\n"
             "reads either form, so this is never needed for them.\n"
             "\n"
             "A rank store that is not the one the index records (of another run,\n"
             "stale, or a duplicate of another rank's) is named and left out, as is\n"
             "one missing or unreadable; the index then stays beside the trace.\n"
             "\n"
             "Exit status: 0; 1 when DIR holds no job index, the trace cannot be\n"
             "written, or rank stores were left out (each is named; the trace holds\n"
             "the others and says so); 2 on bad usage.\n",
};

int cs_cmd_merge(int argc, char **argv)
{
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_merge);
    if (cs_opts_next(&p, argc, argv) != CS_OPTS_END || optind != argc - 1) {
        cs_opts_help(stderr, &cs_optset_merge);
        return 2;
    }
    const char *dir = argv[optind];
    char path[4200], err[4096];
    cs_source src;
    if (cs_source_open(dir, &src, err, sizeof err) != 0) {
        cs_error("merge: %s", err);
        return 1;
    }
    if (!src.has_index) {
        cs_error("merge: %s: no job index (%s) there: nothing to merge", dir, CS_STORE_INDEX_FILE);
        return 1;
    }
    struct stat sb;
    snprintf(path, sizeof path, "%s/trace.db", dir);
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        cs_error("merge: %s exists and is no regular file: not replaced", path);
        return 1;
    }
    int nfaults = 0;
    char unknown[256];
    if (cs_store_job_merge(dir, path, &nfaults, unknown, sizeof unknown, err, sizeof err) != 0) {
        cs_error("merge: %s", err);
        return 1;
    }
    cs_store *st;
    char from[8], note[3300] = "";
    if (nfaults && cs_store_open(path, CS_STORE_READ, &st, err, sizeof err) == 0) {
        cs_store_recovered(st, from, sizeof from, note, sizeof note);
        cs_store_close(st);
        cs_error("merge: %s", note);
    }
    if (unknown[0])
        cs_note("merge: %s", unknown);
    /* The index stays while rank stores were left out: it records which
     * process each should hold, for a merge once they are put right. */
    if (!nfaults)
        cs_ingest_remove(dir, CS_STORE_INDEX_FILE);
    cs_ingest_remove(dir, "results.db");
    if (nfaults)
        cs_msg_out("%s (without the rank stores named above; %s/%s kept)", path, dir, CS_STORE_INDEX_FILE);
    else
        cs_msg_out("%s", path);
    return nfaults ? 1 : 0;
}
