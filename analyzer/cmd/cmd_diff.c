/* cmd_diff.c: `collscope diff BASE NEW`: step time, stragglers, the tail
 * of each collective group and the GPU time per rank, compared between two
 * runs (diff.c). */
#include "config.h"
#include "common/fmt.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/formats/outfile.h"
#include "analyzer/report/report.h"

#include <stdio.h>
#include <string.h>

enum { DF_FORMAT, DF_OUTPUT };
static const cs_opt cs_diff_opt[] = {
    [DF_FORMAT] = { "format", 0, CS_OPT_REQUIRED, "FMT", NULL, CS_OPT_OWN,
                    "text (default) or json (format \"collscope-diff\", version 1, docs/report-json.md)",
                    .values_of = cs_fmt_textjson_values },
    [DF_OUTPUT] = { "output", 'o', CS_OPT_REQUIRED, "FILE", NULL, CS_OPT_OWN,
                    "write the comparison to FILE (replaced once complete; never through a symlink) instead "
                    "of standard output (-o -)" },
};

const cs_optset cs_optset_diff = {
    .prog = "collscope diff",
    .lead = "BASE NEW",
    .opt = cs_diff_opt,
    .nopt = CS_OPTS_N(cs_diff_opt),
    .about = "Compare two runs (each a DIR or TRACE.db; analysed first when their stored\n"
             "analysis is not current): the median step time, the straggler verdicts\n"
             "(in both, gone, new), the p99 of each collective group (op, size\n"
             "bucket, call site) and, when either run has GPU activity, each rank's\n"
             "GPU time shares (compute, comm exposed and overlapped, memory, idle)\n"
             "before and after, naming the ranks whose compute share changed out of\n"
             "line with the others'. A change in % is against the first run (BASE):\n"
             "the header says so, and the tail table's column reads \"vs base\".\n"
             "JSON: format \"collscope-diff\", version 1 (docs/report-json.md).\n"
             "\n"
             "Runs that are not the same job to compare (different world sizes,\n"
             "parallel layouts or sources: a traced MPI run against an imported\n"
             "PyTorch profiler job) are compared all the same, under a warning that\n"
             "names each difference (on standard error too; JSON: \"comparable\":\n"
             "false and the reasons in \"not_comparable\").\n"
             "\n",
    .after = "\n"
             "Exit status: 0, 1 when a trace cannot be read or was read in part (a damaged\n"
             "trace, a rank store left out: the comparison is printed and the part named),\n"
             "2 on bad usage.\n",
};

int cs_cmd_diff(int argc, char **argv)
{
    const char *format = "text", *outpath = NULL;
    int c;
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_diff);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        switch (c) {
        case DF_FORMAT: format = optarg; break;
        case DF_OUTPUT: outpath = optarg; break;
        default: cs_opts_help(stderr, &cs_optset_diff); return 2;
        }
    }
    if (optind != argc - 2) {
        cs_opts_help(stderr, &cs_optset_diff);
        return 2;
    }
    int json = cs_fmt_textjson(format);
    if (json < 0) {
        char names[128];
        cs_error("diff: unknown format '%s' (%s)", format, cs_fmt_textjson_names(names, sizeof names, 0));
        return 2;
    }
    cs_report_data d[2];
    memset(d, 0, sizeof d);
    int rc = 1;
    char err[1024];
    cs_source src[2];
    int partial = 0;
    for (int i = 0; i < 2; i++) {
        int r = cs_source_open(argv[optind + i], &src[i], err, sizeof err) != 0
                    ? -1
                    : cs_report_open(&src[i], &d[i], stderr, err, sizeof err);
        if (r < 0) {
            cs_error("%s", err);
            goto out;
        }
        if (r > 0) { /* what was left out is named above */
            cs_note("diff: %s is of what could be read of it", argv[optind + i]);
            partial = 1;
        }
    }
    char why[1024];
    if (cs_diff_comparable(&d[0], &d[1], why, sizeof why))
        cs_note("diff: %s and %s are not comparable (%s)", argv[optind], argv[optind + 1], why);
    cs_outfile of;
    if (cs_outfile_open(&of, "diff", outpath ? outpath : "-") != 0)
        goto out;
    FILE *f = of.f;
    cs_diff_write(f, json, argv[optind], &d[0], argv[optind + 1], &d[1]);
    if (cs_outfile_close(&of, "diff", 1) != 0)
        goto out;
    rc = partial;
out:
    cs_report_free(&d[0]);
    cs_report_free(&d[1]);
    return rc;
}
