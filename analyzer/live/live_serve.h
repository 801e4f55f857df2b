/* live_serve.h: the live figures handed to Prometheus (live_serve.c): a
 * textfile for the node exporter's textfile collector, written atomically,
 * and a tiny HTTP/1.0 server of GET /metrics (one thread, poll-based, in
 * the analyzer's process, never in the ranks). */
#ifndef CS_LIVE_SERVE_H
#define CS_LIVE_SERVE_H

#include <stddef.h>

#include "analyzer/live/live.h"

/* Write the metrics to path: a new file beside it (PATH.tmp-PID-XXXXXX,
 * made with O_EXCL) renamed onto it, so a reader sees the old file or the new one,
 * never half of one. 0, or -1 with a reason naming path in err. */
int cs_live_metrics_file(const cs_live *l, const char *path, char *err, size_t errlen);

typedef struct cs_live_http cs_live_http;

/* Listen on "PORT" (127.0.0.1) or "ADDR:PORT" (port 0: any free one).
 * NULL with a reason in err. */
cs_live_http *cs_live_http_open(const char *spec, char *err, size_t errlen);
void cs_live_http_close(cs_live_http *);
/* "ADDR:PORT" it listens on. */
const char *cs_live_http_where(const cs_live_http *);
/* Its listening socket, to be polled for reading. */
int cs_live_http_fd(const cs_live_http *);
/* Answer the connections waiting (GET /metrics: the body given; anything
 * else 404 or 405). A client gets at most a second to send its request. */
void cs_live_http_answer(cs_live_http *, const char *body, size_t len);

#endif

/* ---- the two together, as `collscope top` and `collscope run` use them ---- */
typedef struct cs_live_pub cs_live_pub;

/* file: the textfile's path, or NULL; port: "[ADDR:]PORT", or NULL. NULL
 * with a reason in err. The address listened on is told once (cs_note). */
cs_live_pub *cs_live_pub_new(const char *file, const char *port, char *err, size_t errlen);
void cs_live_pub_free(cs_live_pub *);
/* Take the figures of the latest poll: the body served, the file written.
 * 0, or -1 with a reason in err (the file could not be written). */
int cs_live_pub_refresh(cs_live_pub *, const cs_live *l, char *err, size_t errlen);
/* Serve the endpoint for up to ms milliseconds (or just sleep). */
void cs_live_pub_wait(cs_live_pub *, int ms);
/* The endpoint's socket (-1: none), and answering what waits on it. */
int cs_live_pub_fd(const cs_live_pub *);
void cs_live_pub_answer(cs_live_pub *);
