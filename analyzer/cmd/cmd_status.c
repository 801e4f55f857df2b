/* cmd_status.c: `collscope status`, the command line of status.c. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "common/numarg.h"
#include "analyzer/status/status.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char cs_help_status[] =
    "usage: collscope status DIR [--after SECONDS] [--format text|json] [--watch SECONDS] [-v]\n"
    "\n"
    "The state of a job traced into DIR by `collscope run`, running, hung or\n"
    "dead, read from its per-process logs (DIR/logs; on a shared file system\n"
    "for a job of several nodes): each rank's call in flight and for how long,\n"
    "or what it last did, ranks alike on one line; then the diagnosis:\n"
    "  deadlock      a cycle of ranks waiting on each other (receives and sends\n"
    "                on their peer, collectives on the members not yet there)\n"
    "  mismatch      members of a communicator in different collectives, or\n"
    "                with different roots, at the same sequence number\n"
    "  missing_rank  the members that never entered a collective the others\n"
    "                wait in, and what each of them is doing instead\n"
    "  dead_rank     a process gone without an exit record, or one that exited\n"
    "                without MPI_Finalize while the others go on\n"
    "  compute       a rank outside any traced call while others wait\n"
    "  nccl_stall    an NCCL collective whose GPU work is in flight that long:\n"
    "                the ranks whose work never started on the GPU, or that\n"
    "                never enqueued it, and the ranks waiting for them\n"
    "The job is not disturbed: its logs are only read. `collscope report` of\n"
    "the trace gives the same diagnosis post mortem (its Failures section).\n"
    "A job whose processes are all gone is seen post mortem too: it ended at\n"
    "its last record (its waits end there) and every call in flight is stuck.\n"
    "\n"
    "  --after SECONDS   a call in flight this long is stuck (default 5)\n"
    "  --format F        text (default) or json (for schedulers and scripts)\n"
    "  --watch SECONDS   print again every SECONDS until interrupted\n"
    "  -v                per communicator, each rank's highest sequence number\n"
    "                    entered and completed\n"
    "\n"
    "Exit status: 0 healthy or finished; 1 no logs to read (one message says\n"
    "why); 2 bad usage; 3 a hang or failure found. See docs/hangs.md.\n";

int cs_cmd_status(int argc, char **argv)
{
    static const struct option lo[] = { { "after", required_argument, NULL, 'a' },
                                        { "format", required_argument, NULL, 'f' },
                                        { "watch", required_argument, NULL, 'w' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
    cs_status_opts o = { 5.0, 0, 0 };
    double watch = 0;
    char err[1024];
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hv", lo, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (cs_numarg_double("--after", optarg, 0, 1e9, 0, &o.after_s, err, sizeof err) != 0) {
                cs_error("status: %s", err);
                return 2;
            }
            break;
        case 'f':
            if (strcmp(optarg, "json") == 0)
                o.json = 1;
            else if (strcmp(optarg, "text") != 0) {
                cs_error("status: --format %s: text or json", optarg);
                return 2;
            }
            break;
        case 'w':
            if (cs_numarg_double("--watch", optarg, 0.1, 1e6, 0, &watch, err, sizeof err) != 0) {
                cs_error("status: %s", err);
                return 2;
            }
            break;
        case 'v': o.verbose = 1; break;
        case 'h': fputs(cs_help_status, stdout); return 0;
        default: fputs(cs_help_status, stderr); return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(cs_help_status, stderr);
        return 2;
    }
    for (;;) {
        err[0] = '\0';
        int rc = cs_status_run(argv[optind], &o, stdout, err, sizeof err);
        if (rc == 1)
            cs_error("status: %s", err);
        fflush(stdout);
        if (watch <= 0 || rc == 1)
            return rc;
        usleep((useconds_t)(watch * 1e6));
        if (!o.json)
            printf("\n");
    }
}
