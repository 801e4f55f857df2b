/* cmd_analyze.c: `collscope analyze [--force] DIR|TRACE.db`: run the
 * cross-rank analysis and store it in the trace (cs_analysis_run). */
#include "config.h"
#include "analyzer/cli.h"
#include "analyzer/csanalysis.h"

#include <getopt.h>
#include <stdio.h>

const char cs_help_analyze[] = "usage: collscope analyze [--force] DIR|TRACE.db\n"
                               "\n"
                               "Run the cross-rank analysis and store it in the trace: clock alignment\n"
                               "(the clocks table), collective instances and their wait states, point-to-\n"
                               "point pairs, steps, per-rank statistics, straggler verdicts and tail\n"
                               "latency (tables instances, waits, p2p, steps, rank_stats, stragglers,\n"
                               "tails), cost models of the collectives, the what-if replay and its\n"
                               "proposals (tables models, proposals; see docs/report-json.md).\n"
                               "`collscope report` and `collscope tui`\n"
                               "read them. A current stored analysis is kept unless --force. A trace\n"
                               "that cannot be written here is refused (report analyses a private copy\n"
                               "of it instead). A trace with damaged pages is never written: what SQLite\n"
                               "can still read of it is copied into STEM.recovered.db beside it and\n"
                               "analysed there, with one message naming the damaged file and what was\n"
                               "kept and lost. A job kept as rank stores (DIR/ranks and DIR/index.db, see\n"
                               "collscope ingest) is read from them, and its analysis stored in\n"
                               "DIR/results.db; a rank store missing or unreadable is named, the others\n"
                               "analysed (exit status 1).\n"
                               "\n"
                               "Exit status: 0; 1 when the trace cannot be read or written, or when it\n"
                               "was damaged and what could be read of it was analysed; 2 on bad usage.\n";

int cs_cmd_analyze(int argc, char **argv)
{
    static const struct option opts[] = { { "force", no_argument, NULL, 'F' }, { NULL, 0, NULL, 0 } };
    int force = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'F')
            force = 1;
        else {
            fputs(cs_help_analyze, stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(cs_help_analyze, stderr);
        return 2;
    }
    char err[1024];
    int rc = cs_analysis_run(argv[optind], force, stderr, err, sizeof err);
    if (rc < 0)
        cs_error("%s", err);
    return rc != 0; /* 1: damaged, the note on stderr said what was analysed */
}
