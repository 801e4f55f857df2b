/* cmd_ingest.c: `collscope ingest [--force] DIR`: rebuild DIR/trace.db
 * from the process logs (ingest.c). */
#include "config.h"
#include "analyzer/cmd/cli.h"

#include <stdio.h>

enum { IN_FORCE, IN_WAIT, IN_MERGE, IN_NOMERGE };
static const cs_opt cs_ingest_opt[] = {
    [IN_FORCE] = { "force", 'f', CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                   "reconvert every log (default: only logs without a current per-rank file), and accept a "
                   "folder DIR that belongs to another user or that every user may write to" },
    [IN_WAIT] = { "wait", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                  "when another collscope command is using DIR (a run, ingest, import or merge), wait for it "
                  "to end (default: refuse, exit 1)" },
    [IN_MERGE] = { "merge", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN, "always merge the rank stores into DIR/trace.db" },
    [IN_NOMERGE] = { "no-merge", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OR,
                     "leave the rank stores in DIR/ranks and write the job index DIR/index.db instead "
                     "(default: so when the rank stores hold more than COLLSCOPE_MERGE_MAX bytes, 2 GiB unless "
                     "set); every command reads either form (docs/schema.md)" },
};

const cs_optset cs_optset_ingest = {
    .prog = "collscope ingest",
    .tail = "DIR",
    .opt = cs_ingest_opt,
    .nopt = CS_OPTS_N(cs_ingest_opt),
    .about = "Rebuild DIR/trace.db from the per-process logs in DIR/logs. Logs of\n"
             "processes that crashed or were killed (SIGKILL included) are recovered:\n"
             "every span they completed before dying is kept. Each log first becomes\n"
             "DIR/ranks/rank-NNNNNN-PID.db, then all are merged. A log cut short or\n"
             "damaged is kept up to the damage, and named with the spans recovered\n"
             "and what is missing. Logs of one run only are merged: when DIR/logs\n"
             "holds logs of several runs, the run of the newest log is kept and the\n"
             "others are named. Files in DIR/logs that are not regular files are\n"
             "skipped unopened.\n"
             "\n",
    .after = "\n"
             "Exit status: 0 on success; 1 when a log could not be converted, was\n"
             "damaged or was of another run (each is named; the trace holds the\n"
             "others), or none could be read, or DIR is refused or in use; 2 on bad\n"
             "usage.\n",
};

int cs_cmd_ingest(int argc, char **argv)
{
    int force = 0, merge = CS_MERGE_AUTO, wait = 0, c;
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_ingest);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        if (c == IN_FORCE)
            force = 1;
        else if (c == IN_WAIT)
            wait = 1;
        else if (c == IN_MERGE || c == IN_NOMERGE)
            merge = c == IN_MERGE ? CS_MERGE_YES : CS_MERGE_NO;
        else {
            cs_opts_help(stderr, &cs_optset_ingest);
            return 2;
        }
    }
    if (optind != argc - 1) {
        cs_opts_help(stderr, &cs_optset_ingest);
        return 2;
    }
    const char *dir = argv[optind];
    /* Never beside a run still writing its logs. */
    if (cs_cli_lock("ingest", dir, wait) != 0)
        return 1;
    cs_ingest_result r;
    if (cs_ingest_dir(dir, force, merge, NULL, &r) < 0)
        return 1;
    char damaged[64] = "", other[64] = "";
    if (r.damaged)
        snprintf(damaged, sizeof damaged, ", %d damaged", r.damaged);
    if (r.other_run)
        snprintf(other, sizeof other, ", %d of another run left out", r.other_run);
    cs_msg_out("%d process logs (%d recovered after a crash%s%s), %lld spans, %lld dropped -> %s/%s",
               r.logs - r.failed - r.other_run, r.crashed, damaged, other, (long long)r.spans, (long long)r.dropped,
               dir, r.unmerged ? "ranks (index.db)" : "trace.db");
    return r.failed || r.damaged || r.other_run ? 1 : 0;
}
