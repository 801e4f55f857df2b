/* status_hang.h: what the hang watchdog (interpose/watchdog.c) wrote in a
 * live or dead process's log, for `collscope status` (status_hang.c). */
#ifndef CS_STATUS_HANG_H
#define CS_STATUS_HANG_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_status_hang {
    int reason;               /* enum cs_hang_reason (libtrace/span.h) */
    int op;                   /* the stuck (or last) call's op, 0 = none */
    uint64_t since, detected; /* raw ticks of the process clock */
    int nframes;              /* frames of the sampled stack, 0 = none */
    char where[256];          /* "function (file:line)" of the innermost frame
                               outside the C and MPI libraries and collscope, "" unknown */
} cs_status_hang;

/* The latest HANG record of the log at `log_path` (a .cslog; its
 * .modules file next to it names the frames): 1 and *h filled, 0 when it
 * has none or cannot be read. Only reads, never through a link. */
int cs_status_hang_read(const char *log_path, cs_status_hang *h);

#endif
