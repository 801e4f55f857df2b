/* cmd_report.c: `collscope report DIR|TRACE.db`: where the communication
 * time went (the trace, then its stored analysis, analysed first unless
 * current), in one of four formats, with optional gates against a
 * baseline. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/formats/outfile.h"
#include "analyzer/report/report.h"
#include "common/path.h"
#include "libtrace/dirlock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* `collscope report`'s options: its parser and its --help (common/opts.h). */
enum { RO_FORMAT, RO_OUTPUT, RO_BASELINE, RO_FAILON, RO_FULL };
static const cs_opt cs_report_opt[] = {
    [RO_FORMAT] = { "format", 0, CS_OPT_REQUIRED, "FMT", NULL, CS_OPT_OWN,
                    "text (default), json (format \"collscope-report\", version 2, docs/report-json.md), "
                    "markdown (a CI job summary; md for short) or junit (JUnit XML, one test case per gate, "
                    "and a failing one per failure of the job)",
                    .values_of = cs_report_format_values },
    [RO_OUTPUT] = { "output", 'o', CS_OPT_REQUIRED, "FILE", NULL, CS_OPT_OWN,
                    "write the report to FILE (replaced once complete; never through a symlink) instead of "
                    "standard output (-o -)" },
    [RO_BASELINE] = { "baseline", 0, CS_OPT_REQUIRED, "DIR", NULL, CS_OPT_OWN,
                      "a run to compare with (for the p99 and step gates)" },
    [RO_FAILON] = { "fail-on", 0, CS_OPT_REQUIRED, "GATES", NULL, CS_OPT_OWN,
                    "comma-separated gates; any that fails makes the exit status 3:\n"
                    "  straggler=PCT\ta straggler costs more than PCT % of the median step time\n"
                    "  p99=PCT\ta collective group's p99 grew more than PCT % over the baseline\n"
                    "  step=PCT\tthe median step time grew more than PCT % over the baseline\n"
                    "  slowdown=PCT\tthe job is more than PCT % slower than with ideal durations (S - 1; "
                    "the Slowdown section, docs/analysis.md)\n"
                    "  exposed-comm=PCT\ta rank's GPU spends more than PCT % of its window in communication "
                    "with no compute beside it (GPU time)\n"
                    "  verdict\tany straggler verdict at all\n"
                    "  failures\tthe job hung or failed (the Failures section: calls that never returned, "
                    "ranks dead or gone without MPI_Finalize; docs/hangs.md)\n"
                    "  KIND=PCT\ta verdict of that kind (persistent, transient, slow_link, slow_collective) "
                    "costs more than PCT % of the median step time; recurring=PCT: a recurring straggler's "
                    "total costs more than PCT % of the time of all steps" },
    [RO_FULL] = { "full", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                  "text: also the sections that say nothing for this trace (cost models fitted from one "
                  "message size only, clocks that no offset or drift moved) and every communicator and call "
                  "site (else the 8 and 20 costliest)" },
};

const cs_optset cs_optset_report = {
    .prog = "collscope report",
    .lead = "DIR|TRACE.db",
    .opt = cs_report_opt,
    .nopt = CS_OPTS_N(cs_report_opt),
    .about = "The text report leads with the answer: what limits the job (the culprit\n"
             "rank with its dp/pp/tp coordinates and pipeline stage, or \"no single\n"
             "culprit\"), the slowdown S, what fixing it would save per step, and where\n"
             "(its costliest kernel, the op and call site the others wait in); then\n"
             "the evidence, always in this order: slowdown, stragglers, steps, layout,\n"
             "wait states, tail latency, per op, communicator, call site and rank, GPU\n"
             "time and kernels, what-if replay and proposals, cost models, clocks,\n"
             "what is missing, gates. Each column of times or sizes has one unit,\n"
             "named in its header; each sentence one unit. The terms are defined in\n"
             "the glossary of docs/guide.md.\n"
             "\n"
             "Summarize a trace: for each op, communicator and call site the number of\n"
             "calls, the bytes, and the total, p50, p90, p99 and maximum time; for each\n"
             "rank the share of its wall time spent inside traced calls. Then the\n"
             "cross-rank analysis (run and stored first unless current, as by\n"
             "`collscope analyze`; in a private copy in $TMPDIR when the trace cannot\n"
             "be written here): aligned clocks, straggler verdicts with evidence,\n"
             "steps, who made the others wait, and tail latency per collective group;\n"
             "the cost model of each collective, the what-if replay (its error against\n"
             "the measured step time) and the proposals it estimates (fusion with the\n"
             "apply-mode settings, overlap), each with evidence and gain per step.\n"
             "A job that hung or failed gets a Failures section first: the diagnosis\n"
             "of `collscope status` made from the trace (calls that never returned,\n"
             "processes that died or exited without MPI_Finalize; docs/hangs.md).\n"
             "\n",
    .after = "\n"
             "A trace with damaged pages (a bad disk, a torn copy) is not refused: what\n"
             "SQLite can still read of it is copied into STEM.recovered.db beside it (a\n"
             "private file when the folder cannot be written; the damaged file is only\n"
             "read) and reported, with one message naming the damaged file and what was\n"
             "kept and lost, and a note in the report. A job kept as rank stores\n"
             "(DIR/ranks and DIR/index.db) reads as its merged trace would; a rank\n"
             "store missing or unreadable is named (stderr and the report's notes) and\n"
             "the others reported, with exit status 1 as for a damaged trace.\n"
             "\n"
             "A folder that a collscope command is still writing (a run, an ingest,\n"
             "an import or a merge holds DIR/collscope.lock) is not read: one message\n"
             "says the run is in progress and names it; so does a report whose trace\n"
             "such a command removes while it is read.\n"
             "\n"
             "Exit status: 0; 1 when the trace cannot be read (one message names the\n"
             "file and the problem) or its folder is in use, or when it was damaged\n"
             "and the report is of what could be read of it; 2 on bad usage; 3 when\n"
             "a gate failed (also on a damaged trace).\n",
};

int cs_report_parse_opts(int argc, char **argv, cs_report_opts *o)
{
    cs_opts_parser p;
    int c;
    *o = (cs_report_opts){ .format = "text" };
    cs_opts_begin(&p, &cs_optset_report); /* a full reset: the parser may run more than once in a process */
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        switch (c) {
        case RO_FORMAT: o->format = optarg; break;
        case RO_OUTPUT: o->outpath = optarg; break;
        case RO_BASELINE: o->baseline = optarg; break;
        case RO_FAILON: o->failon = optarg; break;
        case RO_FULL: o->full = 1; break;
        default: cs_opts_help(stderr, &cs_optset_report); return 2;
        }
    }
    if (optind != argc - 1) {
        cs_opts_help(stderr, &cs_optset_report);
        return 2;
    }
    o->trace = argv[optind];
    if (!cs_report_format(o->format)) {
        char names[128];
        cs_error("report: unknown format '%s' (%s)", o->format, cs_report_format_names(names, sizeof names, 0));
        return 2;
    }
    return 0;
}

/* Is a collscope command (a run, an ingest) still writing the folder of
 * trace (arg: a folder, or a file in one, which may be gone: a run
 * removes the trace it replaces)? Then say so once: 1. */
static int cs_report_busy(const char *arg)
{
    char dir[4096], who[1024];
    struct stat sb;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(dir, sizeof dir, "%s", arg);
    else
        cs_path_folder(arg, dir, sizeof dir);
    if (!cs_dirlock_test(dir, who, sizeof who))
        return 0;
    cs_error("report: %s: a run is in progress there (%s): report it once it has ended", dir, who);
    return 1;
}

int cs_cmd_report(int argc, char **argv)
{
    cs_report_opts o;
    int prc = cs_report_parse_opts(argc, argv, &o);
    if (prc != 0)
        return prc;
    const char *outpath = o.outpath, *baseline = o.baseline, *failon = o.failon;
    cs_report_writer writer = cs_report_format(o.format);
    cs_report_data ad, bd;
    cs_report_trace tr;
    memset(&ad, 0, sizeof ad);
    memset(&bd, 0, sizeof bd);
    memset(&tr, 0, sizeof tr);
    cs_gate *gates = NULL;
    int ngates = 0, rc = 1;
    char err[1024] = "";
    cs_store *st = NULL;
    cs_source src, base;
    int base_partial = 0;
    if (baseline) {
        int r = cs_source_open(baseline, &base, err, sizeof err) != 0
                    ? -1
                    : cs_report_open(&base, &bd, stderr, err, sizeof err);
        if (r < 0) {
            cs_error("%s", err);
            goto out;
        }
        base_partial = r > 0; /* what was left out is named above */
    }
    /* A folder in use is not read; one that comes into use while it is
     * read (a run or an ingest replacing the trace) is said so, rather
     * than what its removal did to the reading. */
    if (cs_report_busy(o.trace))
        goto out;
    /* The pages the report reads are checked beside the reads (a current
     * stored analysis); a damaged trace, or one a read of which failed, is
     * then opened again the careful way (every page checked, recovered)
     * and read again. */
    cs_analysis_check *chk = NULL;
    int loaded = 0, traced = 0;
    if (cs_source_open(o.trace, &src, err, sizeof err) == 0)
        st = cs_analysis_open_checked_later(&src, stderr, &chk, err, sizeof err);
    for (int pass = 0; pass < 2; pass++) {
        if (!st) {
            if (!cs_report_busy(o.trace))
                cs_error("%s", err);
            goto out;
        }
        loaded = cs_report_load(st, &ad) == 0;
        traced = loaded && cs_report_trace_load(st, &tr) == 0;
        if (cs_analysis_check_wait(chk, traced && !ad.failures_unread, &st, &src, stderr, err, sizeof err) == 0)
            break;
        chk = NULL;
        cs_report_free(&ad);
        cs_report_trace_free(&tr);
        memset(&ad, 0, sizeof ad);
        memset(&tr, 0, sizeof tr);
    }
    if (!loaded) {
        if (!cs_report_busy(o.trace))
            cs_error("%s: cannot read the stored analysis", cs_store_path(st));
        goto out;
    }
    char from[4200], recovered[1536];
    int partial = cs_store_recovered(st, from, sizeof from, recovered, sizeof recovered);
    if (partial) {
        char notes[sizeof ad.notes];
        snprintf(notes, sizeof notes, "damaged trace %s: this report is of what could be read of it (%s): %s%s%s", from,
                 cs_store_path(st), recovered, ad.notes[0] ? "\n" : "", ad.notes);
        memcpy(ad.notes, notes, sizeof notes);
    }
    ngates = cs_gates_eval(failon, &ad, baseline ? &bd : NULL, &gates, err, sizeof err);
    if (ngates < 0) {
        cs_error("%s", err);
        rc = 2;
        goto out;
    }
    if (!traced) {
        if (!cs_report_busy(o.trace))
            cs_error("%s: cannot read the trace (corrupt?)", cs_store_path(st));
        goto out;
    }
    cs_outfile of;
    if (cs_outfile_open(&of, "report", outpath ? outpath : "-") != 0)
        goto out;
    FILE *f = of.f;
    tr.full = o.full;
    writer(f, &tr, &ad, gates, ngates);
    if (cs_outfile_close(&of, "report", 1) != 0)
        goto out;
    int failed = 0;
    for (int i = 0; i < ngates; i++)
        failed += gates[i].failed;
    rc = failed ? 3 : partial || base_partial ? 1 : 0;
out:
    if (st)
        cs_store_close(st);
    cs_report_trace_free(&tr);
    free(gates);
    cs_report_free(&ad);
    cs_report_free(&bd);
    return rc;
}
