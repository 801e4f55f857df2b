/* store_sql.h: the SQL helpers every file of the store shares, and that the
 * parts owning tables of their own beside the trace's (the analysis tables
 * in analyzer/analysis/store_analysis.c, the timeline index in tui/store_tui.c) use
 * to read and write them the same way.
 *
 * Errors: a function that takes err and errlen writes one line that names
 * the file at fault and returns -1.
 *
 * Reading: a read loop steps while sqlite3_step() gives SQLITE_ROW; the
 * code that ended it must be SQLITE_DONE, anything else is a read error
 * (a corrupt page, an I/O error), never the end of the data:
 *
 *     while ((rc = sqlite3_step(s)) == SQLITE_ROW)
 *         ...
 *     if (rc != SQLITE_DONE)
 *         return cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
 *
 * cs_store_sql_rows() is that loop for a SELECT whose columns fill the
 * fields of a row struct (cs_store_sql_col); cs_store_sql_bind_row() binds
 * the same struct to an INSERT. */
#ifndef CS_STORE_SQL_H
#define CS_STORE_SQL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "libtrace/store.h"
#include "libtrace/store_tables.h"

/* The store's connection (used by one thread at a time, see store.h). */
sqlite3 *cs_store_sql_db(cs_store *st);

/* Write the message to err (when not NULL); returns -1. */
int cs_store_sql_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Run sql (several statements); 0, or -1 with "path: reason". */
int cs_store_sql_exec(sqlite3 *db, const char *path, const char *sql, char *err, size_t errlen);
/* Does the database hold a table or view of that name? 1, 0, or -1 when
 * it cannot be read. */
int cs_store_sql_table_exists(sqlite3 *db, const char *name);
/* Column i as text into buf ("" when NULL). */
void cs_store_sql_text(sqlite3_stmt *s, int i, char *buf, size_t len);

/* A finished trace is in WAL mode, whose readers need a -shm file beside
 * it. Where none can be made (a read-only folder or mount: the failed
 * call's error and cs_store_sql_needs_immutable say so), a trace with no
 * pending WAL is reopened read-only as immutable, which needs none: 0; 1
 * when its changes are still in a WAL; -1 when SQLite fails. */
int cs_store_sql_needs_immutable(sqlite3 *db, const char *path);
int cs_store_sql_open_immutable(sqlite3 **db, const char *path);

/* ---- rows as structs ---- */

/* Where column i of a row goes in its struct: its type ('l' int64_t,
 * 'i' int, 'd' double, 's' char[len]) and offset. */
typedef struct cs_store_sql_col {
    char type;
    size_t off, len;
} cs_store_sql_col;
#define CS_SQL_I64(T, f)       \
    {                          \
        'l', offsetof(T, f), 0 \
    }
#define CS_SQL_INT(T, f)       \
    {                          \
        'i', offsetof(T, f), 0 \
    }
#define CS_SQL_DBL(T, f)       \
    {                          \
        'd', offsetof(T, f), 0 \
    }
#define CS_SQL_STR(T, f)                         \
    {                                            \
        's', offsetof(T, f), sizeof(((T *)0)->f) \
    }
#define CS_SQL_NCOLS(cols) ((int)(sizeof cols / sizeof cols[0]))

/* Fill the struct at row from the current row of s (columns in order). */
void cs_store_sql_read_row(sqlite3_stmt *s, const cs_store_sql_col *cols, int ncols, void *row);
/* Bind the struct at row to parameters 1..ncols of s. */
void cs_store_sql_bind_row(sqlite3_stmt *s, const cs_store_sql_col *cols, int ncols, const void *row);
/* Run a SELECT, hand each row (a zeroed struct of `size` bytes, filled)
 * to each(); stop at its first non-zero return, which is returned. -1
 * when the SELECT cannot be prepared or a row cannot be read. */
int cs_store_sql_rows(sqlite3 *db, const char *sql, const cs_store_sql_col *cols, int ncols, size_t size,
                      int (*each)(const void *row, void *ctx), void *ctx);

/* The caller's typed callback, called back through its own type by a
 * trampoline that CS_SQL_ROWS_TRAMPOLINE(T) defines for row type T. */
typedef struct cs_store_sql_cb {
    void (*fn)(void);
    void *arg;
} cs_store_sql_cb;
#define CS_SQL_ROWS_TRAMPOLINE(T)                                \
    static int cs_each_##T(const void *row, void *ctx)           \
    {                                                            \
        const cs_store_sql_cb *c = ctx;                          \
        return ((int (*)(const T *, void *))c->fn)(row, c->arg); \
    }
#define CS_SQL_READ_ROWS(db, sql, cols, T, cb, arg)                              \
    cs_store_sql_rows(db, sql, cols, CS_SQL_NCOLS(cols), sizeof(T), cs_each_##T, \
                      &(cs_store_sql_cb){ (void (*)(void))(cb), (arg) })

/* ---- spans ---- */

/* The columns cs_store_read_span_row() reads, in its order, with times
 * aligned or raw; both come FROM span s LEFT JOIN clocks k. CS_SPAN_LIST*
 * is the column list alone (a query may add columns after the
 * CS_SPAN_NCOLS of it, then CS_SPAN_FROM and joins of its own). */
#define CS_SPAN_LIST_(begin, end, gbegin, gend)                                                             \
    "s.id, s.rank, s.tid, s.op, COALESCE(s.comm, 0), COALESCE(s.seq, -1), COALESCE(s.bytes, 0),"            \
    " COALESCE(s.count, 0), COALESCE(s.dtype, 0), COALESCE(s.peer, -1), COALESCE(s.peer2, -1),"             \
    " COALESCE(s.tag, -1), COALESCE(s.req, 0), " begin ", " end ","                                         \
    " COALESCE(s.rc, 0), COALESCE(s.callsite, 0), s.flags, COALESCE(" gbegin ", 0), COALESCE(" gend ", 0)," \
    " COALESCE(s.stream, -1), COALESCE(s.grp, 0)"
#define CS_SPAN_NCOLS 22
#define CS_SPAN_FROM " FROM span s LEFT JOIN clocks k ON k.rank = s.rank"
#define CS_SPAN_COLS_(begin, end, gbegin, gend) CS_SPAN_LIST_(begin, end, gbegin, gend) CS_SPAN_FROM
#define CS_SPAN_LIST                                                                              \
    CS_SPAN_LIST_(CS_ALIGNED("s.begin_ns"), CS_ALIGNED("s.end_ns"), CS_ALIGNED("s.gpu_begin_ns"), \
                  CS_ALIGNED("s.gpu_end_ns"))
#define CS_SPAN_COLS CS_SPAN_LIST CS_SPAN_FROM
#define CS_SPAN_COLS_RAW CS_SPAN_COLS_("s.begin_ns", "s.end_ns", "s.gpu_begin_ns", "s.gpu_end_ns")

/* (store_read.c) Run sql (no parameters) and collect its rows into a new
 * array at *pout (any T **; malloc'ed, free it) of elements of size
 * bytes, each zeroed, then filled by fill from the current row. 0; -2
 * when sql cannot be prepared (a missing table); -1 when a row cannot be
 * read or memory runs out. *pout is NULL and *n 0 on failure. */
int cs_store_read_array(sqlite3 *db, const char *sql, size_t size, void (*fill)(sqlite3_stmt *s, void *elem),
                        void *pout, int *n);
/* (store_read.c) Read the current row of a statement over CS_SPAN_COLS*
 * into a span. */
void cs_store_read_span_row(sqlite3_stmt *s, cs_span *out);

#endif
