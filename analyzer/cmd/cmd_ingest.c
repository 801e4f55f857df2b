/* cmd_ingest.c: `collscope ingest [--force] DIR`: rebuild DIR/trace.db
 * from the process logs (ingest.c). */
#include "config.h"
#include "analyzer/cmd/cli.h"

#include <getopt.h>
#include <stdio.h>

const char cs_help_ingest[] = "usage: collscope ingest [--force] [--wait] [--merge | --no-merge] DIR\n"
                              "\n"
                              "Rebuild DIR/trace.db from the per-process logs in DIR/logs. Logs of\n"
                              "processes that crashed or were killed (SIGKILL included) are recovered:\n"
                              "every span they completed before dying is kept. Each log first becomes\n"
                              "DIR/ranks/rank-NNNNNN-PID.db, then all are merged. A log cut short or\n"
                              "damaged is kept up to the damage, and named with the spans recovered\n"
                              "and what is missing. Logs of one run only are merged: when DIR/logs\n"
                              "holds logs of several runs, the run of the newest log is kept and the\n"
                              "others are named. Files in DIR/logs that are not regular files are\n"
                              "skipped unopened.\n"
                              "\n"
                              "  --force   reconvert every log (default: only logs without a current\n"
                              "            per-rank file), and accept a folder DIR that belongs to\n"
                              "            another user or that every user may write to\n"
                              "  --wait    when another collscope command is using DIR (a run,\n"
                              "            ingest, import or merge), wait for it to end (default:\n"
                              "            refuse, exit 1)\n"
                              "  --merge   always merge the rank stores into DIR/trace.db\n"
                              "  --no-merge  leave the rank stores in DIR/ranks and write the job index\n"
                              "            DIR/index.db instead (default: so when the rank stores hold\n"
                              "            more than COLLSCOPE_MERGE_MAX bytes, 2 GiB unless set); every\n"
                              "            command reads either form (docs/schema.md)\n"
                              "\n"
                              "Exit status: 0 on success; 1 when a log could not be converted, was\n"
                              "damaged or was of another run (each is named; the trace holds the\n"
                              "others), or none could be read, or DIR is refused or in use; 2 on bad\n"
                              "usage.\n";

int cs_cmd_ingest(int argc, char **argv)
{
    static const struct option opts[] = { { "force", no_argument, NULL, 'f' },
                                          { "merge", no_argument, NULL, 'm' },
                                          { "no-merge", no_argument, NULL, 'M' },
                                          { "wait", no_argument, NULL, 'W' },
                                          { NULL, 0, NULL, 0 } };
    int force = 0, merge = CS_MERGE_AUTO, wait = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f", opts, NULL)) != -1) {
        if (c == 'f')
            force = 1;
        else if (c == 'W')
            wait = 1;
        else if (c == 'm' || c == 'M')
            merge = c == 'm' ? CS_MERGE_YES : CS_MERGE_NO;
        else {
            fputs(cs_help_ingest, stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(cs_help_ingest, stderr);
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
