/* store.c: the SQLite store (see store.h): creating, opening, upgrading,
 * converting process logs, merging per-rank files, and the read queries. */
#include "config.h"
#include "libtrace/store.h"
#include "libtrace/dtypes.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"
#include "libtrace/store_int.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

static const char *const cs_comm_how_names[] = { "",       "world", "self", "dup",       "split",
                                                 "create", "other", "nccl", "nccl_split" };

static int cs_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int cs_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int cs_exec(cs_store *st, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        cs_fail(err, errlen, "%s: %s", st->path, msg ? msg : sqlite3_errmsg(st->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

const char *cs_store_path(const cs_store *st)
{
    return st->path;
}
int cs_store_schema_version(const cs_store *st)
{
    return st->version;
}

static void cs_pragmas(cs_store *st)
{
    sqlite3_exec(st->db,
                 "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-16384;"
                 "PRAGMA temp_store=MEMORY;",
                 NULL, NULL, NULL);
    sqlite3_busy_timeout(st->db, 5000);
}

int cs_store_meta_set(cs_store *st, const char *key, const char *value)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_meta_get(cs_store *st, const char *key, char *buf, size_t len)
{
    sqlite3_stmt *s;
    int rc = -1;
    if (sqlite3_prepare_v2(st->db, "SELECT value FROM meta WHERE key = ?", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(s, 0);
        snprintf(buf, len, "%s", v ? (const char *)v : "");
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}

/* The ops of this build: all of them in a new file, those an older file
 * lacks (same id, same name) in an upgraded one. */
static int cs_add_new_ops(cs_store *st, char *err, size_t errlen)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "INSERT OR IGNORE INTO ops(id, name, api, kind, nonblocking) VALUES(?,?,?,?,?)", -1,
                           &s, NULL) != SQLITE_OK)
        return cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
    for (int i = 0; i < CS_OP_COUNT; i++) {
        sqlite3_bind_int(s, 1, i);
        sqlite3_bind_text(s, 2, cs_ops[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, cs_ops[i].api, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, cs_ops[i].kind_name, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 5, cs_ops[i].nonblocking);
        sqlite3_step(s);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return 0;
}

/* The op and datatype tables of this build. */
static int cs_fill_static_tables(cs_store *st, char *err, size_t errlen)
{
    sqlite3_stmt *s;
    if (cs_add_new_ops(st, err, errlen) != 0)
        return -1;
    if (sqlite3_prepare_v2(st->db, "INSERT INTO dtypes(id, name) VALUES(?,?)", -1, &s, NULL) != SQLITE_OK)
        return cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
    for (int i = 0; i < CS_DT_COUNT; i++) {
        sqlite3_bind_int(s, 1, i);
        sqlite3_bind_text(s, 2, cs_dtype_names[i], -1, SQLITE_STATIC);
        sqlite3_step(s);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return 0;
}

/* A new store is built in one go and renamed into place when whole: no
 * journal while it is built (cs_store_finish turns on WAL). */
static void cs_build_pragmas(cs_store *st)
{
    sqlite3_exec(st->db,
                 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-8192;"
                 "PRAGMA temp_store=MEMORY; PRAGMA locking_mode=EXCLUSIVE; PRAGMA threads=2;",
                 NULL, NULL, NULL);
}

static void cs_unlink_db(const char *path)
{
    char side[PATH_MAX + 8];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

int cs_store_create(const char *path, cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    cs_unlink_db(path);
    cs_store *st = calloc(1, sizeof *st);
    if (!st)
        return cs_fail(err, errlen, "%s: out of memory", path);
    snprintf(st->path, sizeof st->path, "%s", path);
    /* One thread uses a store: no SQLite mutexes on its calls. */
    if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        cs_fail(err, errlen, "cannot create %s: %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
        cs_store_close(st);
        return -1;
    }
    sqlite3_exec(st->db, "PRAGMA page_size=65536", NULL, NULL, NULL);
    cs_build_pragmas(st);
    char ver[16];
    snprintf(ver, sizeof ver, "%d", CS_SCHEMA_VERSION);
    if (cs_exec(st, "BEGIN;" CS_SCHEMA_TABLES_SQL CS_SCHEMA_TIME_INDEX_SQL, err, errlen) != 0 ||
        cs_fill_static_tables(st, err, errlen) != 0 || cs_store_meta_set(st, "format", CS_TRACE_FORMAT) != 0 ||
        cs_store_meta_set(st, "schema_version", ver) != 0 ||
        cs_store_meta_set(st, "tool_version", PACKAGE_VERSION) != 0 || cs_exec(st, "COMMIT;", err, errlen) != 0) {
        if (err && !*err)
            cs_fail(err, errlen, "cannot write %s: %s", path, sqlite3_errmsg(st->db));
        cs_store_close(st);
        unlink(path);
        return -1;
    }
    st->version = CS_SCHEMA_VERSION;
    *out = st;
    return 0;
}

/* Upgrades from version v to v+1, in order; each schema change adds its
 * step here and bumps CS_SCHEMA_VERSION. The op table gains this build's
 * new ops after the steps (ids of older ops never change). */
static const char *const cs_upgrades[CS_SCHEMA_VERSION + 1] = {
    [1] = CS_UPGRADE_1_TO_2_SQL, /* NCCL/CUDA span columns, gpu_activity */
};

int cs_store_writable(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    /* The file, and its folder for SQLite's -wal and -shm files. */
    return access(path, W_OK) == 0 && access(dir, W_OK) == 0;
}

int cs__open_immutable(sqlite3 **db, const char *path)
{
    char side[PATH_MAX + 8];
    struct stat sb;
    snprintf(side, sizeof side, "%s-wal", path);
    if (stat(side, &sb) == 0 && sb.st_size > 0)
        return 1; /* its changes are only in the WAL */
    char uri[3 * PATH_MAX + 32], *w = uri;
    w += sprintf(w, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 || *c >= 0x7f)
            w += sprintf(w, "%%%02X", *c);
        else
            *w++ = (char)*c;
    sprintf(w, "?immutable=1");
    if (*db)
        sqlite3_close_v2(*db);
    *db = NULL;
    return sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK
               ? 0
               : -1;
}

int cs__needs_immutable(sqlite3 *db, const char *path)
{
    int prim = sqlite3_errcode(db) & 0xff;
    return (prim == SQLITE_READONLY || prim == SQLITE_CANTOPEN) && !cs_store_writable(path);
}

int cs_store_open(const char *path, int mode, cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return cs_fail(err, errlen, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return cs_fail(err, errlen, "%s: not a regular file", path);
    FILE *f = fopen(path, "rb");
    char magic[16] = "";
    size_t got = f ? fread(magic, 1, 16, f) : 0;
    if (f)
        fclose(f);
    if (got < 16 || memcmp(magic, "SQLite format 3", 16) != 0)
        return cs_fail(err, errlen, "%s: not a collscope trace (not an SQLite database)", path);
    cs_store *st = calloc(1, sizeof *st);
    if (!st)
        return cs_fail(err, errlen, "%s: out of memory", path);
    snprintf(st->path, sizeof st->path, "%s", path);
    int flags = (mode == CS_STORE_WRITE ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
        cs_fail(err, errlen, "%s: %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
        cs_store_close(st);
        return -1;
    }
    sqlite3_busy_timeout(st->db, 5000);
    char buf[64];
    /* A truncated or corrupt file fails here, with SQLite's own words. */
    sqlite3_stmt *s;
    static const char fmt_sql[] = "SELECT value FROM meta WHERE key = 'format'";
    int rc = sqlite3_prepare_v2(st->db, fmt_sql, -1, &s, NULL);
    if (rc != SQLITE_OK && mode != CS_STORE_WRITE && cs__needs_immutable(st->db, path)) {
        char why[256];
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(st->db));
        int im = cs__open_immutable(&st->db, path);
        if (im != 0) {
            if (im > 0)
                cs_fail(err, errlen,
                        "%s: cannot read it in place (%s), and its latest changes are in %s-wal: "
                        "copy both files to a writable folder",
                        path, why, path);
            else
                cs_fail(err, errlen, "%s: cannot read it in place (%s)", path, why);
            cs_store_close(st);
            return -1;
        }
        rc = sqlite3_prepare_v2(st->db, fmt_sql, -1, &s, NULL);
    }
    if (rc != SQLITE_OK) {
        cs_fail(err, errlen, "%s: not a collscope trace (%s)", path, sqlite3_errmsg(st->db));
        cs_store_close(st);
        return -1;
    }
    rc = sqlite3_step(s);
    const unsigned char *fmt = rc == SQLITE_ROW ? sqlite3_column_text(s, 0) : NULL;
    int ok = fmt && strcmp((const char *)fmt, CS_TRACE_FORMAT) == 0;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        cs_fail(err, errlen, "%s: corrupt trace (%s)", path, sqlite3_errmsg(st->db));
        sqlite3_finalize(s);
        cs_store_close(st);
        return -1;
    }
    sqlite3_finalize(s);
    if (!ok) {
        cs_fail(err, errlen, "%s: not a collscope trace (no format mark)", path);
        cs_store_close(st);
        return -1;
    }
    if (cs_store_meta_get(st, "schema_version", buf, sizeof buf) != 0) {
        cs_fail(err, errlen, "%s: corrupt trace (no schema version)", path);
        cs_store_close(st);
        return -1;
    }
    char *end;
    long v = strtol(buf, &end, 10);
    if (*end || v < 1) {
        cs_fail(err, errlen, "%s: corrupt trace (schema version '%s')", path, buf);
        cs_store_close(st);
        return -1;
    }
    if (v > CS_SCHEMA_VERSION) {
        cs_fail(err, errlen,
                "%s: schema version %ld is newer than this collscope understands (%d); "
                "use a newer collscope",
                path, v, CS_SCHEMA_VERSION);
        cs_store_close(st);
        return -1;
    }
    if (v < CS_SCHEMA_VERSION) {
        if (mode != CS_STORE_WRITE) {
            cs_store_close(st);
            if (cs_store_open(path, CS_STORE_WRITE, out, err, errlen) != 0)
                return -1;
            return 0;
        }
        if (cs_exec(st, "BEGIN", err, errlen) != 0) {
            cs_store_close(st);
            return -1;
        }
        for (long u = v; u < CS_SCHEMA_VERSION; u++) {
            if (!cs_upgrades[u]) {
                sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
                cs_fail(err, errlen,
                        "%s: schema version %ld cannot be upgraded to %d; "
                        "rebuild it with collscope ingest",
                        path, v, CS_SCHEMA_VERSION);
                cs_store_close(st);
                return -1;
            }
            if (cs_exec(st, cs_upgrades[u], err, errlen) != 0) {
                sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
                cs_store_close(st);
                return -1;
            }
        }
        snprintf(buf, sizeof buf, "%d", CS_SCHEMA_VERSION);
        if (cs_add_new_ops(st, err, errlen) != 0 || cs_store_meta_set(st, "schema_version", buf) != 0 ||
            cs_exec(st, "COMMIT", err, errlen) != 0) {
            cs_fail(err, errlen, "%s: cannot upgrade to schema version %d: %s", path, CS_SCHEMA_VERSION,
                    sqlite3_errmsg(st->db));
            sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
            cs_store_close(st);
            return -1;
        }
        v = CS_SCHEMA_VERSION;
    }
    st->version = (int)v;
    if (mode == CS_STORE_WRITE && cs_exec(st, CS_NCCL_COLL_SQL, err, errlen) != 0) {
        cs_store_close(st);
        return -1;
    }
    if (mode == CS_STORE_WRITE)
        cs_pragmas(st);
    *out = st;
    return 0;
}

void cs_store_close(cs_store *st)
{
    if (!st)
        return;
    if (st->db)
        sqlite3_close_v2(st->db);
    if (st->scratch[0])
        cs_unlink_db(st->scratch);
    free(st);
}

/* A copy of the open store `from` as a new file `to`, made by SQLite (it
 * reads a WAL store's pending pages too): -1, with a reason, on failure. */
static int cs_copy_store(cs_store *from, const char *to, char *err, size_t errlen)
{
    sqlite3 *db;
    int ok =
        sqlite3_open_v2(to, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_backup *b = sqlite3_backup_init(db, "main", from->db, "main");
        ok = b && sqlite3_backup_step(b, -1) == SQLITE_DONE;
        if (sqlite3_backup_finish(b) != SQLITE_OK)
            ok = 0;
    }
    if (!ok)
        cs_fail(err, errlen, "%s: cannot copy it to %s: %s", from->path, to, db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close_v2(db);
    return ok ? 0 : -1;
}

int cs_store_open_scratch(const char *path, cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    cs_store *r;
    if (cs_store_open(path, CS_STORE_READ, &r, err, errlen) != 0)
        return -1;
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !tmpdir[0])
        tmpdir = "/tmp";
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/collscope-XXXXXX", tmpdir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cs_store_close(r);
        return cs_fail(err, errlen, "%s: cannot make a private copy in %s: %s", path, tmpdir, strerror(errno));
    }
    close(fd);
    int ok = cs_copy_store(r, tmp, err, errlen) == 0;
    cs_store_close(r);
    if (!ok || cs_store_open(tmp, CS_STORE_WRITE, out, err, errlen) != 0) {
        cs_unlink_db(tmp);
        return -1;
    }
    snprintf((*out)->scratch, sizeof(*out)->scratch, "%s", tmp);
    snprintf((*out)->path, sizeof(*out)->path, "%s", path);
    return 0;
}

/* ---- converting a process log ---- */

typedef struct cs_calpt {
    uint64_t ticks;
    int64_t mono;
    int64_t real;
} cs_calpt;

typedef struct cs_conv {
    int tsc;
    double tpn;   /* ticks per ns when points are too few */
    int64_t base; /* real - mono at the first point */
    cs_calpt *pt;
    size_t n;
} cs_conv;

static int cs_calpt_cmp(const void *a, const void *b)
{
    const cs_calpt *x = a, *y = b;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* Keep points at least 20 ms apart (and the last), so slopes are good. */
static void cs_conv_prepare(cs_conv *cv)
{
    if (cv->n == 0)
        return;
    qsort(cv->pt, cv->n, sizeof *cv->pt, cs_calpt_cmp);
    cv->base = cv->pt[0].real - cv->pt[0].mono;
    if (!cv->tsc)
        return;
    size_t k = 1;
    for (size_t i = 1; i < cv->n; i++) {
        int last = i == cv->n - 1;
        if (cv->pt[i].mono - cv->pt[k - 1].mono >= 20000000 || (last && cv->pt[i].mono - cv->pt[k - 1].mono >= 2000000))
            cv->pt[k++] = cv->pt[i];
    }
    cv->n = k;
}

static int64_t cs_conv_ns(const cs_conv *cv, uint64_t t)
{
    if (!cv->tsc || cv->n == 0)
        return (int64_t)t + cv->base;
    if (cv->n == 1) {
        double d = ((double)t - (double)cv->pt[0].ticks) / cv->tpn;
        return cv->pt[0].mono + (int64_t)d + cv->base;
    }
    /* The segment containing t (or the nearest one, to extrapolate). */
    size_t lo = 0, hi = cv->n - 1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (cv->pt[mid].ticks <= t)
            lo = mid;
        else
            hi = mid;
    }
    const cs_calpt *a = &cv->pt[lo], *b = &cv->pt[hi];
    double slope = (double)(b->mono - a->mono) / (double)(b->ticks - a->ticks);
    double d = ((double)t - (double)a->ticks) * slope;
    return a->mono + (int64_t)d + cv->base;
}

typedef struct cs_pending {
    uint16_t tid;
    cs_rec_done done;
    int is_done; /* 0: a counters record */
    cs_rec_counters ctr;
} cs_pending;

/* The last spans of each thread. An MPI call's span slot is claimed when the
 * call begins (cs_log_hold), so what the call writes while it runs (its
 * counters, the completions it saw, a fused call it started) comes AFTER
 * its span in the log; NCCL/CUDA spans are written when the call ends,
 * after their counters. Completions name their call (op and begin ticks)
 * and counters written after their span say so (CS_CTR_AFTER): both are
 * attached to the right span, whichever side of it they are. */
#define CS_RECENT 8
#define CS_RECENT_THREADS 64
typedef struct cs_recent {
    uint16_t tid, n;
    unsigned pos;
    struct {
        sqlite3_int64 id;
        uint16_t op;
        uint64_t t0;
    } s[CS_RECENT];
} cs_recent;

static cs_recent *cs_recent_of(cs_recent *rt, int *nrt, uint16_t tid)
{
    for (int i = 0; i < *nrt; i++)
        if (rt[i].tid == tid)
            return &rt[i];
    if (*nrt == CS_RECENT_THREADS)
        return NULL;
    cs_recent *r = &rt[(*nrt)++];
    memset(r, 0, sizeof *r);
    r->tid = tid;
    return r;
}

static void cs_recent_add(cs_recent *r, sqlite3_int64 id, uint16_t op, uint64_t t0)
{
    if (!r)
        return;
    r->pos = (r->pos + 1) % CS_RECENT;
    r->s[r->pos].id = id;
    r->s[r->pos].op = op;
    r->s[r->pos].t0 = t0;
    if (r->n < CS_RECENT)
        r->n++;
}

/* The span of the completion call that wrote d, among the thread's recent
 * ones; 0 when not there (an older log: its span comes next). */
static sqlite3_int64 cs_recent_done(const cs_recent *r, const cs_rec_done *d)
{
    if (!r)
        return 0;
    for (unsigned k = 0; k < r->n; k++) {
        unsigned i = (r->pos + CS_RECENT - k) % CS_RECENT;
        if (r->s[i].op == d->op && r->s[i].t0 == d->t0)
            return r->s[i].id;
    }
    return 0;
}

/* Rows of one table inserted CS_BATCH_ROWS at a time by one multi-row
 * INSERT: a statement's fixed cost (cursor, transaction checks) is paid
 * once per batch, not once per row. Integer columns only; a row's NULLs
 * are bits of `nul`. The last, short batch goes row by row. */
#define CS_BATCH_ROWS 64
#define CS_BATCH_COLS 24
typedef struct cs_batch {
    sqlite3_stmt *many, *one;
    int ncol, n, bad; /* bad: a batch failed (cs_put_done checks it late) */
    /* On the heap: the preload converts its log at exit on whatever
     * thread ends the program, whose stack may be small. */
    int64_t (*v)[CS_BATCH_COLS]; /* [CS_BATCH_ROWS] */
    uint32_t nul[CS_BATCH_ROWS];
} cs_batch;

/* `head` is "INSERT INTO t(c1, ..., cN) VALUES". */
static int cs_batch_prepare(sqlite3 *db, cs_batch *b, const char *head, int ncol)
{
    memset(b, 0, sizeof *b);
    b->ncol = ncol;
    b->v = malloc(CS_BATCH_ROWS * sizeof *b->v);
    if (!b->v)
        return -1;
    size_t hl = strlen(head), rowl = 2 + 2 * (size_t)ncol, cap = hl + rowl * CS_BATCH_ROWS + 1;
    char *sql = malloc(cap);
    if (!sql)
        return -1;
    memcpy(sql, head, hl);
    char *w = sql + hl;
    for (int r = 0; r < CS_BATCH_ROWS; r++) {
        *w++ = r ? ',' : ' ';
        *w++ = '(';
        for (int c = 0; c < ncol; c++) {
            *w++ = '?';
            *w++ = c + 1 < ncol ? ',' : ')';
        }
    }
    *w = 0;
    int rc = sqlite3_prepare_v2(db, sql, -1, &b->many, NULL) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, sql, (int)(hl + rowl), &b->one, NULL) == SQLITE_OK
                 ? 0
                 : -1;
    free(sql);
    return rc;
}

/* Parameters are NULL after prepare and after each step (cleared then):
 * only a row's values are bound. */
static void cs_batch_bind(sqlite3_stmt *s, const cs_batch *b, int row, int base)
{
    for (int c = 0; c < b->ncol; c++)
        if (!(b->nul[row] >> c & 1))
            sqlite3_bind_int64(s, base + c + 1, b->v[row][c]);
}

static int cs_batch_flush(cs_batch *b)
{
    int ok = 1;
    if (b->n == CS_BATCH_ROWS) {
        for (int r = 0; r < b->n; r++)
            cs_batch_bind(b->many, b, r, r * b->ncol);
        ok = sqlite3_step(b->many) == SQLITE_DONE;
        sqlite3_reset(b->many);
        sqlite3_clear_bindings(b->many);
    } else {
        for (int r = 0; r < b->n && ok; r++) {
            cs_batch_bind(b->one, b, r, 0);
            ok = sqlite3_step(b->one) == SQLITE_DONE;
            sqlite3_reset(b->one);
            sqlite3_clear_bindings(b->one);
        }
    }
    b->n = 0;
    if (!ok)
        b->bad = 1;
    return ok ? 0 : -1;
}

/* The next row to fill: all columns NULL until set. */
static int64_t *cs_batch_row(cs_batch *b)
{
    b->nul[b->n] = (1u << b->ncol) - 1;
    return b->v[b->n];
}

static inline void cs_batch_set(cs_batch *b, int col, int64_t v)
{
    b->v[b->n][col] = v;
    b->nul[b->n] &= ~(1u << col);
}

static int cs_batch_put(cs_batch *b)
{
    return ++b->n == CS_BATCH_ROWS ? cs_batch_flush(b) : 0;
}

static void cs_batch_free(cs_batch *b)
{
    sqlite3_finalize(b->many);
    sqlite3_finalize(b->one);
    free(b->v);
    b->many = b->one = NULL;
    b->v = NULL;
}

static void cs_put_done(cs_batch *d, int rank, const cs_rec_done *x, sqlite3_int64 span, int64_t end_ns)
{
    cs_batch_row(d);
    cs_batch_set(d, 0, rank);
    cs_batch_set(d, 1, x->req);
    cs_batch_set(d, 2, span);
    cs_batch_set(d, 3, x->source);
    cs_batch_set(d, 4, x->tag);
    cs_batch_set(d, 5, end_ns);
    cs_batch_put(d);
}

static void cs_put_counters(sqlite3_stmt *c, const char *events, const cs_rec_counters *x, sqlite3_int64 span)
{
    char names[256];
    snprintf(names, sizeof names, "%s", events);
    char *save = NULL;
    int k = 0;
    for (char *ev = strtok_r(names, ",", &save); ev && k < x->n; ev = strtok_r(NULL, ",", &save), k++) {
        sqlite3_bind_int64(c, 1, span);
        sqlite3_bind_text(c, 2, ev, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(c, 3, (sqlite3_int64)x->v[k]);
        sqlite3_step(c);
        sqlite3_reset(c);
    }
}

/* GPU times of a process by correlation id (GPUTIME records; algo: what
 * the NCCL profiler plugin reported, source 2). */
typedef struct cs_gt {
    uint64_t corr, g0, g1;
    uint32_t algo;
} cs_gt;

static int cs_gt_cmp(const void *a, const void *b)
{
    const cs_gt *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static const cs_gt *cs_gt_find(const cs_gt *a, size_t n, uint64_t corr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && a[lo].corr == corr ? &a[lo] : NULL;
}

/* One nccl_coll row: what NCCL's profiler plugin said of span `id`. */
static int cs_import_nccl_coll(sqlite3_stmt *s, sqlite3_int64 id, const cs_gt *np, const cs_conv *cv)
{
    static const char *const algos[] = { CS_NP_ALGOS }, *const protos[] = { CS_NP_PROTOS };
    unsigned a = CS_NP_ALGO(np->algo), p = CS_NP_PROTO(np->algo);
    sqlite3_bind_int64(s, 1, id);
    if (a == 0)
        sqlite3_bind_null(s, 2);
    else
        sqlite3_bind_text(s, 2, a <= sizeof algos / sizeof *algos ? algos[a - 1] : "other", -1, SQLITE_STATIC);
    if (p == 0)
        sqlite3_bind_null(s, 3);
    else
        sqlite3_bind_text(s, 3, p <= sizeof protos / sizeof *protos ? protos[p - 1] : "other", -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 4, (int)CS_NP_NCH(np->algo));
    if (np->g0) {
        int64_t gb = cs_conv_ns(cv, np->g0), ge = cs_conv_ns(cv, np->g1);
        sqlite3_bind_int64(s, 5, gb);
        sqlite3_bind_int64(s, 6, ge < gb ? gb : ge);
    } else {
        sqlite3_bind_null(s, 5);
        sqlite3_bind_null(s, 6);
    }
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_reset(s);
    return rc;
}

/* The SPANX record a thread wrote before its next span. */
typedef struct cs_xpend {
    uint16_t tid;
    int have;
    cs_rec_spanx x;
} cs_xpend;

static int cs_read_modules(cs_store *st, const char *log_path, int rank)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s", log_path);
    char *dot = strrchr(path, '.');
    if (dot && strcmp(dot, ".cslog") == 0)
        *dot = '\0';
    strncat(path, ".modules", sizeof path - strlen(path) - 1);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "INSERT INTO modules(rank, lo, hi, bias, path) VALUES(?,?,?,?,?)", -1, &s, NULL) !=
        SQLITE_OK) {
        fclose(f);
        return -1;
    }
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, bias;
        char mpath[PATH_MAX];
        if (sscanf(line, "%llx %llx %llx %4095[^\n]", &lo, &hi, &bias, mpath) != 4)
            continue;
        sqlite3_bind_int(s, 1, rank);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)lo);
        sqlite3_bind_int64(s, 3, (sqlite3_int64)hi);
        sqlite3_bind_int64(s, 4, (sqlite3_int64)bias);
        sqlite3_bind_text(s, 5, mpath, -1, SQLITE_TRANSIENT);
        sqlite3_step(s);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    fclose(f);
    return 0;
}

enum { Q_COMM, Q_CS, Q_FRAME, Q_CTR, Q_ACT, Q_NCOLL, Q_N };
#define CS_SPAN_INSERT_HEAD                                                                      \
    "INSERT INTO span(id, rank, tid, op, comm, seq, bytes, dtype, count, peer, peer2, tag, req," \
    " begin_ns, end_ns, rc, callsite, flags, stream, grp, redop, corr, gpu_begin_ns, gpu_end_ns) VALUES"
#define CS_DONE_INSERT_HEAD "INSERT INTO completions(rank, req, span, source, tag, end_ns) VALUES"
static const char *const cs_import_sql[Q_N] = {
    [Q_COMM] = "INSERT OR REPLACE INTO comms(id, rank, local, comm_rank, size, parent, how, created_ns)"
               " VALUES(?,?,?,?,?,?,?,?)",
    [Q_CS] = "INSERT OR REPLACE INTO callsites(rank, id, depth, label) VALUES(?,?,?,NULL)",
    [Q_FRAME] = "INSERT OR REPLACE INTO frames(rank, callsite, level, pc) VALUES(?,?,?,?)",
    [Q_CTR] = "INSERT INTO counters(span, event, value) VALUES(?,?,?)",
    [Q_ACT] = "INSERT INTO gpu_activity(rank, kind, name, stream, corr, begin_ns, end_ns, bytes, device)"
              " VALUES(?,?,?,?,?,?,?,?,?)",
    [Q_NCOLL] = "INSERT INTO nccl_coll(span, algo, proto, nchannels, gpu_begin_ns, gpu_end_ns) VALUES(?,?,?,?,?,?)",
};

/* Each rank's spans take ids in their own range of 2^36. */
#define CS_SPAN_ID_RANGE ((sqlite3_int64)1 << 36)
static sqlite3_int64 cs_span_id_base(int rank)
{
    return rank >= 0 ? (sqlite3_int64)rank * CS_SPAN_ID_RANGE
                     : -((sqlite3_int64)(-(int64_t)rank) + 1) * CS_SPAN_ID_RANGE;
}

int cs_store_import_log(cs_store *st, const char *log_path, cs_import_stats *stats, char *err, size_t errlen)
{
    cs_import_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    cs_logr *lr = cs_logr_open(log_path, err, errlen);
    if (!lr)
        return -1;
    /* A copy: the reader is reopened for the second pass. */
    const cs_log_header hdr_copy = *cs_logr_header(lr), *h = &hdr_copy;
    int rank = h->rank >= 0 ? h->rank : -h->pid;
    stats->rank = rank;
    stats->closed = cs_logr_closed(lr);
    stats->dropped = (int64_t)h->dropped;

    /* Pass 1: calibration points and communicator definitions. */
    cs_conv cv = { .tsc = h->clock_kind == 1, .tpn = h->ticks_per_ns > 0 ? h->ticks_per_ns : 1.0 };
    size_t cap = 64;
    cv.pt = malloc(cap * sizeof *cv.pt);
    uint64_t *comm_id = NULL;
    size_t ncomm = 0;
    cs_gt *gts = NULL, *acts = NULL, *nps = NULL;
    size_t ngt = 0, capgt = 0, nact = 0, capact = 0, nnp = 0, capnp = 0;
    cs_xpend xp[64];
    int nxp = 0;
    const cs_rec *r;
    int rc = -1;
    sqlite3_stmt *q[Q_N] = { 0 };
    cs_batch bs = { 0 }, bd = { 0 };
    while ((r = cs_logr_next(lr)) != NULL) {
        uint32_t kind = CS_REC_KIND(r->hdr);
        if (kind == CS_REC_CALIB) {
            const cs_rec_calib *c = (const cs_rec_calib *)r;
            if (cv.n == cap) {
                cap *= 2;
                cs_calpt *np = realloc(cv.pt, cap * sizeof *cv.pt);
                if (!np)
                    goto oom;
                cv.pt = np;
            }
            cv.pt[cv.n++] = (cs_calpt){ c->ticks, c->mono_ns, c->real_ns };
            stats->calibs++;
        } else if (kind == CS_REC_COMMDEF) {
            const cs_rec_comm *c = (const cs_rec_comm *)r;
            if (c->local >= ncomm) {
                size_t nn = c->local + 64;
                uint64_t *np = realloc(comm_id, nn * sizeof *np);
                if (!np)
                    goto oom;
                memset(np + ncomm, 0, (nn - ncomm) * sizeof *np);
                comm_id = np;
                ncomm = nn;
            }
            comm_id[c->local] = c->id;
        } else if (kind == CS_REC_GPUTIME) {
            const cs_rec_gputime *g = (const cs_rec_gputime *)r;
            /* Source 1: CUDA events; 2: the NCCL profiler plugin. */
            cs_gt **pa = g->source == 2 ? &nps : &gts;
            size_t *pn = g->source == 2 ? &nnp : &ngt, *pcap = g->source == 2 ? &capnp : &capgt;
            if (*pn == *pcap) {
                *pcap = *pcap ? *pcap * 2 : 256;
                cs_gt *np = realloc(*pa, *pcap * sizeof *np);
                if (!np)
                    goto oom;
                *pa = np;
            }
            (*pa)[(*pn)++] = (cs_gt){ g->corr, g->g0, g->g1, g->algo };
        } else if (kind == CS_REC_GPUACT) {
            /* CUPTI activity: joined to the launching CUDA call below. */
            const cs_rec_gpuact *a = (const cs_rec_gpuact *)r;
            if (nact == capact) {
                capact = capact ? capact * 2 : 256;
                cs_gt *np = realloc(acts, capact * sizeof *np);
                if (!np)
                    goto oom;
                acts = np;
            }
            acts[nact++] = (cs_gt){ a->corr, a->g0, a->g1 };
        }
    }
    if (ngt)
        qsort(gts, ngt, sizeof *gts, cs_gt_cmp);
    if (nact)
        qsort(acts, nact, sizeof *acts, cs_gt_cmp);
    if (nnp)
        qsort(nps, nnp, sizeof *nps, cs_gt_cmp);
    if (cv.n == 0) {
        /* A log with no calibration holds no usable record either. */
        cv.pt[cv.n++] = (cs_calpt){ 0, 0, h->start_real_ns };
    }
    cs_conv_prepare(&cv);
    cs_logr_close(lr);
    lr = cs_logr_open(log_path, err, errlen);
    if (!lr)
        goto out;

    for (int i = 0; i < Q_N; i++)
        if (sqlite3_prepare_v2(st->db, cs_import_sql[i], -1, &q[i], NULL) != SQLITE_OK) {
            cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
            goto out;
        }
    if (cs_batch_prepare(st->db, &bs, CS_SPAN_INSERT_HEAD, 24) != 0 ||
        cs_batch_prepare(st->db, &bd, CS_DONE_INSERT_HEAD, 6) != 0) {
        cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
        goto out;
    }
    if (cs_exec(st, "BEGIN", err, errlen) != 0)
        goto out;
    /* Span ids are unique across ranks by construction (each rank has its
     * own range), so per-rank files merge by plain copy (cs_store_merge). */
    sqlite3_int64 base = cs_span_id_base(rank), next_id = base + 1;
    {
        sqlite3_stmt *m;
        if (sqlite3_prepare_v2(st->db, "SELECT MAX(id) FROM span WHERE id > ? AND id < ?", -1, &m, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(m, 1, base);
            sqlite3_bind_int64(m, 2, base + CS_SPAN_ID_RANGE);
            if (sqlite3_step(m) == SQLITE_ROW && sqlite3_column_type(m, 0) != SQLITE_NULL)
                next_id = sqlite3_column_int64(m, 0) + 1;
            sqlite3_finalize(m);
        }
    }
    /* When no row lies above our range's next id, SQLite's own next rowid
     * (the largest plus one) is ours: rows after the first leave id NULL,
     * which appends without searching the table for the id. */
    int auto_id = 0;
    sqlite3_int64 first_id = next_id;
    {
        sqlite3_stmt *m;
        if (sqlite3_prepare_v2(st->db, "SELECT MAX(id) FROM span", -1, &m, NULL) == SQLITE_OK) {
            if (sqlite3_step(m) == SQLITE_ROW)
                auto_id = sqlite3_column_type(m, 0) == SQLITE_NULL || sqlite3_column_int64(m, 0) < next_id;
            sqlite3_finalize(m);
        }
    }
    /* Completions and counters that precede the span of their thread that
     * owns them are held per thread until it comes (see cs_recent). */
    cs_pending *pend = NULL;
    size_t npend = 0, cappend = 0;
    cs_recent recent[CS_RECENT_THREADS];
    int nrecent = 0;
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;
    while ((r = cs_logr_next(lr)) != NULL) {
        uint32_t kind = CS_REC_KIND(r->hdr);
        uint32_t flags = CS_REC_FLAGS(r->hdr);
        if (kind == CS_REC_SPAN) {
            int64_t b = cs_conv_ns(&cv, r->t0), e = cs_conv_ns(&cv, r->t1);
            if (e < b)
                e = b;
            if (b < tmin)
                tmin = b;
            if (e > tmax)
                tmax = e;
            sqlite3_int64 id = next_id++;
            cs_batch_row(&bs);
            if (!auto_id || id == first_id)
                cs_batch_set(&bs, 0, id);
            cs_batch_set(&bs, 1, rank);
            cs_batch_set(&bs, 2, r->tid);
            if (r->op < CS_OP_COUNT)
                cs_batch_set(&bs, 3, r->op);
            else {
                cs_batch_set(&bs, 3, CS_OP_NONE);
                stats->unknown_ops++;
            }
            if ((flags & CS_F_HAS_COMM) && r->comm < ncomm && comm_id[r->comm])
                cs_batch_set(&bs, 4, (sqlite3_int64)comm_id[r->comm]);
            if (flags & CS_F_HAS_SEQ)
                cs_batch_set(&bs, 5, r->seq);
            cs_batch_set(&bs, 6, (sqlite3_int64)r->bytes);
            if (r->dtype)
                cs_batch_set(&bs, 7, r->dtype);
            cs_batch_set(&bs, 8, r->count);
            if (flags & CS_F_HAS_PEER)
                cs_batch_set(&bs, 9, r->peer);
            int is_sendrecv = r->op == CS_OP_MPI_Sendrecv || r->op == CS_OP_MPI_Sendrecv_replace;
            if (is_sendrecv)
                cs_batch_set(&bs, 10, (int32_t)r->req);
            if (flags & (CS_F_HAS_PEER | CS_F_FUSED | CS_F_FUSE_MEMBER))
                cs_batch_set(&bs, 11, r->tag); /* p2p tag, or fused-call id */
            if (!is_sendrecv && r->req)
                cs_batch_set(&bs, 12, r->req);
            cs_batch_set(&bs, 13, b);
            cs_batch_set(&bs, 14, e);
            cs_batch_set(&bs, 15, r->rc);
            if (r->callsite)
                cs_batch_set(&bs, 16, r->callsite);
            cs_batch_set(&bs, 17, (int)flags);
            /* The extension record this thread wrote just before. */
            const cs_rec_spanx *x = NULL;
            for (int i = 0; i < nxp; i++)
                if (xp[i].tid == r->tid && xp[i].have) {
                    xp[i].have = 0;
                    if (xp[i].x.op == r->op)
                        x = &xp[i].x;
                    break;
                }
            /* NCCL calls: GPU times by the process's own correlation id
             * (GPUTIME); CUDA calls: by CUPTI's (GPUACT). */
            int is_cuda = r->op < CS_OP_COUNT && strcmp(cs_ops[r->op].api, "CUDA") == 0;
            const cs_gt *gt =
                x && x->corr ? (is_cuda ? cs_gt_find(acts, nact, x->corr) : cs_gt_find(gts, ngt, x->corr)) : NULL;
            /* NCCL's profiler: its row, and its GPU times where CUDA events gave none. */
            const cs_gt *np = x && x->corr && !is_cuda && nnp ? cs_gt_find(nps, nnp, x->corr) : NULL;
            if (!gt && np && np->g0)
                gt = np;
            if (x) {
                cs_batch_set(&bs, 18, (sqlite3_int64)x->stream);
                if (x->grp)
                    cs_batch_set(&bs, 19, x->grp);
                if (x->redop >= 0)
                    cs_batch_set(&bs, 20, x->redop);
                if (x->corr)
                    cs_batch_set(&bs, 21, (sqlite3_int64)x->corr);
            }
            if (gt) {
                int64_t gb = cs_conv_ns(&cv, gt->g0), ge = cs_conv_ns(&cv, gt->g1);
                cs_batch_set(&bs, 22, gb);
                cs_batch_set(&bs, 23, ge < gb ? gb : ge);
            }
            if (cs_batch_put(&bs) != 0) {
                cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
                free(pend);
                goto out;
            }
            stats->spans++;
            if (np && cs_import_nccl_coll(q[Q_NCOLL], id, np, &cv) != 0) {
                cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
                free(pend);
                goto out;
            }
            /* Attach what this thread left pending. */
            size_t keep = 0;
            for (size_t i = 0; i < npend; i++) {
                cs_pending *p = &pend[i];
                if (p->tid != r->tid) {
                    pend[keep++] = *p;
                    continue;
                }
                if (p->is_done) {
                    cs_put_done(&bd, rank, &p->done, id, e);
                    stats->completions++;
                } else {
                    cs_put_counters(q[Q_CTR], h->papi_events, &p->ctr, id);
                    stats->counters++;
                }
            }
            npend = keep;
            cs_recent_add(cs_recent_of(recent, &nrecent, r->tid), id, r->op, r->t0);
        } else if (kind == CS_REC_COMMDEF) {
            const cs_rec_comm *c = (const cs_rec_comm *)r;
            sqlite3_stmt *s = q[Q_COMM];
            sqlite3_bind_int64(s, 1, (sqlite3_int64)c->id);
            sqlite3_bind_int(s, 2, rank);
            sqlite3_bind_int(s, 3, (int)c->local);
            sqlite3_bind_int(s, 4, c->rank);
            sqlite3_bind_int(s, 5, (int)c->size);
            if (c->parent)
                sqlite3_bind_int64(s, 6, (sqlite3_int64)c->parent);
            else
                sqlite3_bind_null(s, 6);
            sqlite3_bind_text(
                s, 7, c->how < sizeof cs_comm_how_names / sizeof *cs_comm_how_names ? cs_comm_how_names[c->how] : "",
                -1, SQLITE_STATIC);
            sqlite3_bind_int64(s, 8, cs_conv_ns(&cv, c->t0));
            sqlite3_step(s);
            sqlite3_reset(s);
            stats->comms++;
        } else if (kind == CS_REC_CALLSITE) {
            const cs_rec_callsite *c = (const cs_rec_callsite *)r;
            if (c->part == 0) {
                sqlite3_bind_int(q[Q_CS], 1, rank);
                sqlite3_bind_int64(q[Q_CS], 2, c->id);
                sqlite3_bind_int(q[Q_CS], 3, c->nframes);
                sqlite3_step(q[Q_CS]);
                sqlite3_reset(q[Q_CS]);
                stats->callsites++;
            }
            for (uint32_t i = 0; i < c->nhere && i < CS_CALLSITE_FRAMES_PER_REC; i++) {
                sqlite3_bind_int(q[Q_FRAME], 1, rank);
                sqlite3_bind_int64(q[Q_FRAME], 2, c->id);
                sqlite3_bind_int(q[Q_FRAME], 3, (int)(c->part * CS_CALLSITE_FRAMES_PER_REC + i));
                sqlite3_bind_int64(q[Q_FRAME], 4, (sqlite3_int64)c->pc[i]);
                sqlite3_step(q[Q_FRAME]);
                sqlite3_reset(q[Q_FRAME]);
            }
        } else if (kind == CS_REC_SPANX) {
            const cs_rec_spanx *x = (const cs_rec_spanx *)r;
            int i = 0;
            while (i < nxp && xp[i].tid != x->tid)
                i++;
            if (i == nxp && nxp < (int)(sizeof xp / sizeof *xp))
                nxp++;
            if (i < nxp) {
                xp[i].tid = x->tid;
                xp[i].have = 1;
                xp[i].x = *x;
            }
        } else if (kind == CS_REC_GPUACT) {
            static const char *const act_kind[] = { "", "kernel", "memcpy", "memset" };
            const cs_rec_gpuact *a = (const cs_rec_gpuact *)r;
            sqlite3_stmt *s = q[Q_ACT];
            sqlite3_bind_int(s, 1, rank);
            sqlite3_bind_text(s, 2, a->kind < 4 ? act_kind[a->kind] : "other", -1, SQLITE_STATIC);
            sqlite3_bind_int64(s, 3, (sqlite3_int64)(a->name & 0x7fffffffffffffffull));
            sqlite3_bind_int64(s, 4, (sqlite3_int64)a->stream);
            sqlite3_bind_int64(s, 5, a->corr);
            sqlite3_bind_int64(s, 6, cs_conv_ns(&cv, a->g0));
            sqlite3_bind_int64(s, 7, cs_conv_ns(&cv, a->g1));
            sqlite3_bind_int64(s, 8, (sqlite3_int64)a->bytes);
            sqlite3_bind_int(s, 9, (int)a->device);
            sqlite3_step(s);
            sqlite3_reset(s);
        } else if (kind == CS_REC_REQDONE || kind == CS_REC_COUNTERS) {
            /* Written while their span's call ran: the span came before. */
            if (kind == CS_REC_REQDONE) {
                const cs_rec_done *x = (const cs_rec_done *)r;
                sqlite3_int64 sp = cs_recent_done(cs_recent_of(recent, &nrecent, x->tid), x);
                if (sp) {
                    cs_put_done(&bd, rank, x, sp, cs_conv_ns(&cv, x->t1));
                    stats->completions++;
                    continue;
                }
            } else if (flags & CS_CTR_AFTER) {
                const cs_rec_counters *x = (const cs_rec_counters *)r;
                cs_recent *rc = cs_recent_of(recent, &nrecent, x->tid);
                if (rc && rc->n) {
                    cs_put_counters(q[Q_CTR], h->papi_events, x, rc->s[rc->pos].id);
                    stats->counters++;
                    continue;
                }
            }
            if (npend == cappend) {
                cappend = cappend ? cappend * 2 : 64;
                cs_pending *np = realloc(pend, cappend * sizeof *np);
                if (!np) {
                    free(pend);
                    goto oom;
                }
                pend = np;
            }
            cs_pending *p = &pend[npend++];
            memset(p, 0, sizeof *p);
            if (kind == CS_REC_REQDONE) {
                p->is_done = 1;
                p->done = *(const cs_rec_done *)r;
                p->tid = p->done.tid;
            } else {
                p->ctr = *(const cs_rec_counters *)r;
                p->tid = p->ctr.tid;
            }
        }
    }
    free(pend);
    if (cs_batch_flush(&bs) != 0 || cs_batch_flush(&bd) != 0 || bd.bad) {
        cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
        goto out;
    }

    /* The process row and its clock. */
    {
        sqlite3_stmt *s;
        const char *sql = "INSERT OR REPLACE INTO processes(rank, pid, host, exe, mpi, clock, ticks_per_ns,"
                          " world_size, status, spans, dropped, overhead_ns_per_call, overhead_ns, start_ns, end_ns,"
                          " callsites, papi_events, note, tool_version, log_file)"
                          " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
        if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
            cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
            goto out;
        }
        int64_t start = h->start_real_ns, end = h->end_real_ns;
        if (tmin != INT64_MAX && (start == 0 || tmin < start))
            start = tmin;
        if (end == 0 || (tmax != INT64_MIN && tmax > end))
            end = tmax != INT64_MIN ? tmax : start;
        sqlite3_bind_int(s, 1, rank);
        sqlite3_bind_int(s, 2, h->pid);
        sqlite3_bind_text(s, 3, h->host, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 4, h->exe, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 5, h->mpi, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 6, h->clock_kind == 1 ? "tsc" : "monotonic", -1, SQLITE_STATIC);
        sqlite3_bind_double(s, 7, h->ticks_per_ns);
        sqlite3_bind_int(s, 8, h->world_size);
        sqlite3_bind_text(s, 9, stats->closed ? "closed" : "crashed", -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 10, stats->spans);
        sqlite3_bind_int64(s, 11, (sqlite3_int64)h->dropped);
        sqlite3_bind_int64(s, 12, (sqlite3_int64)h->overhead_ns);
        sqlite3_bind_int64(s, 13, (sqlite3_int64)h->overhead_ns * stats->spans);
        sqlite3_bind_int64(s, 14, start);
        sqlite3_bind_int64(s, 15, end);
        sqlite3_bind_int(s, 16, (int)h->callsites);
        sqlite3_bind_text(s, 17, h->papi_events, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 18, h->note, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 19, h->tool_version, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 20, log_path, -1, SQLITE_TRANSIENT);
        int ok = sqlite3_step(s) == SQLITE_DONE;
        sqlite3_finalize(s);
        if (!ok) {
            cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
            goto out;
        }
        char sql2[256];
        snprintf(sql2, sizeof sql2, "INSERT OR IGNORE INTO clocks(rank, clock) VALUES(%d, '%s')", rank,
                 h->clock_kind == 1 ? "tsc" : "monotonic");
        if (cs_exec(st, sql2, err, errlen) != 0)
            goto out;
    }
    if (cs_read_modules(st, log_path, rank) != 0 || cs_exec(st, "COMMIT", err, errlen) != 0)
        goto out;
    rc = 0;
    goto out;
oom:
    cs_fail(err, errlen, "%s: out of memory", log_path);
out:
    if (rc != 0 && st->db && !sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    for (int i = 0; i < Q_N; i++)
        sqlite3_finalize(q[i]);
    cs_batch_free(&bs);
    cs_batch_free(&bd);
    free(cv.pt);
    free(comm_id);
    free(gts);
    free(acts);
    free(nps);
    if (lr)
        cs_logr_close(lr);
    return rc;
}

static int cs_file_size(const char *path, long long *size, long long *mtime)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    *size = (long long)sb.st_size;
    *mtime = (long long)sb.st_mtime;
    return 0;
}

int cs_store_convert_log(const char *log_path, const char *dir, char *out_path, char *err, size_t errlen)
{
    char emsg[512];
    cs_logr *lr = cs_logr_open(log_path, err, errlen);
    if (!lr)
        return -1;
    const cs_log_header h = *cs_logr_header(lr);
    cs_logr_close(lr);
    char ranks[PATH_MAX], path[PATH_MAX + 64], tmp[PATH_MAX + 80];
    snprintf(ranks, sizeof ranks, "%s/ranks", dir);
    if (mkdir(ranks, 0755) != 0 && errno != EEXIST)
        return cs_fail(err, errlen, "cannot create %s: %s", ranks, strerror(errno));
    if (h.rank >= 0)
        snprintf(path, sizeof path, "%s/rank-%06d-%d.db", ranks, h.rank, h.pid);
    else
        snprintf(path, sizeof path, "%s/pid-%d.db", ranks, h.pid);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cs_store *st;
    if (cs_store_create(tmp, &st, err, errlen) != 0)
        return -1;
    cs_import_stats stats;
    if (cs_store_import_log(st, log_path, &stats, err, errlen) != 0) {
        cs_store_close(st);
        unlink(tmp);
        return -1;
    }
    long long size = 0, mtime = 0;
    cs_file_size(log_path, &size, &mtime);
    snprintf(emsg, sizeof emsg, "%s %lld %d", log_path, size, stats.closed);
    /* A log of a newer preload: its new calls are kept, nameless, and
     * the ingest says so (meta unknown_ops). */
    char nunk[32];
    snprintf(nunk, sizeof nunk, "%lld", (long long)stats.unknown_ops);
    if (cs_store_meta_set(st, "source_log", emsg) != 0 || cs_store_meta_set(st, "kind", "rank") != 0 ||
        (stats.unknown_ops && cs_store_meta_set(st, "unknown_ops", nunk) != 0)) {
        cs_fail(err, errlen, "cannot write %s: %s", tmp, sqlite3_errmsg(st->db));
        cs_store_close(st);
        unlink(tmp);
        return -1;
    }
    /* Leave no WAL behind: the file is complete on its own. */
    sqlite3_exec(st->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
    cs_store_close(st);
    if (rename(tmp, path) != 0) {
        cs_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (out_path)
        snprintf(out_path, PATH_MAX, "%s", path);
    return 0;
}

int cs_store_rank_db_current(const char *db_path, const char *log_path)
{
    cs_store *st;
    char err[256], have[PATH_MAX + 64], want[PATH_MAX + 64];
    if (cs_store_open(db_path, CS_STORE_READ, &st, err, sizeof err) != 0)
        return 0;
    int ok = cs_store_meta_get(st, "source_log", have, sizeof have) == 0;
    cs_store_close(st);
    long long size = 0, mtime = 0;
    if (!ok || cs_file_size(log_path, &size, &mtime) != 0)
        return 0;
    /* Current only if made from this log, at this size, after it closed. */
    snprintf(want, sizeof want, "%s %lld 1", log_path, size);
    return strcmp(have, want) == 0;
}

int cs_store_merge(cs_store *job, const char *rank_db, char *err, size_t errlen)
{
    cs_store *r;
    if (cs_store_open(rank_db, CS_STORE_READ, &r, err, errlen) != 0)
        return -1;
    cs_store_close(r);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(job->db, "ATTACH DATABASE ? AS r", -1, &s, NULL) != SQLITE_OK)
        return cs_fail(err, errlen, "%s: %s", job->path, sqlite3_errmsg(job->db));
    sqlite3_bind_text(s, 1, rank_db, -1, SQLITE_TRANSIENT);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    if (!ok)
        return cs_fail(err, errlen, "%s: cannot attach: %s", rank_db, sqlite3_errmsg(job->db));
    /* A rank file written before nccl_coll existed gains it (empty). */
    sqlite3_exec(job->db, "CREATE TABLE IF NOT EXISTS r.nccl_coll" CS_NCCL_COLL_COLUMNS, NULL, NULL, NULL);
    /* It is read once, front to back: mapped, not copied through read(). */
    sqlite3_exec(job->db, "PRAGMA r.mmap_size=4294967296", NULL, NULL, NULL);
    int rc = -1;
    /* Op ids are the enum of the tool that wrote the file. */
    sqlite3_stmt *chk;
    if (sqlite3_prepare_v2(job->db,
                           "SELECT count(*) FROM r.ops o LEFT JOIN main.ops m ON m.id = o.id AND m.name = o.name"
                           " WHERE m.id IS NULL",
                           -1, &chk, NULL) == SQLITE_OK) {
        int mismatched = sqlite3_step(chk) == SQLITE_ROW ? sqlite3_column_int(chk, 0) : 1;
        sqlite3_finalize(chk);
        if (mismatched) {
            cs_fail(err, errlen,
                    "%s: written by another collscope version (its op table differs); "
                    "rebuild it with collscope ingest",
                    rank_db);
            goto detach;
        }
    }
    /* Span ids are disjoint across ranks: a plain copy (which SQLite does
     * page by page). Only two files of one rank need the ids shifted. */
    static const char fast[] = "BEGIN;"
                               "INSERT INTO main.span SELECT * FROM r.span;"
                               "INSERT INTO main.completions SELECT * FROM r.completions;"
                               "INSERT INTO main.counters SELECT * FROM r.counters;"
                               "INSERT INTO main.gpu_activity SELECT * FROM r.gpu_activity;"
                               "INSERT INTO main.nccl_coll SELECT * FROM r.nccl_coll;"
                               "INSERT OR REPLACE INTO main.processes SELECT * FROM r.processes;"
                               "INSERT OR REPLACE INTO main.clocks SELECT * FROM r.clocks;"
                               "INSERT OR REPLACE INTO main.comms SELECT * FROM r.comms;"
                               "INSERT OR REPLACE INTO main.callsites SELECT * FROM r.callsites;"
                               "INSERT OR REPLACE INTO main.frames SELECT * FROM r.frames;"
                               "INSERT INTO main.modules SELECT * FROM r.modules;"
                               "COMMIT;";
    char *why = NULL;
    if (sqlite3_exec(job->db, fast, NULL, NULL, &why) == SQLITE_OK) {
        rc = 0;
        goto detach;
    }
    if (getenv("COLLSCOPE_VERBOSE"))
        fprintf(stderr, "collscope: %s: merging with shifted span ids (%s)\n", rank_db, why ? why : "");
    sqlite3_free(why);
    sqlite3_exec(job->db, "ROLLBACK", NULL, NULL, NULL);
    char sql[2048];
    snprintf(sql, sizeof sql,
             "BEGIN;"
             "CREATE TEMP TABLE IF NOT EXISTS cs_off(v INTEGER); DELETE FROM cs_off;"
             "INSERT INTO cs_off SELECT COALESCE(MAX(id), 0) FROM main.span;"
             "INSERT INTO main.span SELECT id + (SELECT v FROM cs_off), rank, tid, op, comm, seq, bytes, dtype,"
             "  count, peer, peer2, tag, req, begin_ns, end_ns, rc, callsite, flags, stream, grp, redop, corr,"
             "  gpu_begin_ns, gpu_end_ns FROM r.span;"
             "INSERT INTO main.gpu_activity SELECT * FROM r.gpu_activity;"
             "INSERT INTO main.completions SELECT rank, req, span + (SELECT v FROM cs_off), source, tag,"
             "  end_ns FROM r.completions;"
             "INSERT INTO main.counters SELECT span + (SELECT v FROM cs_off), event, value FROM r.counters;"
             "INSERT INTO main.nccl_coll SELECT span + (SELECT v FROM cs_off), algo, proto, nchannels, gpu_begin_ns,"
             "  gpu_end_ns FROM r.nccl_coll;"
             "INSERT OR REPLACE INTO main.processes SELECT * FROM r.processes;"
             "INSERT OR REPLACE INTO main.clocks SELECT * FROM r.clocks;"
             "INSERT OR REPLACE INTO main.comms SELECT * FROM r.comms;"
             "INSERT OR REPLACE INTO main.callsites SELECT * FROM r.callsites;"
             "INSERT OR REPLACE INTO main.frames SELECT * FROM r.frames;"
             "INSERT INTO main.modules SELECT * FROM r.modules;"
             "COMMIT;");
    if (cs_exec(job, sql, err, errlen) != 0) {
        sqlite3_exec(job->db, "ROLLBACK", NULL, NULL, NULL);
        goto detach;
    }
    rc = 0;
detach:
    sqlite3_exec(job->db, "DETACH DATABASE r", NULL, NULL, NULL);
    return rc;
}

/* Is the store's op table this build's, id for id? */
static int cs_ops_are_ours(cs_store *st)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "SELECT id, name FROM ops", -1, &s, NULL) != SQLITE_OK)
        return 0;
    int n = 0, ok = 1;
    while (ok && sqlite3_step(s) == SQLITE_ROW) {
        int id = sqlite3_column_int(s, 0);
        const unsigned char *name = sqlite3_column_text(s, 1);
        ok = id >= 0 && id < CS_OP_COUNT && name && strcmp((const char *)name, cs_ops[id].name) == 0;
        n++;
    }
    sqlite3_finalize(s);
    return ok && n == CS_OP_COUNT;
}

int cs_store_create_from(const char *path, const char *rank_db, cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    cs_store *r;
    if (cs_store_open(rank_db, CS_STORE_READ, &r, err, errlen) != 0)
        return -1;
    char tool[64] = "", kind[16] = "";
    cs_store_meta_get(r, "tool_version", tool, sizeof tool);
    cs_store_meta_get(r, "kind", kind, sizeof kind);
    int usable = r->version == CS_SCHEMA_VERSION && strcmp(tool, PACKAGE_VERSION) == 0 && strcmp(kind, "rank") == 0 &&
                 cs_ops_are_ours(r);
    cs_unlink_db(path);
    if (usable && cs_copy_store(r, path, err, errlen) != 0) {
        cs_unlink_db(path);
        usable = 0; /* cs_store_create will say what is wrong with the folder */
    }
    cs_store_close(r);
    if (!usable)
        return 1;
    cs_store *st = calloc(1, sizeof *st);
    if (!st) {
        unlink(path);
        return cs_fail(err, errlen, "%s: out of memory", path);
    }
    snprintf(st->path, sizeof st->path, "%s", path);
    st->version = CS_SCHEMA_VERSION;
    if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        cs_store_close(st);
        unlink(path);
        return 1;
    }
    cs_build_pragmas(st);
    if (cs_exec(st, "DELETE FROM meta WHERE key IN ('source_log', 'unknown_ops')", err, errlen) != 0) {
        cs_store_close(st);
        unlink(path);
        return 1;
    }
    *out = st;
    return 0;
}

int cs_store_finish(cs_store *job, const char *command, char *err, size_t errlen)
{
    /* Indexes after the bulk load (sorted with SQLite's worker threads),
     * statistics from a sample, then the WAL mode readers expect. */
    if (cs_exec(job,
                "PRAGMA mmap_size=4294967296; PRAGMA threads=2; BEGIN;" CS_SCHEMA_INDEXES_SQL "COMMIT;"
                "PRAGMA analysis_limit=1000; ANALYZE; PRAGMA locking_mode=NORMAL;",
                err, errlen) != 0)
        return -1;
    sqlite3_exec(job->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cs_store_meta_set(job, "kind", "job");
    cs_store_meta_set(job, "created", now);
    if (command)
        cs_store_meta_set(job, "command", command);
    return 0;
}

/* ---- symbols ---- */

int cs_store_frames_unresolved(cs_store *st, int (*cb)(const cs_frame_ref *, void *), void *arg)
{
    /* The module of each frame: the mapping of that rank holding its pc. */
    const char *sql = "SELECT f.rank, f.callsite, f.level, f.pc, m.path, f.pc - m.bias"
                      " FROM frames f LEFT JOIN modules m ON m.rank = f.rank AND f.pc >= m.lo AND f.pc < m.hi"
                      " WHERE f.func IS NULL ORDER BY m.path, f.pc";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        cs_frame_ref f;
        f.rank = sqlite3_column_int(s, 0);
        f.callsite = sqlite3_column_int64(s, 1);
        f.level = sqlite3_column_int(s, 2);
        f.pc = (uint64_t)sqlite3_column_int64(s, 3);
        f.module = (const char *)sqlite3_column_text(s, 4);
        f.offset = (uint64_t)sqlite3_column_int64(s, 5);
        if ((rc = cb(&f, arg)) != 0)
            break;
    }
    sqlite3_finalize(s);
    return rc;
}

int cs_store_frame_set_symbol(cs_store *st, int rank, int64_t callsite, int level, const char *func, const char *file,
                              int line)
{
    static const char *sql =
        "UPDATE frames SET func = ?, file = ?, line = ?,"
        " module = (SELECT m.path FROM modules m WHERE m.rank = frames.rank AND frames.pc >= m.lo AND frames.pc < m.hi LIMIT 1),"
        " offset = frames.pc - COALESCE((SELECT m.bias FROM modules m WHERE m.rank = frames.rank AND frames.pc >= m.lo"
        "   AND frames.pc < m.hi LIMIT 1), 0)"
        " WHERE rank = ? AND callsite = ? AND level = ?";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, func ? func : "??", -1, SQLITE_TRANSIENT);
    if (file)
        sqlite3_bind_text(s, 2, file, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 2);
    sqlite3_bind_int(s, 3, line);
    sqlite3_bind_int(s, 4, rank);
    sqlite3_bind_int64(s, 5, callsite);
    sqlite3_bind_int(s, 6, level);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
    return rc;
}

/* Frames inside these objects are not the user's call site. */
static int cs_is_system_module(const char *path)
{
    static const char *const skip[] = { "collscope",   "libmpi",    "libopen-",    "libmpich",     "libnccl",
                                        "libcudart",   "libcuda.",  "libc.so",     "libc-",        "ld-linux",
                                        "libpthread",  "libpmix",   "libucp",      "libuct",       "libfabric",
                                        "python3",     "libpython", "MPI.cpython", "libmpi_mpifh", "libmpi_usempi",
                                        "libgfortran", NULL };
    if (!path)
        return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int i = 0; skip[i]; i++)
        if (strncmp(base, skip[i], strlen(skip[i])) == 0 || strstr(base, skip[i]) == base)
            return 1;
    return 0;
}

int cs_store_label_callsites(cs_store *st)
{
    const char *sql = "SELECT f.rank, f.callsite, f.level, f.func, f.file, f.line, f.module, f.offset FROM frames f"
                      " ORDER BY f.rank, f.callsite, f.level";
    sqlite3_stmt *s, *u;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(st->db, "UPDATE callsites SET label = ? WHERE rank = ? AND id = ?", -1, &u, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(s);
        return -1;
    }
    sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL);
    int cur_rank = INT32_MIN;
    int64_t cur_cs = -1;
    int done = 0;
    char first[512] = "";
    while (1) {
        int row = sqlite3_step(s) == SQLITE_ROW;
        int rank = row ? sqlite3_column_int(s, 0) : 0;
        int64_t cs = row ? sqlite3_column_int64(s, 1) : 0;
        if (!row || rank != cur_rank || cs != cur_cs) {
            if (cur_cs >= 0 && first[0]) {
                sqlite3_bind_text(u, 1, first, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int(u, 2, cur_rank);
                sqlite3_bind_int64(u, 3, cur_cs);
                sqlite3_step(u);
                sqlite3_reset(u);
            }
            if (!row)
                break;
            cur_rank = rank;
            cur_cs = cs;
            done = 0;
            first[0] = '\0';
        }
        if (done)
            continue;
        const char *func = (const char *)sqlite3_column_text(s, 3);
        const char *file = (const char *)sqlite3_column_text(s, 4);
        int line = sqlite3_column_int(s, 5);
        const char *mod = (const char *)sqlite3_column_text(s, 6);
        sqlite3_int64 off = sqlite3_column_int64(s, 7);
        if (cs_is_system_module(mod))
            continue;
        const char *mbase = mod ? strrchr(mod, '/') : NULL;
        mbase = mbase ? mbase + 1 : (mod ? mod : "?");
        if (file && *file && line > 0) {
            const char *fb = strrchr(file, '/');
            snprintf(first, sizeof first, "%s:%d %s", fb ? fb + 1 : file, line, func ? func : "??");
        } else if (func && strcmp(func, "??") != 0) {
            snprintf(first, sizeof first, "%s+0x%llx %s", mbase, (unsigned long long)off, func);
        } else {
            snprintf(first, sizeof first, "%s+0x%llx", mbase, (unsigned long long)off);
        }
        done = 1;
    }
    sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(s);
    sqlite3_finalize(u);
    return 0;
}

/* ---- reading ---- */

static void cs_col_text(sqlite3_stmt *s, int i, char *buf, size_t len)
{
    const unsigned char *v = sqlite3_column_text(s, i);
    snprintf(buf, len, "%s", v ? (const char *)v : "");
}

int cs_store_procs(cs_store *st, cs_proc **out, int *n)
{
    const char *sql =
        "SELECT p.rank, p.pid, p.host, p.mpi, p.clock, p.status, p.spans, p.dropped, p.start_ns, p.end_ns,"
        " p.overhead_ns, COALESCE(k.offset_ns, 0), COALESCE(k.drift_ppm, 0), COALESCE(k.residual_ns, -1)"
        " FROM processes p LEFT JOIN clocks k ON k.rank = p.rank ORDER BY p.rank, p.pid";
    sqlite3_stmt *s;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int cap = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            cs_proc *np = realloc(*out, (size_t)cap * sizeof *np);
            if (!np) {
                sqlite3_finalize(s);
                return -1;
            }
            *out = np;
        }
        cs_proc *p = &(*out)[(*n)++];
        memset(p, 0, sizeof *p);
        p->rank = sqlite3_column_int(s, 0);
        p->pid = sqlite3_column_int(s, 1);
        cs_col_text(s, 2, p->host, sizeof p->host);
        cs_col_text(s, 3, p->mpi, sizeof p->mpi);
        cs_col_text(s, 4, p->clock, sizeof p->clock);
        cs_col_text(s, 5, p->status, sizeof p->status);
        p->spans = sqlite3_column_int64(s, 6);
        p->dropped = sqlite3_column_int64(s, 7);
        p->start_ns = sqlite3_column_int64(s, 8);
        p->end_ns = sqlite3_column_int64(s, 9);
        p->overhead_ns = sqlite3_column_int64(s, 10);
        p->clock_offset_ns = sqlite3_column_int64(s, 11);
        p->clock_drift_ppm = sqlite3_column_double(s, 12);
        p->align_residual_ns = sqlite3_column_int64(s, 13);
    }
    sqlite3_finalize(s);
    return 0;
}

int cs_store_set_alignment(cs_store *st, int rank, int64_t offset_ns, double drift_ppm, int64_t residual_ns)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db,
                           "UPDATE clocks SET offset_ns = ?, drift_ppm = ?, residual_ns = ?,"
                           " ref_ns = (SELECT MIN(start_ns) FROM processes WHERE processes.rank = clocks.rank)"
                           " WHERE rank = ?",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(s, 1, offset_ns);
    sqlite3_bind_double(s, 2, drift_ppm);
    sqlite3_bind_int64(s, 3, residual_ns);
    sqlite3_bind_int(s, 4, rank);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
    return rc;
}

int cs_store_ops(cs_store *st, cs_op_row **out, int *n)
{
    sqlite3_stmt *s;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT id, name, kind, nonblocking FROM ops ORDER BY id", -1, &s, NULL) !=
        SQLITE_OK)
        return -1;
    int cap = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int id = sqlite3_column_int(s, 0);
        if (id < 0 || id > 65535)
            continue;
        if (id >= cap) {
            int nc = id + 64;
            cs_op_row *np = realloc(*out, (size_t)nc * sizeof *np);
            if (!np) {
                sqlite3_finalize(s);
                return -1;
            }
            memset(np + cap, 0, (size_t)(nc - cap) * sizeof *np);
            *out = np;
            cap = nc;
        }
        cs_op_row *o = &(*out)[id];
        o->id = id;
        cs_col_text(s, 1, o->name, sizeof o->name);
        cs_col_text(s, 2, o->kind, sizeof o->kind);
        o->nonblocking = sqlite3_column_int(s, 3);
        if (id + 1 > *n)
            *n = id + 1;
    }
    sqlite3_finalize(s);
    return 0;
}

cs_span_iter *cs__span_iter_wrap(sqlite3_stmt *s)
{
    cs_span_iter *it = calloc(1, sizeof *it);
    if (!it) {
        sqlite3_finalize(s);
        return NULL;
    }
    it->s = s;
    return it;
}

cs_span_iter *cs_store_spans(cs_store *st, const cs_span_query *q, char *err, size_t errlen)
{
    char sql[2048];
    const char *order = q->order == CS_ORDER_COMM_SEQ ? " ORDER BY s.comm, s.seq, s.rank"
                        : q->order == CS_ORDER_TIME   ? " ORDER BY s.begin_ns"
                                                      : " ORDER BY s.rank, s.begin_ns";
    char where[512] = " WHERE 1";
    size_t w = strlen(where);
    if (q->order == CS_ORDER_COMM_SEQ)
        w += (size_t)snprintf(where + w, sizeof where - w, " AND s.seq IS NOT NULL");
    if (q->rank >= 0 || q->rank < -1)
        w += (size_t)snprintf(where + w, sizeof where - w, " AND s.rank = %d", q->rank);
    if (q->t1 > 0)
        /* The window applies to raw times shifted by the rank's offset; the
         * (rank, begin_ns) index serves the per-rank case. */
        w += (size_t)snprintf(where + w, sizeof where - w,
                              " AND " CS_ALIGNED("s.end_ns") " >= %lld AND " CS_ALIGNED("s.begin_ns") " < %lld",
                              (long long)q->t0, (long long)q->t1);
    snprintf(sql, sizeof sql, "SELECT " CS_SPAN_COLS "%s%s", where, order);
    cs_span_iter *it = calloc(1, sizeof *it);
    if (!it) {
        cs_fail(err, errlen, "out of memory");
        return NULL;
    }
    if (sqlite3_prepare_v2(st->db, sql, -1, &it->s, NULL) != SQLITE_OK) {
        cs_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
        free(it);
        return NULL;
    }
    return it;
}

void cs__span_bind(sqlite3_stmt *s, const cs_span *x)
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

void cs__span_row(sqlite3_stmt *s, cs_span *o)
{
    o->id = sqlite3_column_int64(s, 0);
    o->rank = sqlite3_column_int(s, 1);
    o->tid = sqlite3_column_int(s, 2);
    o->op = sqlite3_column_int(s, 3);
    o->comm = sqlite3_column_int64(s, 4);
    o->seq = sqlite3_column_int64(s, 5);
    o->bytes = sqlite3_column_int64(s, 6);
    o->count = sqlite3_column_int64(s, 7);
    o->dtype = sqlite3_column_int(s, 8);
    o->peer = sqlite3_column_int(s, 9);
    o->peer2 = sqlite3_column_int(s, 10);
    o->tag = sqlite3_column_int(s, 11);
    o->req = sqlite3_column_int64(s, 12);
    o->begin_ns = sqlite3_column_int64(s, 13);
    o->end_ns = sqlite3_column_int64(s, 14);
    o->rc = sqlite3_column_int(s, 15);
    o->callsite = sqlite3_column_int64(s, 16);
    o->flags = (uint32_t)sqlite3_column_int64(s, 17);
    o->gpu_begin_ns = sqlite3_column_int64(s, 18);
    o->gpu_end_ns = sqlite3_column_int64(s, 19);
    o->stream = sqlite3_column_int64(s, 20);
    o->grp = sqlite3_column_int64(s, 21);
}

int cs_span_next(cs_span_iter *it, cs_span *o)
{
    int rc = sqlite3_step(it->s);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return -1;
    cs__span_row(it->s, o);
    return 1;
}

void cs_span_iter_free(cs_span_iter *it)
{
    if (!it)
        return;
    sqlite3_finalize(it->s);
    free(it);
}

int cs_store_completions(cs_store *st, int (*cb)(const cs_completion *, void *), void *arg)
{
    const char *sql =
        "SELECT c.rank, c.req, COALESCE(c.span, 0), COALESCE(c.source, -1), COALESCE(c.tag, -1), " CS_ALIGNED(
            "c.end_ns") " FROM completions c LEFT JOIN clocks k ON k.rank = c.rank";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        cs_completion c = { sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
                            sqlite3_column_int(s, 3), sqlite3_column_int(s, 4),   sqlite3_column_int64(s, 5) };
        if ((rc = cb(&c, arg)) != 0)
            break;
    }
    sqlite3_finalize(s);
    return rc;
}

int cs_store_comm_members(cs_store *st, int (*cb)(const cs_comm_member *, void *), void *arg)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT id, rank, comm_rank, size, COALESCE(parent, 0), how FROM comms"
                           " ORDER BY id, comm_rank",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        cs_comm_member m;
        m.comm = sqlite3_column_int64(s, 0);
        m.rank = sqlite3_column_int(s, 1);
        m.comm_rank = sqlite3_column_int(s, 2);
        m.size = sqlite3_column_int(s, 3);
        m.parent = sqlite3_column_int64(s, 4);
        cs_col_text(s, 5, m.how, sizeof m.how);
        if ((rc = cb(&m, arg)) != 0)
            break;
    }
    sqlite3_finalize(s);
    return rc;
}

int cs_store_callsite_label(cs_store *st, int rank, int64_t callsite, char *buf, size_t len)
{
    sqlite3_stmt *s;
    int rc = -1;
    buf[0] = '\0';
    if (sqlite3_prepare_v2(st->db, "SELECT label FROM callsites WHERE rank = ? AND id = ?", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(s, 1, rank);
    sqlite3_bind_int64(s, 2, callsite);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
        cs_col_text(s, 0, buf, len);
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}

int cs_store_group_durations(cs_store *st, const char *group, int (*cb)(const cs_group_row *, void *), void *arg)
{
    const char *key = strcmp(group, "comm") == 0       ? "CAST(s.comm AS TEXT)"
                      : strcmp(group, "callsite") == 0 ? "COALESCE(c.label, '(unknown)')"
                                                       : "o.name";
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT %s AS k, o.name, s.end_ns - s.begin_ns AS d, COALESCE(s.bytes, 0), s.rank FROM span s"
             " JOIN ops o ON o.id = s.op LEFT JOIN callsites c ON c.rank = s.rank AND c.id = s.callsite"
             " WHERE o.kind NOT IN ('init', 'finalize', 'marker', 'commnew', 'commfree')%s"
             " ORDER BY k, d",
             key, strcmp(group, "comm") == 0 ? " AND s.comm IS NOT NULL" : "");
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        cs_group_row r = { (const char *)sqlite3_column_text(s, 0), (const char *)sqlite3_column_text(s, 1),
                           sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3), sqlite3_column_int(s, 4) };
        if ((rc = cb(&r, arg)) != 0)
            break;
    }
    sqlite3_finalize(s);
    return rc;
}

typedef struct cs_gacc {
    cs_group_stat *a;
    size_t n, cap;
    char key[256]; /* the group being read */
    char op[48];
    int64_t *d;
    size_t nd, capd;
    int64_t bytes;
    int oom;
} cs_gacc;

static int64_t cs_nearest_rank(const int64_t *sorted, size_t n, double q)
{
    size_t k = (size_t)(q * (double)n + 0.999999999);
    k = k < 1 ? 1 : k > n ? n : k;
    return sorted[k - 1];
}

static void cs_gacc_flush(cs_gacc *g)
{
    if (g->nd == 0)
        return;
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 32;
        cs_group_stat *na = realloc(g->a, nc * sizeof *na);
        if (!na) {
            g->oom = 1;
            return;
        }
        g->a = na;
        g->cap = nc;
    }
    cs_group_stat *x = &g->a[g->n++];
    snprintf(x->key, sizeof x->key, "%s", g->key);
    snprintf(x->op, sizeof x->op, "%s", g->op);
    x->count = (int64_t)g->nd;
    x->bytes = g->bytes;
    x->total = 0;
    for (size_t i = 0; i < g->nd; i++)
        x->total += g->d[i];
    x->p50 = cs_nearest_rank(g->d, g->nd, 0.50);
    x->p90 = cs_nearest_rank(g->d, g->nd, 0.90);
    x->p99 = cs_nearest_rank(g->d, g->nd, 0.99);
    x->max = g->d[g->nd - 1];
    g->nd = 0;
    g->bytes = 0;
}

/* Rows come ordered by key, then duration. */
static int cs_gacc_row(const cs_group_row *r, void *arg)
{
    cs_gacc *g = arg;
    const char *key = r->key ? r->key : "";
    if (g->nd == 0 || strcmp(key, g->key) != 0) {
        cs_gacc_flush(g);
        snprintf(g->key, sizeof g->key, "%s", key);
        snprintf(g->op, sizeof g->op, "%s", r->op ? r->op : "");
    } else if (r->op && strcmp(g->op, r->op) != 0) {
        snprintf(g->op, sizeof g->op, "(several)");
    }
    if (g->nd == g->capd) {
        size_t nc = g->capd ? g->capd * 2 : 1024;
        int64_t *nd = realloc(g->d, nc * sizeof *nd);
        if (!nd) {
            g->oom = 1;
            return 1;
        }
        g->d = nd;
        g->capd = nc;
    }
    g->d[g->nd++] = r->dur_ns;
    g->bytes += r->bytes;
    return 0;
}

int cs_store_group_stats(cs_store *st, const char *group, cs_group_stat **out, size_t *n)
{
    cs_gacc g;
    memset(&g, 0, sizeof g);
    int rc = cs_store_group_durations(st, group, cs_gacc_row, &g);
    if (!g.oom)
        cs_gacc_flush(&g);
    free(g.d);
    if ((rc != 0 && !g.oom) || g.oom) {
        free(g.a);
        *out = NULL;
        *n = 0;
        return -1;
    }
    *out = g.a;
    *n = g.n;
    return 0;
}

int cs_store_rank_busy(cs_store *st, int (*cb)(int, int64_t, int64_t, int64_t, void *), void *arg)
{
    /* Time in traced calls between the end of MPI_Init and the start of
     * MPI_Finalize (or the whole log), against that wall time. */
    const char *sql =
        "SELECT s.rank, SUM(CASE WHEN o.kind IN ('init','finalize','marker') THEN 0 ELSE s.end_ns - s.begin_ns END),"
        " COALESCE(MAX(CASE WHEN o.kind = 'finalize' THEN s.begin_ns END), MAX(s.end_ns))"
        "  - COALESCE(MAX(CASE WHEN o.kind = 'init' THEN s.end_ns END), MIN(s.begin_ns)), count(*)"
        " FROM span s JOIN ops o ON o.id = s.op GROUP BY s.rank ORDER BY s.rank";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (sqlite3_step(s) == SQLITE_ROW)
        if ((rc = cb(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
                     sqlite3_column_int64(s, 3), arg)) != 0)
            break;
    sqlite3_finalize(s);
    return rc;
}

int64_t cs_store_count_spans(cs_store *st)
{
    sqlite3_stmt *s;
    int64_t n = -1;
    if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM span", -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* ---- GPU overlap of communication with compute ---- */

typedef struct cs_iv {
    int64_t b, e;
} cs_iv;

/* Time of the sorted, disjoint intervals a[0..n) covered by the kernels of
 * rank `rank` on streams other than `stream` (their union). */
static int cs_overlap_covered(cs_store *st, int rank, int64_t stream, const cs_iv *a, size_t n, int64_t *covered)
{
    sqlite3_stmt *k;
    *covered = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT begin_ns, end_ns FROM gpu_activity WHERE rank = ? AND kind = 'kernel'"
                           " AND stream IS NOT ? AND end_ns > begin_ns ORDER BY begin_ns",
                           -1, &k, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(k, 1, rank);
    sqlite3_bind_int64(k, 2, stream);
    size_t i = 0;
    int64_t ub = 0, ue = INT64_MIN; /* the kernel union interval being built */
    for (int more = 1; more;) {
        int64_t b = 0, e = 0;
        more = sqlite3_step(k) == SQLITE_ROW;
        if (more) {
            b = sqlite3_column_int64(k, 0);
            e = sqlite3_column_int64(k, 1);
            if (b <= ue) {
                if (e > ue)
                    ue = e;
                continue;
            }
        }
        if (ue > INT64_MIN) {
            /* Intersect [ub, ue) with the communication intervals. */
            while (i < n && a[i].e <= ub)
                i++;
            for (size_t j = i; j < n && a[j].b < ue; j++) {
                int64_t lo = a[j].b > ub ? a[j].b : ub, hi = a[j].e < ue ? a[j].e : ue;
                if (hi > lo)
                    *covered += hi - lo;
            }
        }
        ub = b;
        ue = more ? e : INT64_MIN;
    }
    sqlite3_finalize(k);
    return 0;
}

int cs_store_gpu_overlap(cs_store *st, int (*cb)(int rank, int64_t comm_ns, int64_t exposed_ns, void *), void *arg)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM gpu_activity WHERE kind = 'kernel' LIMIT 1", -1, &s, NULL) !=
        SQLITE_OK)
        return -1;
    int any = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    if (!any)
        return 0;
    if (sqlite3_prepare_v2(
            st->db,
            "SELECT s.rank, COALESCE(s.stream, 0), s.gpu_begin_ns, s.gpu_end_ns FROM span s"
            " JOIN ops o ON o.id = s.op WHERE o.api = 'NCCL' AND o.kind IN ('coll','rooted','send','recv')"
            " AND s.gpu_begin_ns IS NOT NULL AND s.gpu_end_ns > s.gpu_begin_ns"
            " ORDER BY s.rank, 2, s.gpu_begin_ns",
            -1, &s, NULL) != SQLITE_OK)
        return -1;
    cs_iv *a = NULL;
    size_t n = 0, cap = 0;
    int rank = 0, nranks = 0, rc = 0;
    int64_t stream = 0, comm_ns = 0, exposed_ns = 0;
    for (int more = 1; more && rc == 0;) {
        more = sqlite3_step(s) == SQLITE_ROW;
        int r = more ? sqlite3_column_int(s, 0) : 0;
        int64_t sm = more ? sqlite3_column_int64(s, 1) : 0;
        if (n && (!more || r != rank || sm != stream)) {
            int64_t total = 0, covered = 0;
            for (size_t i = 0; i < n; i++)
                total += a[i].e - a[i].b;
            if (cs_overlap_covered(st, rank, stream, a, n, &covered) != 0)
                rc = -1;
            comm_ns += total;
            exposed_ns += total - covered;
            n = 0;
            if (!more || r != rank) {
                if (rc == 0 && cb(rank, comm_ns, exposed_ns, arg) != 0)
                    rc = 1;
                nranks++;
                comm_ns = exposed_ns = 0;
            }
        }
        if (!more)
            break;
        rank = r;
        stream = sm;
        int64_t b = sqlite3_column_int64(s, 2), e = sqlite3_column_int64(s, 3);
        if (n && b <= a[n - 1].e) { /* grouped calls share their times */
            if (e > a[n - 1].e)
                a[n - 1].e = e;
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            cs_iv *np = realloc(a, cap * sizeof *np);
            if (!np) {
                rc = -1;
                break;
            }
            a = np;
        }
        a[n++] = (cs_iv){ b, e };
    }
    sqlite3_finalize(s);
    free(a);
    return rc < 0 ? -1 : nranks;
}
