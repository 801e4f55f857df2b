/* failure_store.c: the failure model (failure.h) filled from an ingested
 * trace, post mortem: each process's exit (processes.status: `closed` or
 * `crashed`), whether it called MPI_Finalize, its calls that never
 * returned (spans flagged CS_F_INFLIGHT, which end at the last time their
 * log recorded), its last completed call, and per communicator the
 * highest sequence number it entered and completed. The model's time is
 * the end of the trace, or when `collscope run` saw the job end (meta
 * job_end_ns) when later; no process runs any more. */
#include "config.h"
#include "analyzer/status/failure.h"
#include "libtrace/span.h"
#include "libtrace/store_comms.h"
#include "libtrace/store_sql.h"
#include "libtrace/ops.gen.h"

_Static_assert(CS_OP_MPI_Finalize == 3, "CS_SCHEMA_FLAGGED_WHERE names MPI_Finalize as op 3");

#include <stdlib.h>
#include <string.h>

static int fs_op(const char *name)
{
    for (int i = 1; i < CS_OP_COUNT; i++)
        if (cs_ops[i].name && strcmp(cs_ops[i].name, name) == 0)
            return i;
    return 0;
}

static cs_failure_rank *fs_rank(cs_failure_model *m, int rank)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->r[i].rank == rank)
            return &m->r[i];
    cs_failure_rank *r = cs_failure_rank_add(m);
    if (r) {
        r->rank = rank;
        r->pid = rank < 0 ? -rank : 0;
        r->world = -1;
    }
    return r;
}

/* A call site label ("hang.c:89 main") as the status prints it
 * ("hang.c:89 (main)"). */
static void fs_site(const char *label, char *buf, size_t len)
{
    const char *sp = strchr(label, ' ');
    if (sp && memchr(label, ':', (size_t)(sp - label)) && sp[1] && sp[1] != '(')
        snprintf(buf, len, "%.*s (%s)", (int)(sp - label), label, sp + 1);
    else
        snprintf(buf, len, "%s", label);
}

/* The spans view's columns a call is read from, after a leading rank. */
#define FS_CALL_COLS                                                                                   \
    "rank, thread, op, COALESCE(comm, 0), COALESCE(seq, -1), COALESCE(bytes, 0), COALESCE(peer, -1), " \
    "COALESCE(tag, 0), begin_ns, end_ns, COALESCE(callsite, ''), flags, kind, gpu_begin_ns"

static void fs_call(sqlite3_stmt *s, cs_failure_call *c, char *kind, size_t klen)
{
    char op[96], site[256];
    memset(c, 0, sizeof *c);
    c->tid = sqlite3_column_int(s, 1);
    cs_store_sql_text(s, 2, op, sizeof op);
    c->op = fs_op(op);
    c->comm = (uint64_t)sqlite3_column_int64(s, 3);
    int flags = sqlite3_column_int(s, 11);
    c->seq = (flags & CS_F_HAS_SEQ) ? sqlite3_column_int64(s, 4) : -1;
    c->bytes = (uint64_t)sqlite3_column_int64(s, 5);
    c->peer = (flags & CS_F_HAS_PEER) ? sqlite3_column_int(s, 6) : -1;
    c->tag = sqlite3_column_int(s, 7);
    c->t0 = sqlite3_column_int64(s, 8);
    c->t1 = sqlite3_column_int64(s, 9);
    cs_store_sql_text(s, 10, site, sizeof site);
    fs_site(site, c->site, sizeof c->site);
    cs_store_sql_text(s, 12, kind, klen);
}

static int fs_prepare(sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **s, char *err, size_t errlen)
{
    if (sqlite3_prepare_v2(db, sql, -1, s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
    return 0;
}

/* Whether the flagged spans can be asked for by the condition of the
 * store's index of them (CS_SCHEMA_FLAGGED_WHERE, which names
 * MPI_Finalize by its op id): 1 when the store's only finalize op is that
 * one (the index, where the store has it, then finds them without a scan
 * of the spans; where it has not, the same condition scans them), 0 when
 * not (the condition by the ops table, a scan), -1 on a read error. */
static int fs_flagged_indexed(sqlite3 *db)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT COALESCE(group_concat(id), '') FROM ops WHERE kind = 'finalize'", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(s), yes = 0;
    if (rc == SQLITE_ROW) {
        const char *ids = (const char *)sqlite3_column_text(s, 0);
        yes = ids && strcmp(ids, "3") == 0;
        rc = sqlite3_step(s);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? yes : -1;
}

int cs_failure_from_store(cs_store *st, cs_failure_model *m, char *err, size_t errlen)
{
    sqlite3 *db = cs_store_sql_db(st);
    const char *path = cs_store_path(st);
    sqlite3_stmt *s = NULL;
    int rc;
    memset(m, 0, sizeof *m);
    /* the processes and how each ended */
    if (fs_prepare(db, path,
                   "SELECT rank, pid, COALESCE(host, ''), COALESCE(world_size, -1), COALESCE(status, '') "
                   "FROM processes ORDER BY rank, start_ns",
                   &s, err, errlen) != 0)
        return -1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        cs_failure_rank *r = fs_rank(m, sqlite3_column_int(s, 0));
        if (!r)
            goto oom;
        char status[32];
        r->pid = sqlite3_column_int(s, 1);
        cs_store_sql_text(s, 2, r->host, sizeof r->host);
        r->world = sqlite3_column_int(s, 3);
        cs_store_sql_text(s, 4, status, sizeof status);
        r->closed = strcmp(status, "closed") == 0;
        r->alive = 0;
    }
    if (rc != SQLITE_DONE)
        goto sqlfail;
    sqlite3_finalize(s);
    s = NULL;
    /* the communicators, their members and display names */
    cs_comms names;
    memset(&names, 0, sizeof names);
    cs_store_comms_load(st, &names);
    if (fs_prepare(db, path, "SELECT id, comm_rank, size, COALESCE(how, ''), rank FROM comms WHERE size > 0", &s, err,
                   errlen) != 0) {
        cs_store_comms_free(&names);
        return -1;
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        uint64_t id = (uint64_t)sqlite3_column_int64(s, 0);
        cs_failure_comm *c = cs_failure_comm_get(m, id, sqlite3_column_int(s, 2));
        if (!c)
            continue;
        char how[16];
        cs_store_sql_text(s, 3, how, sizeof how);
        c->how = strcmp(how, "world") == 0 ? CS_COMM_WORLD : 0;
        int cr = sqlite3_column_int(s, 1);
        if (cr >= 0 && cr < c->size)
            c->world[cr] = sqlite3_column_int(s, 4);
        if (!c->name[0])
            cs_store_comms_name(&names, (int64_t)id, c->name, sizeof c->name);
    }
    cs_store_comms_free(&names);
    if (rc != SQLITE_DONE)
        goto sqlfail;
    sqlite3_finalize(s);
    s = NULL;
    /* the calls that never returned, and who called MPI_Finalize */
    int indexed = fs_flagged_indexed(db);
    if (indexed < 0)
        goto sqlfail;
    if (fs_prepare(db, path,
                   indexed ? "SELECT " FS_CALL_COLS
                             " FROM spans WHERE id IN (SELECT id FROM span WHERE " CS_SCHEMA_FLAGGED_WHERE
                             ") ORDER BY rank, thread"
                           : "SELECT " FS_CALL_COLS " FROM spans WHERE id IN (SELECT id FROM span WHERE (flags & 512) "
                             "!= 0 OR op IN (SELECT id FROM ops WHERE kind = 'finalize')) ORDER BY rank, thread",
                   &s, err, errlen) != 0)
        return -1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        cs_failure_rank *r = fs_rank(m, sqlite3_column_int(s, 0));
        if (!r)
            goto oom;
        cs_failure_call c;
        char kind[32];
        fs_call(s, &c, kind, sizeof kind);
        if (strcmp(kind, "finalize") == 0)
            r->finalized = 1;
        int flags = sqlite3_column_int(s, 11);
        if (flags & CS_F_GPU_PEND) {
            /* the call returned; its GPU work never completed: the first */
            if (!r->has_gpu || c.t0 < r->gpu.t0) {
                r->gpu = c;
                r->has_gpu = 1;
                r->gpu_begun = sqlite3_column_type(s, 13) != SQLITE_NULL;
            }
        } else if ((flags & CS_F_INFLIGHT) && (!r->has_fly || c.tid < r->fly.tid)) {
            r->fly = c; /* the main thread's (the lowest thread index) call */
            r->has_fly = 1;
        }
        if (c.t1 > m->now)
            m->now = c.t1;
    }
    if (rc != SQLITE_DONE)
        goto sqlfail;
    sqlite3_finalize(s);
    s = NULL;
    /* per communicator of a collective in flight, the highest seq each
     * member entered and completed: from the top of its (comm, seq) index
     * down until every member has both (no scan of the whole trace) */
    if (fs_prepare(db, path,
                   "SELECT rank, seq, flags FROM span WHERE comm = ?1 AND seq IS NOT NULL AND (flags & 8) != 0 "
                   "ORDER BY seq DESC",
                   &s, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        uint64_t comm = m->r[i].fly.comm;
        int first = m->r[i].has_fly && comm && m->r[i].fly.seq >= 0;
        for (size_t k = 0; first && k < i; k++)
            first = !(m->r[k].has_fly && m->r[k].fly.comm == comm && m->r[k].fly.seq >= 0);
        if (!first)
            continue;
        int members = 0, done = 0;
        for (size_t c = 0; c < m->nc; c++)
            if (m->c[c].id == comm)
                members = m->c[c].size;
        sqlite3_reset(s);
        sqlite3_bind_int64(s, 1, (sqlite3_int64)comm);
        while (done < members && (rc = sqlite3_step(s)) == SQLITE_ROW) {
            cs_failure_rank *r = fs_rank(m, sqlite3_column_int(s, 0));
            cs_failure_seq *q = r ? cs_failure_seq_get(r, comm) : NULL;
            if (!q)
                goto oom;
            int64_t seq = sqlite3_column_int64(s, 1);
            int fly = (sqlite3_column_int(s, 2) & CS_F_INFLIGHT) != 0;
            if (q->entered < 0)
                q->entered = seq;
            if (!fly && q->completed < 0) {
                q->completed = seq;
                done++;
            }
        }
        if (done < members && rc != SQLITE_DONE)
            goto sqlfail;
    }
    sqlite3_finalize(s);
    s = NULL;
    /* each rank's last completed call (the last begun, through the time index) */
    if (fs_prepare(db, path,
                   "SELECT " FS_CALL_COLS " FROM spans WHERE id = (SELECT id FROM span WHERE rank = ?1 AND "
                   "(flags & 512) = 0 ORDER BY begin_ns DESC LIMIT 1)",
                   &s, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        cs_failure_rank *r = &m->r[i];
        sqlite3_reset(s);
        sqlite3_bind_int(s, 1, r->rank);
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            char kind[32];
            fs_call(s, &r->last, kind, sizeof kind);
            r->has_last = 1;
            if (r->last.t1 > m->now)
                m->now = r->last.t1;
        }
        if (rc != SQLITE_DONE)
            goto sqlfail;
    }
    sqlite3_finalize(s);
    s = NULL;
    /* where the watchdog's latest stack sample found a rank outside any
     * traced call: its innermost frame of the application's own code */
    if (cs_store_sql_table_exists(db, "hangs") == 1) {
        if (fs_prepare(
                db, path,
                "SELECT h.rank, COALESCE(f.func, ''), COALESCE(f.file, ''), COALESCE(f.line, 0), "
                "COALESCE(f.module, ''), h.detected_ns FROM hangs h JOIN frames f ON f.rank = h.rank AND f.callsite = h.stack "
                "WHERE h.reason = 'idle' AND h.stack > 0 ORDER BY h.rank, h.detected_ns DESC, f.level",
                &s, err, errlen) != 0)
            return -1;
        int at = INT32_MIN;
        int64_t at_t = 0;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            int rank = sqlite3_column_int(s, 0);
            int64_t t = sqlite3_column_int64(s, 5);
            if (rank != at) { /* the latest sample of each rank only */
                at = rank;
                at_t = t;
            }
            cs_failure_rank *r = fs_rank(m, rank);
            if (!r)
                goto oom;
            if (t != at_t || r->has_fly || r->sampled[0])
                continue;
            char func[128], file[256], mod[512];
            cs_store_sql_text(s, 1, func, sizeof func);
            cs_store_sql_text(s, 2, file, sizeof file);
            cs_store_sql_text(s, 4, mod, sizeof mod);
            if (!func[0] || cs_failure_system_module(mod))
                continue;
            const char *base = strrchr(file, '/');
            if (file[0])
                snprintf(r->sampled, sizeof r->sampled, "%s (%s:%d)", func, base ? base + 1 : file,
                         sqlite3_column_int(s, 3));
            else
                snprintf(r->sampled, sizeof r->sampled, "%s", func);
        }
        if (rc != SQLITE_DONE)
            goto sqlfail;
        sqlite3_finalize(s);
        s = NULL;
    }
    /* when `collscope run` saw the job end: processes of its host that died
     * were gone by then (on the clock of its first rank there) */
    char v[64] = "", host[256] = "";
    if (cs_store_meta_get(st, "job_end_ns", v, sizeof v) == 0 && v[0] &&
        cs_store_meta_get(st, "job_end_host", host, sizeof host) == 0) {
        int64_t end = strtoll(v, NULL, 10), off = 0;
        if (fs_prepare(db, path,
                       "SELECT COALESCE(k.offset_ns, 0) FROM processes p LEFT JOIN clocks k ON k.rank = p.rank "
                       "WHERE p.host = ?1 ORDER BY p.rank LIMIT 1",
                       &s, err, errlen) != 0)
            return -1;
        sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
        int found = 0;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            off = sqlite3_column_int64(s, 0);
            found = 1;
        }
        if (rc != SQLITE_DONE)
            goto sqlfail;
        sqlite3_finalize(s);
        if (found && end + off > m->now)
            m->now = end + off;
    }
    cs_failure_sort(m);
    return 0;
sqlfail:
    cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
    sqlite3_finalize(s);
    cs_failure_model_free(m);
    return -1;
oom:
    sqlite3_finalize(s);
    cs_failure_model_free(m);
    snprintf(err, errlen, "%s: out of memory reading the failures", path);
    return -1;
}
