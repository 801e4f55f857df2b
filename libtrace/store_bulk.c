/* store_bulk.c: the bulk writer of synthetic traces (see store_bulk.h). */
#include "config.h"
#include "libtrace/store_bulk.h"
#include "libtrace/store_int.h"

#include <stdio.h>
#include <stdlib.h>

enum { B_SPAN, B_PROC, B_CLOCK, B_COMM, B_SITE, B_FRAME, B_N };
static const char *const cs_bulk_sql[B_N] = {
    [B_SPAN] = "INSERT INTO span(id, rank, tid, op, comm, seq, bytes, dtype, count, peer, peer2, tag, req,"
               " begin_ns, end_ns, rc, callsite, flags) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [B_PROC] = "INSERT OR REPLACE INTO processes(rank, pid, host, exe, mpi, clock, ticks_per_ns, world_size,"
               " status, spans, dropped, overhead_ns_per_call, overhead_ns, start_ns, end_ns, callsites,"
               " tool_version) VALUES(?, ?, ?, ?, ?, 'monotonic', 1.0, ?, 'closed', ?, 0, 0, 0, ?, ?, ?, ?)",
    [B_CLOCK] = "INSERT OR REPLACE INTO clocks(rank, clock) VALUES(?, 'monotonic')",
    [B_COMM] = "INSERT OR REPLACE INTO comms(id, rank, local, comm_rank, size, parent, how, created_ns)"
               " VALUES(?,?,0,?,?,0,'world',?)",
    [B_SITE] = "INSERT OR REPLACE INTO callsites(rank, id, depth, label) VALUES(?,?,1,?)",
    [B_FRAME] = "INSERT OR REPLACE INTO frames(rank, callsite, level, pc, module, offset, func, file, line)"
                " VALUES(?,?,0,?,?,?,?,?,?)",
};

struct cs_store_bulk {
    cs_store *st;
    sqlite3_stmt *q[B_N];
};

static int step(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

cs_store_bulk *cs_store_bulk_begin(cs_store *st, char *err, size_t errlen)
{
    cs_store_bulk *b = calloc(1, sizeof *b);
    if (!b) {
        cs_store_sql_fail(err, errlen, "%s: out of memory", st->path);
        return NULL;
    }
    b->st = st;
    if (cs_store_sql_exec(st->db, st->path, "BEGIN", err, errlen) != 0) {
        free(b);
        return NULL;
    }
    for (int i = 0; i < B_N; i++)
        if (sqlite3_prepare_v2(st->db, cs_bulk_sql[i], -1, &b->q[i], NULL) != SQLITE_OK) {
            cs_store_sql_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
            cs_store_bulk_end(b, 0, NULL, 0);
            return NULL;
        }
    return b;
}

int cs_store_bulk_end(cs_store_bulk *b, int commit, char *err, size_t errlen)
{
    for (int i = 0; i < B_N; i++)
        sqlite3_finalize(b->q[i]);
    cs_store *st = b->st;
    free(b);
    if (!commit) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return 0;
    }
    if (cs_store_sql_exec(st->db, st->path, "COMMIT", err, errlen) != 0) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

int cs_store_bulk_process(cs_store_bulk *b, const cs_store_bulk_proc *p)
{
    sqlite3_stmt *s = b->q[B_PROC];
    sqlite3_bind_int(s, 1, p->rank);
    sqlite3_bind_int(s, 2, p->pid);
    bind_text(s, 3, p->host);
    bind_text(s, 4, p->exe);
    bind_text(s, 5, p->mpi);
    sqlite3_bind_int(s, 6, p->world_size);
    sqlite3_bind_int64(s, 7, p->spans);
    sqlite3_bind_int64(s, 8, p->start_ns);
    sqlite3_bind_int64(s, 9, p->end_ns);
    sqlite3_bind_int(s, 10, p->callsites);
    bind_text(s, 11, p->tool_version);
    if (step(s) != 0)
        return -1;
    s = b->q[B_CLOCK];
    sqlite3_bind_int(s, 1, p->rank);
    return step(s);
}

int cs_store_bulk_comm(cs_store_bulk *b, int64_t id, int rank, int comm_rank, int size, int64_t created_ns)
{
    sqlite3_stmt *s = b->q[B_COMM];
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int(s, 2, rank);
    sqlite3_bind_int(s, 3, comm_rank);
    sqlite3_bind_int(s, 4, size);
    sqlite3_bind_int64(s, 5, created_ns);
    return step(s);
}

int cs_store_bulk_callsite(cs_store_bulk *b, const cs_store_bulk_site *x)
{
    sqlite3_stmt *s = b->q[B_SITE];
    sqlite3_bind_int(s, 1, x->rank);
    sqlite3_bind_int64(s, 2, x->id);
    bind_text(s, 3, x->label);
    if (step(s) != 0)
        return -1;
    s = b->q[B_FRAME];
    sqlite3_bind_int(s, 1, x->rank);
    sqlite3_bind_int64(s, 2, x->id);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)x->pc);
    bind_text(s, 4, x->module);
    sqlite3_bind_int64(s, 5, (sqlite3_int64)x->offset);
    bind_text(s, 6, x->func);
    bind_text(s, 7, x->file);
    sqlite3_bind_int(s, 8, x->line);
    return step(s);
}

static void bind_span(sqlite3_stmt *s, const cs_span *x)
{
    sqlite3_bind_int64(s, 1, x->id);
    sqlite3_bind_int(s, 2, x->rank);
    sqlite3_bind_int(s, 3, x->tid);
    sqlite3_bind_int(s, 4, x->op);
    if (x->comm)
        sqlite3_bind_int64(s, 5, x->comm);
    else
        sqlite3_bind_null(s, 5);
    if (x->seq >= 0)
        sqlite3_bind_int64(s, 6, x->seq);
    else
        sqlite3_bind_null(s, 6);
    sqlite3_bind_int64(s, 7, x->bytes);
    sqlite3_bind_int(s, 8, x->dtype);
    sqlite3_bind_int64(s, 9, x->count);
    sqlite3_bind_int(s, 10, x->peer);
    sqlite3_bind_int(s, 11, x->peer2);
    sqlite3_bind_int(s, 12, x->tag);
    sqlite3_bind_int64(s, 13, x->req);
    sqlite3_bind_int64(s, 14, x->begin_ns);
    sqlite3_bind_int64(s, 15, x->end_ns);
    sqlite3_bind_int(s, 16, x->rc);
    sqlite3_bind_int64(s, 17, x->callsite);
    sqlite3_bind_int64(s, 18, x->flags);
}

int cs_store_bulk_span(cs_store_bulk *b, const cs_span *x)
{
    sqlite3_stmt *s = b->q[B_SPAN];
    bind_span(s, x);
    return step(s);
}
