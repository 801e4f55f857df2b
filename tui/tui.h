/* tui.h: the terminal browser of a trace (libcstui), the one entry that
 * collscope-tui and `collscope tui` call. */
#ifndef CS_TUI_H
#define CS_TUI_H

/* Run the browser as the command `collscope-tui ARGS` (argv[0] is not
 * read): options, opening the trace, the screens until q. Returns the
 * exit status: 0; 1 when the trace cannot be read or the terminal cannot
 * be used (one message on stderr says why); 2 on bad usage; 128+N after
 * signal N. */
int cs_tui_main(int argc, char **argv);

#endif
