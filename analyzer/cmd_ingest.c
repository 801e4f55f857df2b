/* cmd_ingest.c: `collscope ingest [--force] DIR`: rebuild DIR/trace.db
 * from the process logs (ingest.c). */
#include "config.h"
#include "analyzer/cli.h"

#include <getopt.h>
#include <stdio.h>

const char cs_help_ingest[] = "usage: collscope ingest [--force] DIR\n"
                              "\n"
                              "Rebuild DIR/trace.db from the per-process logs in DIR/logs. Logs of\n"
                              "processes that crashed or were killed (SIGKILL included) are recovered:\n"
                              "every span they completed before dying is kept. Each log first becomes\n"
                              "DIR/ranks/rank-NNNNNN-PID.db, then all are merged.\n"
                              "\n"
                              "  --force   reconvert every log (default: only logs without a current\n"
                              "            per-rank file)\n"
                              "\n"
                              "Exit status: 0 on success; 1 when a log could not be converted (each\n"
                              "is named; the trace holds the others) or none could be read; 2 on bad\n"
                              "usage.\n";

int cs_cmd_ingest(int argc, char **argv)
{
    static const struct option opts[] = { { "force", no_argument, NULL, 'f' }, { NULL, 0, NULL, 0 } };
    int force = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f", opts, NULL)) != -1) {
        if (c == 'f')
            force = 1;
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
    cs_ingest_result r;
    if (cs_ingest_dir(dir, force, NULL, &r) < 0)
        return 1;
    printf("collscope: %d process logs (%d recovered after a crash), %lld spans, %lld dropped -> %s/trace.db\n",
           r.logs - r.failed, r.crashed, (long long)r.spans, (long long)r.dropped, dir);
    return r.failed ? 1 : 0;
}
