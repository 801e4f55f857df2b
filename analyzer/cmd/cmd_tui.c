/* cmd_tui.c: `collscope tui DIR`: the terminal browser, run in-process
 * (libcstui, linked into collscope when configure found ncursesw); without it, one message says so. */
#include "config.h"
#include "analyzer/cmd/cli.h"

#ifdef HAVE_NCURSES
#include "tui/tui.h"
#endif

/* The browser's own options (tui/tui.h), where it was built. */
const cs_optset cs_optset_tui = {
    .prog = "collscope tui",
    .tail = "DIR|TRACE.db",
#ifdef HAVE_NCURSES
    .opt = cs_tui_opt,
    .nopt = CS_TUI_NOPT,
#endif
    .about = "Browse the job's timeline in the terminal: one lane per rank, collectives\n"
             "split into waiting and transfer, the worst instances and straggler steps\n"
             "of the analysis, stats and ranks screens, calls that never returned as\n"
             "open-ended bars and the job's failures (F). The same browser as\n"
             "collscope-tui; press ? in it for the keys. See collscope-tui(1).\n"
             "\n",
};

int cs_cmd_tui(int argc, char **argv)
{
#ifdef HAVE_NCURSES
    return cs_tui_main(argc, argv);
#else
    (void)argc;
    (void)argv;
    cs_error("tui: the terminal UI was not built: configure did not find ncursesw "
             "(install its development files and configure again)");
    return 1;
#endif
}
