/* cmd_status.c: `collscope status`, the command line of status.c. */
#include "config.h"
#include "common/fmt.h"
#include "analyzer/cmd/cli.h"
#include "common/numarg.h"
#include "analyzer/status/status.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { ST_AFTER, ST_FORMAT, ST_WATCH, ST_VERBOSE };
static const cs_opt cs_status_opt[] = {
    [ST_AFTER] = { "after", 0, CS_OPT_REQUIRED, "SECONDS", NULL, CS_OPT_OWN,
                   "a call in flight this long is stuck (default 5)" },
    [ST_FORMAT] = { "format", 0, CS_OPT_REQUIRED, "F", NULL, CS_OPT_OWN,
                    "text (default) or json (for schedulers and scripts)", .values_of = cs_fmt_textjson_values },
    [ST_WATCH] = { "watch", 0, CS_OPT_REQUIRED, "SECONDS", NULL, CS_OPT_OWN,
                   "print again every SECONDS until interrupted" },
    [ST_VERBOSE] = { NULL, 'v', CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                     "per communicator, each rank's highest sequence number entered and completed" },
};

const cs_optset cs_optset_status = {
    .prog = "collscope status",
    .lead = "DIR",
    .opt = cs_status_opt,
    .nopt = CS_OPTS_N(cs_status_opt),
    .about = "The state of a job traced into DIR by `collscope run`, running, hung or\n"
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
             "\n",
    .after = "\n"
             "Exit status: 0 healthy or finished; 1 no logs to read (one message says\n"
             "why); 2 bad usage; 3 a hang or failure found. See docs/hangs.md.\n",
};

int cs_cmd_status(int argc, char **argv)
{
    cs_status_opts o = { 5.0, 0, 0 };
    double watch = 0;
    char err[1024];
    int c;
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_status);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        switch (c) {
        case ST_AFTER:
            if (cs_numarg_double("--after", optarg, 0, 1e9, 0, &o.after_s, err, sizeof err) != 0) {
                cs_error("status: %s", err);
                return 2;
            }
            break;
        case ST_FORMAT:
            if ((o.json = cs_fmt_textjson(optarg)) < 0) {
                char names[128];
                cs_error("status: unknown format '%s' (%s)", optarg, cs_fmt_textjson_names(names, sizeof names, 0));
                return 2;
            }
            break;
        case ST_WATCH:
            if (cs_numarg_double("--watch", optarg, 0.1, 1e6, 0, &watch, err, sizeof err) != 0) {
                cs_error("status: %s", err);
                return 2;
            }
            break;
        case ST_VERBOSE: o.verbose = 1; break;
        default: cs_opts_help(stderr, &cs_optset_status); return 2;
        }
    }
    if (optind != argc - 1) {
        cs_opts_help(stderr, &cs_optset_status);
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
