/* store_bulk.c: the bulk writer of synthetic traces (see store_bulk.h). */
#include "config.h"
#include "libtrace/store_bulk.h"
#include "common/vec.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B_SPAN, B_PROC, B_CLOCK, B_COMM, B_SITE, B_FRAME, B_SPANG, B_COMMN, B_KNAME, B_KSPAN, B_KID, B_LAUNCH, B_N };
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
    [B_KNAME] = "INSERT OR IGNORE INTO kernel_names(name) VALUES(?)",
    [B_KSPAN] = "INSERT OR REPLACE INTO span_kernel(span, name) VALUES(?, ?)",
    [B_KID] = "SELECT id FROM kernel_names WHERE name = ?",
    [B_LAUNCH] = "INSERT OR REPLACE INTO span_launch(span, lead_ns) VALUES(?, ?)",
    [B_SPANG] = "INSERT INTO span(id, rank, tid, op, comm, seq, bytes, dtype, count, peer, peer2, tag, req,"
                " begin_ns, end_ns, rc, callsite, flags, stream, grp, corr, gpu_begin_ns, gpu_end_ns)"
                " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [B_COMMN] = "INSERT OR REPLACE INTO comms(id, rank, local, comm_rank, size, parent, how, created_ns, name)"
                " VALUES(?,?,0,?,?,0,?,?,?)",
};

/* The kernel names written, with their ids: a kernel's name costs one
 * insert of two integers, not a name lookup (a trace has a few thousand
 * names for millions of kernels). Open addressing; when full, names
 * past it are looked up in the store. */
#define CS_BULK_KNAMES 8192
typedef struct cs_bulk_kname {
    char *name;
    int64_t id;
} cs_bulk_kname;

struct cs_store_bulk {
    cs_store *st;
    sqlite3_stmt *q[B_N];
    cs_bulk_kname *kn; /* CS_BULK_KNAMES slots, NULL until the first name */
    size_t nkn;
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
    if (b->kn)
        for (size_t i = 0; i < CS_BULK_KNAMES; i++)
            free(b->kn[i].name);
    free(b->kn);
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

const char *cs_store_bulk_errmsg(const cs_store_bulk *b)
{
    return sqlite3_errmsg(b->st->db);
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

int cs_store_bulk_comm_named(cs_store_bulk *b, const cs_store_bulk_comm_def *c)
{
    sqlite3_stmt *s = b->q[B_COMMN];
    sqlite3_bind_int64(s, 1, c->id);
    sqlite3_bind_int(s, 2, c->rank);
    sqlite3_bind_int(s, 3, c->comm_rank);
    sqlite3_bind_int(s, 4, c->size);
    bind_text(s, 5, c->how ? c->how : "other");
    sqlite3_bind_int64(s, 6, c->created_ns);
    bind_text(s, 7, c->name);
    return step(s);
}

static void bind_opt(sqlite3_stmt *s, int i, int64_t v)
{
    if (v)
        sqlite3_bind_int64(s, i, v);
    else
        sqlite3_bind_null(s, i);
}

int cs_store_bulk_span_gpu(cs_store_bulk *b, const cs_span *x, int64_t corr)
{
    sqlite3_stmt *s = b->q[B_SPANG];
    bind_span(s, x);
    if (x->stream || x->gpu_begin_ns)
        sqlite3_bind_int64(s, 19, x->stream);
    else
        sqlite3_bind_null(s, 19);
    bind_opt(s, 20, x->grp);
    bind_opt(s, 21, corr);
    bind_opt(s, 22, x->gpu_begin_ns);
    bind_opt(s, 23, x->gpu_begin_ns ? x->gpu_end_ns : 0);
    return step(s);
}

/* The id of kernel name `name` in kernel_names (added if new): 0 and *id,
 * or -1. */
static int cs_bulk_kname_id(cs_store_bulk *b, const char *name, int64_t *id)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    size_t slot = 0;
    int cache = 0;
    if (!b->kn)
        b->kn = calloc(CS_BULK_KNAMES, sizeof *b->kn); /* NULL: no cache, only slower */
    if (b->kn) {
        for (size_t i = 0; i < CS_BULK_KNAMES; i++) {
            slot = (h + i) & (CS_BULK_KNAMES - 1);
            if (!b->kn[slot].name) {
                cache = b->nkn < CS_BULK_KNAMES / 2; /* kept under half full */
                break;
            }
            if (strcmp(b->kn[slot].name, name) == 0) {
                *id = b->kn[slot].id;
                return 0;
            }
        }
    }
    sqlite3_stmt *s = b->q[B_KNAME];
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    if (step(s) != 0)
        return -1;
    s = b->q[B_KID];
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    if (rc != SQLITE_ROW)
        return -1;
    if (cache && (b->kn[slot].name = strdup(name)) != NULL) {
        b->kn[slot].id = *id;
        b->nkn++;
    }
    return 0;
}

int cs_store_bulk_kernel_name(cs_store_bulk *b, int64_t span, const char *name)
{
    int64_t id;
    if (cs_bulk_kname_id(b, name, &id) != 0)
        return -1;
    sqlite3_stmt *s = b->q[B_KSPAN];
    sqlite3_bind_int64(s, 1, span);
    sqlite3_bind_int64(s, 2, id);
    return step(s);
}

int cs_store_bulk_span_launch(cs_store_bulk *b, int64_t span, int64_t lead_ns)
{
    sqlite3_stmt *s = b->q[B_LAUNCH];
    sqlite3_bind_int64(s, 1, span);
    sqlite3_bind_int64(s, 2, lead_ns);
    return step(s);
}

int cs_store_bulk_shift(cs_store_bulk *b, int from_rank, int to_rank, int64_t add_ns)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(b->st->db,
                           "UPDATE span SET rank = ?2, begin_ns = begin_ns + ?3, end_ns = end_ns + ?3,"
                           " gpu_begin_ns = gpu_begin_ns + ?3, gpu_end_ns = gpu_end_ns + ?3 WHERE rank = ?1",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(s, 1, from_rank);
    sqlite3_bind_int(s, 2, to_rank);
    sqlite3_bind_int64(s, 3, add_ns);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
    return rc;
}

/* One unnumbered collective: its communicator, rank, span and op. */
typedef struct cs_bulk_coll {
    int64_t comm, id;
    int rank, op;
} cs_bulk_coll;

/* Ranks of comm [a, b) of v (sorted by comm, rank, time): the run of
 * each rank. */
static int cs_bulk_number_comm(cs_store *st, sqlite3_stmt *up, const cs_bulk_coll *v, size_t a, size_t b,
                               const int *members, size_t nmembers, cs_store_bulk_disagree_cb cb, void *arg)
{
    /* runs per rank */
    size_t nr = 0, cap = 0;
    struct run {
        int rank;
        size_t at, n;
    } *runs = NULL;
    for (size_t i = a; i < b;) {
        size_t j = i;
        while (j < b && v[j].rank == v[i].rank)
            j++;
        if (CS_VEC_RESERVE(runs, cap, nr + 1) != 0) {
            free(runs);
            return -1;
        }
        runs[nr++] = (struct run){ v[i].rank, i, j - i };
        i = j;
    }
    /* members with none of them */
    for (size_t m = 0; m < nmembers; m++) {
        int have = 0;
        for (size_t r = 0; r < nr && !have; r++)
            have = runs[r].rank == members[m];
        if (!have) {
            if (CS_VEC_RESERVE(runs, cap, nr + 1) != 0) {
                free(runs);
                return -1;
            }
            runs[nr++] = (struct run){ members[m], b, 0 };
        }
    }
    /* the reference: the run most others equal */
    size_t best = 0, bestn = 0;
    for (size_t r = 0; r < nr; r++) {
        size_t same = 0;
        for (size_t q = 0; q < nr; q++) {
            int eq = runs[q].n == runs[r].n;
            for (size_t i = 0; eq && i < runs[r].n; i++)
                eq = v[runs[q].at + i].op == v[runs[r].at + i].op;
            same += eq;
        }
        if (same > bestn)
            bestn = same, best = r;
    }
    int rc = 0;
    if (bestn != nr) {
        char ranks[512] = "";
        size_t len = 0;
        for (size_t q = 0; q < nr; q++) {
            int eq = runs[q].n == runs[best].n;
            for (size_t i = 0; eq && i < runs[best].n; i++)
                eq = v[runs[q].at + i].op == v[runs[best].at + i].op;
            if (!eq && len + 48 < sizeof ranks)
                len += (size_t)snprintf(ranks + len, sizeof ranks - len, "%s%d (%zu)", len ? ", " : "", runs[q].rank,
                                        runs[q].n);
        }
        rc = cb ? cb(v[a].comm, runs[best].n, ranks, arg) : 0;
        free(runs);
        return rc < 0 ? -1 : 1;
    }
    for (size_t r = 0; r < nr && rc == 0; r++)
        for (size_t i = 0; i < runs[r].n && rc == 0; i++) {
            sqlite3_bind_int64(up, 1, (int64_t)i);
            sqlite3_bind_int64(up, 2, v[runs[r].at + i].id);
            rc = step(up);
        }
    (void)st;
    free(runs);
    return rc;
}

int cs_store_bulk_number_seqs(cs_store *st, cs_store_bulk_disagree_cb cb, void *arg, int *ndisagree)
{
    *ndisagree = 0;
    sqlite3_stmt *q = NULL, *up = NULL, *mem = NULL;
    cs_bulk_coll *v = NULL;
    int *members = NULL;
    size_t n = 0, cap = 0, nm = 0, capM = 0;
    int rc = -1, s;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT s.comm, s.rank, s.id, s.op FROM span s JOIN ops o ON o.id = s.op"
                           " WHERE o.kind IN ('coll', 'rooted') AND s.comm IS NOT NULL AND s.seq IS NULL"
                           " ORDER BY s.comm, s.rank, s.begin_ns, s.id",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(st->db, "UPDATE span SET seq = ?1, flags = flags | 8 WHERE id = ?2", -1, &up, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(st->db,
                           "SELECT c.rank FROM comms c WHERE c.id = ?1 AND c.rank IN (SELECT rank FROM processes)"
                           " ORDER BY c.rank",
                           -1, &mem, NULL) != SQLITE_OK)
        goto out;
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        if (CS_VEC_RESERVE(v, cap, n + 1) != 0)
            goto out;
        v[n++] = (cs_bulk_coll){ sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 2), sqlite3_column_int(q, 1),
                                 sqlite3_column_int(q, 3) };
    }
    if (s != SQLITE_DONE)
        goto out;
    if (cs_store_sql_exec(st->db, st->path, "BEGIN", NULL, 0) != 0)
        goto out;
    rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i;
        while (j < n && v[j].comm == v[i].comm)
            j++;
        nm = 0;
        sqlite3_bind_int64(mem, 1, v[i].comm);
        while ((s = sqlite3_step(mem)) == SQLITE_ROW) {
            if (CS_VEC_RESERVE(members, capM, nm + 1) != 0) {
                s = SQLITE_NOMEM;
                break;
            }
            members[nm++] = sqlite3_column_int(mem, 0);
        }
        sqlite3_reset(mem);
        if (s != SQLITE_DONE) {
            rc = -1;
            break;
        }
        int r = cs_bulk_number_comm(st, up, v, i, j, members, nm, cb, arg);
        if (r == 1)
            ++*ndisagree;
        rc = r < 0 ? -1 : 0;
        i = j;
    }
    if (rc == 0)
        rc = cs_store_sql_exec(st->db, st->path, "COMMIT", NULL, 0);
    else
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_finalize(q);
    sqlite3_finalize(up);
    sqlite3_finalize(mem);
    free(v);
    free(members);
    return rc;
}
