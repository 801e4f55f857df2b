/* store_int.h: what the store's own files (libtrace/store*.c) share.
 * Nothing outside libtrace/store*.c includes this. */
#ifndef CS_STORE_INT_H
#define CS_STORE_INT_H

#include <limits.h>

#include <sqlite3.h>

#include "libtrace/store.h"
#include "libtrace/store_schema.h"

struct cs_store {
    sqlite3 *db;
    char path[PATH_MAX];
    int version;
    /* A private copy being used in place of the file at path (which
     * messages and reports name): removed at close. "" when none. */
    char scratch[PATH_MAX];
};

/* A finished trace is in WAL mode, whose readers need a -shm file beside
 * it. Where none can be made (a read-only folder or mount: the failed
 * call's error and cs__needs_immutable say so), a trace with no pending
 * WAL is reopened read-only as immutable, which needs none: 0; 1 when
 * its changes are still in a WAL; -1 when SQLite fails. */
int cs__needs_immutable(sqlite3 *db, const char *path);
int cs__open_immutable(sqlite3 **db, const char *path);

/* A span iterator is one statement whose columns are CS_SPAN_COLS_*. */
struct cs_span_iter {
    sqlite3_stmt *s;
};

/* The columns cs_span_next() reads, in its order, with times aligned or
 * raw; both come FROM span s LEFT JOIN clocks k. */
#define CS_SPAN_COLS_(begin, end, gbegin, gend)                                                             \
    "s.id, s.rank, s.tid, s.op, COALESCE(s.comm, 0), COALESCE(s.seq, -1), COALESCE(s.bytes, 0),"            \
    " COALESCE(s.count, 0), COALESCE(s.dtype, 0), COALESCE(s.peer, -1), COALESCE(s.peer2, -1),"             \
    " COALESCE(s.tag, -1), COALESCE(s.req, 0), " begin ", " end ","                                         \
    " COALESCE(s.rc, 0), COALESCE(s.callsite, 0), s.flags, COALESCE(" gbegin ", 0), COALESCE(" gend ", 0)," \
    " COALESCE(s.stream, -1), COALESCE(s.grp, 0) FROM span s LEFT JOIN clocks k ON k.rank = s.rank"
#define CS_SPAN_COLS                                                                              \
    CS_SPAN_COLS_(CS_ALIGNED("s.begin_ns"), CS_ALIGNED("s.end_ns"), CS_ALIGNED("s.gpu_begin_ns"), \
                  CS_ALIGNED("s.gpu_end_ns"))
#define CS_SPAN_COLS_RAW CS_SPAN_COLS_("s.begin_ns", "s.end_ns", "s.gpu_begin_ns", "s.gpu_end_ns")

/* Writing spans from a cs_span (synthetic traces): the statement, and
 * binding one span to it. */
#define CS_SPAN_INSERT_SQL                                                                       \
    "INSERT INTO span(id, rank, tid, op, comm, seq, bytes, dtype, count, peer, peer2, tag, req," \
    " begin_ns, end_ns, rc, callsite, flags) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
void cs__span_bind(sqlite3_stmt *s, const cs_span *x);

/* Read the current row of a statement over CS_SPAN_COLS* into a span. */
void cs__span_row(sqlite3_stmt *s, cs_span *out);

/* Wrap a prepared statement over CS_SPAN_COLS* in an iterator (it owns
 * the statement). NULL when out of memory (the statement is finalized). */
cs_span_iter *cs__span_iter_wrap(sqlite3_stmt *s);

#endif
