/* tui.h: the terminal browser of a trace (libcstui), the one entry that
 * collscope-tui and `collscope tui` call. */
#ifndef CS_TUI_H
#define CS_TUI_H

#include "common/opts.h"

/* The browser's options (--index, --version, --help): the table its parser
 * and the --help of collscope-tui and of `collscope tui` are made from. */
#define CS_TUI_NOPT 3
extern const cs_opt cs_tui_opt[CS_TUI_NOPT];

/* Run the browser as the command `collscope-tui ARGS` (argv[0] is not
 * read): options, opening the trace, the screens until q. Returns the
 * exit status: 0; 1 when the trace cannot be read or the terminal cannot
 * be used (one message on stderr says why); 2 on bad usage; 128+N after
 * signal N. */
int cs_tui_main(int argc, char **argv);

#endif
