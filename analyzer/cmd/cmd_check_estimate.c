/* cmd_check_estimate.c: `collscope check-estimate BEFORE AFTER`: the gain
 * of a rewrite measured on the program's step time, and the what-if
 * replay's prediction checked against it (estimate.c). */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/report/report.h"
#include "common/numarg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CE_TOLERANCE, CE_MINGAIN, CE_JSON };
static const cs_opt cs_check_estimate_opt[] = {
    [CE_TOLERANCE] = { "tolerance", 0, CS_OPT_REQUIRED, "PCT", NULL, CS_OPT_OWN,
                       "the largest error of the prediction that passes (default 25)" },
    [CE_MINGAIN] = { "min-gain", 0, CS_OPT_REQUIRED, "PCT", NULL, CS_OPT_OWN,
                     "the smallest measured gain, percent of BEFORE's median step time, that confirms "
                     "(default 5)" },
    [CE_JSON] = { "json", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                  "one JSON object (format \"collscope-check-estimate\", version 2, docs/report-json.md) "
                  "instead of text" },
};

const cs_optset cs_optset_check_estimate = {
    .prog = "collscope check-estimate",
    .lead = "BEFORE AFTER",
    .opt = cs_check_estimate_opt,
    .nopt = CS_OPTS_N(cs_check_estimate_opt),
    .about = "Measure the gain of a rewrite on the program's step time and check the\n"
             "what-if replay's prediction against it. BEFORE is a trace of a job without\n"
             "the rewrite, AFTER a trace of the same job (same program, same number of\n"
             "ranks) with it: apply mode on (COLLSCOPE_FUSE=1 and the settings of\n"
             "BEFORE's fusion proposal), or the program issuing the proposed buckets\n"
             "itself. Both are analysed first unless current.\n"
             "\n"
             "Steps: each trace's steps as its analysis found them (MPI_Pcontrol\n"
             "markers, else the detected period of the program's own calls: in an\n"
             "apply-mode trace the calls the program made, not the fused calls apply\n"
             "mode issued itself, so a fused run has its unfused twin's steps); the\n"
             "step time is the wall time from a step's begin to the next one's. Both\n"
             "traces' step counts, median and mean step times are printed. The steps\n"
             "cannot be compared when one trace has fewer than 3, when they were found\n"
             "differently (markers in one, the period in the other) or with different\n"
             "periods, or when the step counts differ by more than 10 %.\n"
             "\n"
             "The measured gain is BEFORE's median step time minus AFTER's. The\n"
             "predicted gain is BEFORE's what-if replay of its fusion proposal, for the\n"
             "bucket whose number of calls per step is closest to what AFTER issued (when\n"
             "AFTER has no fused call, the replay in which the members' own calls\n"
             "vanish too); the error is |predicted - measured| / measured.\n"
             "\n"
             "The gain is confirmed only when the program's step time shows it: the\n"
             "median step time fell by at least --min-gain percent of BEFORE's and the\n"
             "mean step time fell too, and the prediction is within --tolerance. The\n"
             "communication time per step of both runs and their ratio are printed, but\n"
             "never decide.\n"
             "\n",
    .after = "\n"
             "Exit status: 0 confirmed; 1 not confirmed (the step time does not show the\n"
             "gain, or the prediction is outside the tolerance); 2 bad usage or bad input\n"
             "(a trace missing or unreadable, traces of different jobs or rank counts,\n"
             "BEFORE without a fusion proposal); 3 the steps cannot be compared. Statuses\n"
             "2 and 3 come with one message.\n",
};

int cs_cmd_check_estimate(int argc, char **argv)
{
    double tol = 25, min_gain = 5;
    int json = 0, c;
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_check_estimate);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        if (c == CE_TOLERANCE) {
            char err[300];
            if (cs_numarg_double("--tolerance", optarg, 0, 1e9, 1, &tol, err, sizeof err) != 0) {
                cs_error("check-estimate: %s", err);
                return 2;
            }
        } else if (c == CE_MINGAIN) {
            char err[300];
            if (cs_numarg_double("--min-gain", optarg, 0, 100, 1, &min_gain, err, sizeof err) != 0) {
                cs_error("check-estimate: %s", err);
                return 2;
            }
        } else if (c == CE_JSON) {
            json = 1;
        } else {
            cs_opts_help(stderr, &cs_optset_check_estimate);
            return 2;
        }
    }
    if (optind != argc - 2) {
        cs_opts_help(stderr, &cs_optset_check_estimate);
        return 2;
    }
    char err[1024];
    cs_source before, after;
    if (cs_source_open(argv[optind], &before, err, sizeof err) != 0 ||
        cs_source_open(argv[optind + 1], &after, err, sizeof err) != 0) {
        cs_error("%s", err);
        return CS_ESTIMATE_BAD_INPUT;
    }
    int rc = cs_estimate_check(&before, &after, tol, min_gain, json, stdout, stderr, err, sizeof err);
    if (rc == CS_ESTIMATE_BAD_INPUT || rc == CS_ESTIMATE_NOT_COMPARABLE)
        cs_error("%s", err);
    return rc;
}
