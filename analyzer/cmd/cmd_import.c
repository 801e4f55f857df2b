/* cmd_import.c: `collscope import [--format F] [-o DIR] [--rank-from-name
 * REGEX] [-j N] TRACE...`: its usage and options; the import itself is in
 * import.c and the format's reader (import_NAME.c). */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/formats/import.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { IM_OUTPUT, IM_FORMAT, IM_RANKNAME, IM_JOBS, IM_WAIT };
static const cs_opt cs_import_opt[] = {
    [IM_OUTPUT] = { "output", 'o', CS_OPT_REQUIRED, "DIR", NULL, CS_OPT_OWN,
                    "output folder (default: collscope.out); its trace.db is replaced only once the import is "
                    "done" },
    [IM_FORMAT] = { "format", 0, CS_OPT_REQUIRED, "F", NULL, CS_OPT_OWN,
                    "the traces' format (default and only one: kineto)", .values_of = cs_import_values },
    [IM_RANKNAME] = { "rank-from-name", 0, CS_OPT_REQUIRED, "REGEX", NULL, CS_OPT_OWN,
                      "the rank of a file with no distributedInfo.rank: the first group of REGEX (POSIX "
                      "extended) in the file's name, e.g. 'rank[-_]?([0-9]+)'" },
    [IM_JOBS] = { "jobs", 'j', CS_OPT_REQUIRED, "N", NULL, CS_OPT_OWN,
                  "files read at once (default: the number of cores)" },
    [IM_WAIT] = { "wait", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                  "when another collscope command is using DIR (a run, ingest, import or merge), wait for it "
                  "to end (default: refuse, exit 3)" },
};

const cs_optset cs_optset_import = {
    .prog = "collscope import",
    .tail = "TRACE...",
    .opt = cs_import_opt,
    .nopt = CS_OPTS_N(cs_import_opt),
    .about = "Turn the traces another tool wrote into DIR/trace.db, the trace collscope\n"
             "itself writes, so that report, diff, export and the TUI work on it. TRACE is\n"
             "a per-rank file or a folder of them (one job). Format kineto: PyTorch\n"
             "profiler traces (.json, or .json.gz), one per rank; the rank comes from\n"
             "distributedInfo.rank, its process groups from distributedInfo.pg_config\n"
             "(names kept), collectives and p2p from record_param_comms, NCCL kernels\n"
             "(their GPU times) and gloo annotations, steps from ProfilerStep#N, compute\n"
             "spans from other kernels and the main thread's top-level CPU ops.\n"
             "Collectives recorded without Seq are numbered per group in the order each\n"
             "rank issued them, where the ranks agree. See docs/interop.md.\n"
             "\n",
    .after = "\n"
             "Files left out, each named with the reason: a truncated file (a profiler\n"
             "stopped mid-write), a file that is not JSON, a file of another job (its\n"
             "world size or trace id differs from the others'), a rank given twice (the\n"
             "first file is kept), a file with no rank, a file that is not a regular one\n"
             "(a FIFO is never waited on), a reader out of memory. Missing ranks are\n"
             "named; a group whose ranks disagree on its collectives is named and left\n"
             "unmatched. Records with a bad value (ts or dur missing, no number or out of\n"
             "range; a record_param_comms with no args, or a Seq or msg nelems that is no\n"
             "whole number) are left out and counted, one line per file.\n"
             "\n"
             "Exit status: 0 every file imported, every rank there, every group matched;\n"
             "1 DIR/trace.db written from the good files, but files or records were left\n"
             "out, ranks are missing or groups unmatched (each is named); 2 bad usage (a\n"
             "TRACE that does not exist, a folder with no trace); 3 no trace written (no\n"
             "file could be imported, or DIR refused or in use).\n",
};

int cs_cmd_import(int argc, char **argv)
{
    const char *out = "collscope.out", *format = "kineto";
    cs_import_opts o = { NULL };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = ncpu > 0 ? (int)ncpu : 1, c;
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_import);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        switch (c) {
        case IM_OUTPUT: out = optarg; break;
        case IM_FORMAT: format = optarg; break;
        case IM_RANKNAME: o.rank_regex = optarg; break;
        case IM_WAIT: o.wait = 1; break;
        case IM_JOBS: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > 1024) {
                cs_error("import: --jobs %s: not a number of processes (1 to 1024)", optarg);
                return CS_IMPORT_EXIT_USAGE;
            }
            jobs = (int)v;
            break;
        }
        default: cs_opts_help(stderr, &cs_optset_import); return CS_IMPORT_EXIT_USAGE;
        }
    }
    const cs_import_format *fmt = cs_import_find(format);
    if (!fmt) {
        char names[128];
        cs_error("import: unknown format '%s' (%s)", format, cs_import_names(names, sizeof names));
        return CS_IMPORT_EXIT_USAGE;
    }
    if (o.rank_regex) {
        regex_t rx;
        if (regcomp(&rx, o.rank_regex, REG_EXTENDED) != 0) {
            cs_error("import: --rank-from-name '%s': not a valid regular expression", o.rank_regex);
            return CS_IMPORT_EXIT_USAGE;
        }
        regfree(&rx);
    }
    if (optind >= argc) {
        cs_error("import: no trace given (usage: collscope import -o DIR TRACE...)");
        return CS_IMPORT_EXIT_USAGE;
    }
    return cs_import_run(fmt, argv + optind, argc - optind, out, &o, jobs);
}
