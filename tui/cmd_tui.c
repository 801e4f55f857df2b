/* cmd_tui.c: `collscope tui DIR`: runs collscope-tui, found next to the
 * collscope program, in the build tree, or on PATH. Linked into collscope
 * (see tui/local.mk) so that collscope itself needs no curses. */
#include "config.h"
#include "analyzer/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char cs_help_tui[] = "usage: collscope tui DIR|TRACE.db\n"
                           "\n"
                           "Browse the job's timeline in the terminal: one lane per rank, collectives\n"
                           "split into waiting and transfer, the worst instances and straggler steps\n"
                           "of the analysis, stats and ranks screens. Runs collscope-tui; press ? in it\n"
                           "for the keys. See collscope-tui(1).\n";

int cs_cmd_tui(int argc, char **argv)
{
    char self[PATH_MAX], exe[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    const char *cands[2] = { "%s/collscope-tui", "%s/../tui/collscope-tui" };
    argv[0] = "collscope-tui";
    if (n > 0) {
        self[n] = '\0';
        char *sl = strrchr(self, '/');
        if (sl) {
            *sl = '\0';
            for (int i = 0; i < 2; i++) {
                snprintf(exe, sizeof exe, cands[i], self);
                if (access(exe, X_OK) == 0) {
                    execv(exe, argv);
                    cs_error("tui: cannot run %s: %s", exe, strerror(errno));
                    return 1;
                }
            }
        }
    }
    execvp("collscope-tui", argv);
    (void)argc;
#ifdef HAVE_NCURSES
    cs_error("tui: the terminal UI is not installed (collscope-tui not found)");
#else
    cs_error("tui: the terminal UI was not built: configure did not find ncursesw "
             "(install its development files and configure again)");
#endif
    return 1;
}
