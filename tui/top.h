/* top.h: `collscope top`'s terminal view of a running job (top.c): the
 * frame of analyzer/live drawn with the TUI's drawing code, refreshed
 * about once a second; q quits, s changes the sort. */
#ifndef CS_TUI_TOP_H
#define CS_TUI_TOP_H

#include "analyzer/live/live.h"

typedef struct cs_tui_top_hooks {
    /* after every poll of the logs (the metrics written, their body made) */
    void (*refreshed)(void *arg);
    /* a file descriptor to watch for reading (-1: none) and what to do
     * when it is ready (the metrics endpoint's connections) */
    int fd;
    void (*ready)(void *arg);
    /* a line above the frame (NULL, or returning NULL: none), asked at
     * every refresh: `collscope run --top`'s job and where its output goes */
    const char *(*title)(void *arg);
    void *arg;
} cs_tui_top_hooks;

/* Run the view until q (or SIGINT, SIGTERM, SIGHUP); q leaves only the
 * view, never the job. Returns 0, 1 when
 * the terminal cannot be used or the logs cannot be read (one message
 * printed on stderr, the terminal restored first), 128+N after signal N. */
int cs_tui_top(cs_live *l, double interval_s, int sort, const cs_tui_top_hooks *hooks);

#endif
