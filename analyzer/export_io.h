/* export_io.h: what the export writers (export_NAME.c) share for speed: a
 * large output buffer written with few fwrite calls, integer and time
 * writers without printf, and one ordered scan of the spans that reads
 * only the columns an export needs and applies the clock alignment in C
 * (the same arithmetic as CS_ALIGNED, libtrace/store_schema.h). */
#ifndef CS_EXPORT_IO_H
#define CS_EXPORT_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "libtrace/store.h"

/* ---- output ---- */

typedef struct cs_export_out {
    FILE *f;
    char *buf;
    size_t len, cap;
    int failed; /* a write or an allocation failed: the caller finds it through ferror or -1 */
} cs_export_out;

/* 0, or -1 when out of memory. */
int cs_export_out_init(cs_export_out *o, FILE *f);
/* Write what is buffered to the file. */
void cs_export_out_flush(cs_export_out *o);
/* Flush, then free the buffer; 0, or -1 when a write or an allocation failed. */
int cs_export_out_done(cs_export_out *o);
/* Room for n more bytes at o->buf + o->len (flushing, or growing the buffer
 * for a larger n); NULL when out of memory. The caller adds what it wrote
 * to o->len. */
char *cs__export_out_room(cs_export_out *o, size_t n);
static inline char *cs_export_out_room(cs_export_out *o, size_t n)
{
    return o->cap - o->len >= n ? o->buf + o->len : cs__export_out_room(o, n);
}

static inline void cs_export_out_put(cs_export_out *o, const void *p, size_t n)
{
    char *d = cs_export_out_room(o, n);
    if (!d)
        return;
    memcpy(d, p, n);
    o->len += n;
}

static inline void cs_export_out_puts(cs_export_out *o, const char *s)
{
    cs_export_out_put(o, s, strlen(s));
}

static inline void cs_export_out_c(cs_export_out *o, char c)
{
    char *d = cs_export_out_room(o, 1);
    if (d) {
        *d = c;
        o->len++;
    }
}

/* A decimal integer. */
void cs_export_out_i64(cs_export_out *o, int64_t v);
/* ns as microseconds with three decimals, exact ("-12.345"). */
void cs_export_out_us(cs_export_out *o, int64_t ns);
/* s as a JSON string, quotes and escapes included (as common/json.h). */
void cs_export_out_json_str(cs_export_out *o, const char *s);

/* ---- the spans ---- */

typedef struct cs_export_spans cs_export_spans;
/* The spans of st in rank and time order (raw begin within a rank), their
 * times aligned as the spans view aligns them. The fields count, dtype,
 * req and grp of the spans it gives are 0 (no export writes them). NULL
 * with a message in err when the store cannot be read. */
cs_export_spans *cs_export_spans_open(cs_store *st, char *err, size_t errlen);
/* 1 and the next span, 0 at the end, -1 on a read error. */
int cs_export_spans_next(cs_export_spans *it, cs_span *out);
void cs_export_spans_free(cs_export_spans *it);

#endif

/* ---- flows and waits of the stored analysis ---- */

/* One end of a flow: the span's rank, thread and aligned begin and end. */
typedef struct cs_export_end {
    int rank;
    int64_t tid, begin, end;
} cs_export_end;

/* Each matched message (the analysis's p2p table), in send order: cb(send,
 * recv, arg); a non-zero cb stops. 0 (also without the table), or -1 with
 * a message in err (cb's own failure: "out of memory"). */
int cs_export_p2p(cs_store *st, int (*cb)(const cs_export_end *send, const cs_export_end *recv, void *arg), void *arg,
                  char *err, size_t errlen);
/* Each collective instance whose last rank is known: its members (the
 * first span of each rank), in rank order, and the last rank to enter. */
int cs_export_instances(cs_store *st, int (*cb)(const cs_export_end *m, size_t n, int last, void *arg), void *arg,
                        char *err, size_t errlen);
/* Each rank's wait in each collective (own: rank, its aligned entry, the
 * wait), then each instance's waits summed, charged to its last rank at
 * the last entry (imposed: rank, time, the sum), each in rank and time
 * order. */
int cs_export_waits(cs_store *st, int (*own)(int rank, int64_t t, int64_t wait_ns, void *arg),
                    int (*imposed)(int rank, int64_t t, int64_t sum_ns, void *arg), void *arg, char *err,
                    size_t errlen);
