/* tui.c: cs_tui_main, the entry of the terminal browser: its options, the
 * timeline summary on request (--index), opening the trace and checking the
 * terminal before the screens take it over (ui.c). */
#include "config.h"
#include "tui/tui.h"
#include "common/msg.h"

#include "tui/screen.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TUI_OPT_INDEX, TUI_OPT_VERSION, TUI_OPT_HELP, TUI_OPT_N };
_Static_assert(TUI_OPT_N == CS_TUI_NOPT, "tui.h's CS_TUI_NOPT counts the options");
const cs_opt cs_tui_opt[CS_TUI_NOPT] = {
    [TUI_OPT_INDEX] = { "index", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                        "build the timeline summary of the trace (done on first open otherwise), print how long "
                        "it took, and exit" },
    [TUI_OPT_VERSION] = { "version", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_UNLISTED, "print the version" },
    [TUI_OPT_HELP] = { "help", 'h', CS_OPT_NONE, NULL, NULL, CS_OPT_UNLISTED, "print this help" },
};

static const cs_optset tui_optset = {
    .prog = "collscope-tui",
    .tail = "DIR|TRACE.db",
    .opt = cs_tui_opt,
    .nopt = CS_TUI_NOPT,
    .about = "Browse the timeline of a traced job in the terminal: one lane per rank\n"
             "(and per thread, and per CUDA stream: rN sK, its calls at their GPU times\n"
             "and its kernels), collectives split into waiting and transfer, the worst\n"
             "instances and straggler steps of the analysis, stats and ranks screens;\n"
             "calls that never returned (a hung or failed job) as open-ended bars,\n"
             "and the job's failures one key away (F).\n"
             "Press ? inside for the keys. See collscope-tui(1).\n"
             "\n",
    .after = "\n"
             "Environment: NO_COLOR (any value) draws without colours; TERM and LANG\n"
             "as usual (UTF-8 locales get block glyphs, others ASCII).\n"
             "Exit status: 0; 1 when the trace cannot be read or the terminal cannot be\n"
             "used (one message says why), or when rank stores of a job were left out\n"
             "(another run's, stale, duplicated or unreadable: named on the status line\n"
             "and again at exit); 2 on bad usage; 128+N after signal N.\n",
};

/* A job read without some of its rank stores (another run's, stale,
 * duplicated or unreadable ones) is never taken for whole: they are named
 * on stderr, and the exit status is 1. */
static int tui_left_out(const tui_model *m)
{
    if (!m->left_out[0])
        return 0;
    cs_msg_line(stderr, "collscope-tui: %s: %s", m->dir, m->left_out);
    return 1;
}

/* --index: build the summary, say how long it took. */
static int index_only(const char *arg)
{
    tui_model m;
    char err[1024];
    cs_source src;
    memset(&m, 0, sizeof m);
    if (cs_source_open(arg, &src, err, sizeof err) != 0 || tui_model_open(&m, &src, 0, 1, err, sizeof err) != 0) {
        cs_msg_line(stderr, "collscope-tui: %s", err);
        tui_model_close(&m);
        return 1;
    }
    cs_tui_index_info info;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (cs_tui_index_build(m.path, NULL, NULL, &info, err, sizeof err) != 0) {
        cs_msg_line(stderr, "collscope-tui: %s", err);
        tui_model_close(&m);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    cs_msg_line(stdout, "collscope-tui: indexed %lld spans of %s in %.2f s (%d levels, finest bucket %lld ns)",
                (long long)info.spans, m.path, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
                info.levels, (long long)1 << info.shift);
    int rc = tui_left_out(&m);
    tui_model_close(&m);
    return rc;
}

int cs_tui_main(int argc, char **argv)
{
    int index = 0, c;
    cs_opts_parser p;
    cs_opts_begin(&p, &tui_optset);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        if (c == TUI_OPT_HELP) {
            cs_opts_help(stdout, &tui_optset);
            return 0;
        } else if (c == TUI_OPT_VERSION) {
            printf("collscope-tui %s\n", PACKAGE_VERSION);
            return 0;
        } else if (c == TUI_OPT_INDEX) {
            index = 1;
        } else {
            cs_opts_help(stderr, &tui_optset);
            return 2;
        }
    }
    if (optind != argc - 1) {
        cs_opts_help(stderr, &tui_optset);
        return 2;
    }
    const char *arg = argv[optind];
    setlocale(LC_ALL, "");
    if (index)
        return index_only(arg);
    tui_ui_signals();
    tui_model m;
    char err[1024];
    cs_source src;
    memset(&m, 0, sizeof m);
    if (cs_source_open(arg, &src, err, sizeof err) != 0 || tui_model_open(&m, &src, 1, 0, err, sizeof err) != 0 ||
        tui_ui_stop_signal()) {
        tui_model_close(&m);
        if (tui_ui_stop_signal())
            return tui_ui_exit_signal();
        cs_msg_line(stderr, "collscope-tui: %s", err);
        return 1;
    }
    const char *term = getenv("TERM");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) || !term || !*term || !strcmp(term, "dumb")) {
        fprintf(stderr, "collscope-tui: %s: cannot draw a terminal UI here\n",
                !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) ? "standard input and output must be a terminal"
                : term && *term                                 ? "TERM is dumb"
                                                                : "TERM is not set");
        tui_model_close(&m);
        return 1;
    }
    int rc = tui_ui_run(&m, term);
    if (tui_left_out(&m) && rc == 0)
        rc = 1;
    tui_model_close(&m);
    return rc;
}
