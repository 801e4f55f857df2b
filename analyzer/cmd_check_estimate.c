/* cmd_check_estimate.c: `collscope check-estimate BEFORE AFTER`: the
 * what-if replay's predicted gain checked against a run with the rewrite
 * applied (estimate.c). */
#include "config.h"
#include "analyzer/cli.h"
#include "analyzer/csanalysis.h"
#include "analyzer/numarg.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cs_help_check_estimate[] = "usage: collscope check-estimate BEFORE AFTER [--tolerance PCT] [--json]\n"
                                      "\n"
                                      "Check the what-if replay against reality. BEFORE is a trace of a job\n"
                                      "without apply mode, AFTER a trace of the same job (same program, same\n"
                                      "number of ranks) with apply mode on (COLLSCOPE_FUSE=1 and the settings of\n"
                                      "BEFORE's fusion proposal). Both are analysed first unless current.\n"
                                      "\n"
                                      "The predicted gain per step is BEFORE's what-if replay of its largest\n"
                                      "fusion proposal, for the bucket whose number of calls per step is\n"
                                      "closest to what AFTER issued (its fused calls and the allreduces it left\n"
                                      "alone; when AFTER has no fused call, e.g. the program itself issued\n"
                                      "bigger buckets, the replay in which the members' own calls vanish too);\n"
                                      "the measured gain is BEFORE's median step time minus AFTER's.\n"
                                      "The error is |predicted - measured| / measured. Also printed: the median\n"
                                      "per-step communication time of both runs and their ratio.\n"
                                      "\n"
                                      "  --tolerance PCT  the largest error that passes (default 25)\n"
                                      "  --json           one JSON object (format \"collscope-check-estimate\",\n"
                                      "                   version 1, docs/report-json.md) instead of text\n"
                                      "\n"
                                      "Exit status: 0 when the error is within the tolerance, 1 when not, 2 on\n"
                                      "bad usage or bad input (a trace missing or unreadable, traces of different\n"
                                      "jobs or rank counts, a trace without steps, BEFORE without a fusion\n"
                                      "proposal), with one message.\n";

int cs_cmd_check_estimate(int argc, char **argv)
{
    static const struct option opts[] = { { "tolerance", required_argument, NULL, 't' },
                                          { "json", no_argument, NULL, 'j' },
                                          { NULL, 0, NULL, 0 } };
    double tol = 25;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 't') {
            char err[300];
            if (cs_numarg_double("--tolerance", optarg, 0, 1e9, 1, &tol, err, sizeof err) != 0) {
                cs_error("check-estimate: %s", err);
                return 2;
            }
        } else if (c == 'j') {
            json = 1;
        } else {
            fputs(cs_help_check_estimate, stderr);
            return 2;
        }
    }
    if (optind != argc - 2) {
        fputs(cs_help_check_estimate, stderr);
        return 2;
    }
    char err[1024];
    int rc = cs_estimate_check(argv[optind], argv[optind + 1], tol, json, stdout, stderr, err, sizeof err);
    if (rc == 2)
        cs_error("%s", err);
    return rc;
}
