/* main.c: the collscope command and its table of subcommands. */
#include "config.h"
#include "analyzer/cmd/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const cs_cmd cs_cmds[] = {
    { .name = "run",
      .summary = "run a job under the tracer and build DIR/trace.db",
      .opts = &cs_optset_run,
      .run = cs_cmd_run },
    { .name = "ingest",
      .summary = "rebuild DIR/trace.db from the process logs (crashed ranks too)",
      .opts = &cs_optset_ingest,
      .run = cs_cmd_ingest },
    { .name = "report",
      .summary = "where the communication time went",
      .opts = &cs_optset_report,
      .run = cs_cmd_report },
    { .name = "analyze",
      .summary = "align clocks, match instances, find stragglers; store the results",
      .opts = &cs_optset_analyze,
      .run = cs_cmd_analyze },
    { .name = "diff",
      .summary = "compare two runs: step time, stragglers, tail of each op",
      .opts = &cs_optset_diff,
      .run = cs_cmd_diff },
    { .name = "check-estimate",
      .summary = "check the what-if estimate of a fusion proposal against a run with it applied",
      .opts = &cs_optset_check_estimate,
      .run = cs_cmd_check_estimate },
    { .name = "export",
      .summary = "write the trace and its analysis for other viewers (Perfetto, chrome://tracing)",
      .opts = &cs_optset_export,
      .run = cs_cmd_export },
    { .name = "import",
      .summary = "turn PyTorch profiler (Kineto) traces into DIR/trace.db",
      .opts = &cs_optset_import,
      .run = cs_cmd_import },
    { .name = "status",
      .summary = "a running, hung or dead job: each rank's call in flight, and who blocks whom",
      .opts = &cs_optset_status,
      .run = cs_cmd_status },
    { .name = "top",
      .summary = "watch a running job: steps, stragglers, alarms; Prometheus metrics",
      .opts = &cs_optset_top,
      .run = cs_cmd_top },
    { .name = "merge",
      .summary = "merge a job kept as rank stores (DIR/index.db) into DIR/trace.db",
      .opts = &cs_optset_merge,
      .run = cs_cmd_merge },
    { .name = "tui",
      .summary = "browse the timeline in the terminal (collscope-tui)",
      .opts = &cs_optset_tui,
      .run = cs_cmd_tui },
};
#define CS_NCMDS (sizeof cs_cmds / sizeof cs_cmds[0])

static void cs_usage(FILE *f)
{
    fprintf(f, "usage: collscope COMMAND [ARGS]\n\n"
               "Find where the communication time of a distributed job goes.\n\ncommands:\n");
    for (size_t i = 0; i < CS_NCMDS; i++) {
        fprintf(f, "  %-8s %s\n", cs_cmds[i].name, cs_cmds[i].summary);
        cs_opts_usage(f, cs_cmds[i].opts, "          ", 11);
    }
    fprintf(f, "\n'collscope COMMAND --help' tells more; see also collscope(1).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cs_usage(stderr);
        return 2;
    }
    /* a write that fails for want of disk space is told as such
     * (cs_store_disk_full), never as damage */
    cs_store_watch_space();
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (argc > 2)
            for (size_t i = 0; i < CS_NCMDS; i++)
                if (strcmp(argv[2], cs_cmds[i].name) == 0) {
                    cs_opts_help(stdout, cs_cmds[i].opts);
                    return 0;
                }
        cs_usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("collscope %s (trace schema %d)\n", PACKAGE_VERSION, CS_SCHEMA_VERSION);
        return 0;
    }
    for (size_t i = 0; i < CS_NCMDS; i++)
        if (strcmp(name, cs_cmds[i].name) == 0) {
            for (int a = 2; a < argc && strcmp(argv[a], "--") != 0; a++)
                if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
                    cs_opts_help(stdout, cs_cmds[i].opts);
                    return 0;
                }
            return cs_cmds[i].run(argc - 1, argv + 1);
        }
    cs_error("unknown command '%s' (try collscope --help)", name);
    return 2;
}
