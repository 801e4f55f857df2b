/* log_follow.h: a log followed while its process writes it (log_follow.c),
 * for `collscope top` and the live metrics (analyzer/live/).
 *
 * The follower only reads: the file is opened read-only, never through a
 * link, and mapped PROT_READ; it takes no lock and writes nothing a writer
 * reads, so a stopped or slow follower never holds a writer up. Each poll
 * reads only what is new since the last one: the chunks claimed since, and
 * in the chunks still being filled, the slots after the last one read. A
 * slot whose header word is not yet stored (a record being written) is
 * left for the next poll. */
#ifndef CS_LOG_FOLLOW_H
#define CS_LOG_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "libtrace/log.h"

typedef struct cs_logf cs_logf;

/* Open the log at path for following; NULL with a reason in err (as
 * cs_logr_open: missing, not a regular file, a link, not a log). */
cs_logf *cs_logf_open(const char *path, char *err, size_t errlen);
void cs_logf_close(cs_logf *);

/* The header as the writer keeps it now (rank, state, dropped change while
 * it runs); its strings NUL-terminated. */
const cs_log_header *cs_logf_header(cs_logf *);

/* What one poll hands its caller: each record complete since the last
 * poll, once (`fresh` 1), and each span still in flight (an INFLIGHT slot;
 * `fresh` 0), again at every poll until its call returns, when the same
 * slot is handed once more as the span it became. */
typedef void (*cs_logf_fn)(void *arg, const cs_rec *rec, int fresh);

/* Read what is new, at most max fresh records of the chunks (0: no limit;
 * the rest waits for the next poll). Returns the number of fresh records,
 * or -1 with a reason in err (the file can no longer be read). */
long cs_logf_poll(cs_logf *, long max, cs_logf_fn fn, void *arg, char *err, size_t errlen);

/* Bytes of the log read by all polls so far (what the follower costs). */
uint64_t cs_logf_bytes_read(const cs_logf *);

#endif
