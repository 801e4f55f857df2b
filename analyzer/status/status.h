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

/* The output format named name (its table in status.c): 0 text, 1 JSON,
 * -1 none of them. */
int cs_status_format(const char *name);
/* The formats' names from that table: "text or json", or with bar
 * "text|json"; cs_status_format_values (with bar) is an option table's
 * values_of, so --help lists what the parser takes. */
const char *cs_status_format_names(char *buf, size_t len, int bar);
const char *cs_status_format_values(char *buf, size_t len);

/* Read DIR/logs and print the state and the diagnosis to f. Returns 0
 * (healthy or finished), 3 (a hang or failure found) or 1 with one
 * message in err (no logs to read). */
int cs_status_run(const char *dir, const cs_status_opts *opt, FILE *f, char *err, size_t errlen);

#endif
