/* export_io.h: what the export writers (export_NAME.c) share for speed: a
 * large output buffer written with few fwrite calls, integer and time
 * writers without printf, and one ordered scan of the spans that reads
 * only the columns an export needs and applies the clock alignment in C
 * (the same arithmetic as CS_ALIGNED, libtrace/store_tables.h). */
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
    int failed;                  /* a write or an allocation failed: the caller finds it through ferror or -1 */
    struct cs__export_writer *w; /* the thread that writes full buffers (NULL: the caller writes) */
} cs_export_out;

/* 0, or -1 when out of memory. Full buffers are written by a thread of
 * its own (f is not to be touched until cs_export_out_done). */
int cs_export_out_init(cs_export_out *o, FILE *f);
/* Hand what is buffered to the writing. */
void cs_export_out_flush(cs_export_out *o);
/* Flush, wait for the writes, then free the buffers; 0, or -1 when a
 * write or an allocation failed. */
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

/* ---- the spans and what the analysis links to them ---- */

/* Flow ids: a matched message's is its send span's id; a collective
 * instance's arrow to member rank R is CS_EXPORT_COLL_FLOW(instance, R)
 * (below 2^53: exact in a JSON reader's doubles; ranks below 2^20). */
#define CS_EXPORT_COLL_FLOW(inst, rank) ((UINT64_C(1) << 51) + ((uint64_t)(inst) << 20) + (uint64_t)(rank))

/* What the stored analysis says of one span. */
typedef struct cs_export_links {
    uint64_t p2p_out;   /* a matched send: the flow it starts (0: none) */
    uint64_t p2p_in;    /* a matched receive: the flow it ends (0: none) */
    int coll;           /* a member of a collective instance that every member reached */
    int coll_last;      /* ... and its rank entered last */
    uint64_t coll_inst; /* the instance's number, for CS_EXPORT_COLL_FLOW */
    const int *peers;   /* coll_last: the other members' world ranks */
    size_t npeers;
    int64_t wait_ns; /* its wait for the last rank to enter its collective (0: none) */
} cs_export_links;

/* One pass over the spans of st in the store's order (a rank's spans come
 * in the order they were stored: by their end within a thread for traced
 * runs, or by begin), their times aligned as the spans view aligns them
 * (the span's fields count, dtype, req and grp are 0: no export writes
 * them), each with its links (a span without an analysis has none); then
 * the imposed waits: for each rank that entered collective instances last,
 * in time order, the sum of the others' waits in each (imposed(rank, the
 * last entry, the sum)). The matched messages, waits and instances are
 * merged into the pass (the waits and messages in span order; the
 * instances, about 50 bytes each, held in memory), so no span is looked up
 * twice. A non-zero callback stops the pass. 0, or -1 with a message in
 * err. */
int cs_export_pass(cs_store *st, int (*span)(const cs_span *sp, const cs_export_links *ln, void *arg),
                   int (*imposed)(int rank, int64_t t, int64_t sum_ns, void *arg), void *arg, char *err, size_t errlen);

#endif
