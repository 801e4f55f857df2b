/* status.h: `collscope status DIR`: the state of a running, hung or dead
 * job from its live per-process logs (status.c; docs/hangs.md). */
#ifndef CS_STATUS_H
#define CS_STATUS_H

#include <stddef.h>
#include <stdio.h>

typedef struct cs_status_opts {
    double after_s; /* a call in flight this long is stuck */
    int json;       /* --format json */
    int verbose;    /* per communicator, each rank's highest seq entered and completed */
} cs_status_opts;

/* Read DIR/logs and print the state and the diagnosis to f. Returns 0
 * (healthy or finished), 3 (a hang or failure found) or 1 with one
 * message in err (no logs to read). */
int cs_status_run(const char *dir, const cs_status_opts *opt, FILE *f, char *err, size_t errlen);

#endif
