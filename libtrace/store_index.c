/* store_index.c: a job kept as its per-rank stores (DIR/ranks/) and a
 * small index of them (DIR/index.db) instead of one merged trace.db, and
 * the job store that is read from them (see store.h). */
#include "config.h"
#include "common/vec.h"
#include "libtrace/dirlock.h"
#include "libtrace/log.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CS_INDEX_FORMAT "collscope-index"

#define CS_INDEX_TABLES_SQL                                                                             \
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"                                              \
    "CREATE TABLE rank_files(file TEXT PRIMARY KEY, rank INTEGER, pid INTEGER, host TEXT, status TEXT," \
    "  spans INTEGER, size INTEGER, mtime_ns INTEGER, run_id TEXT);"                                    \
    "CREATE TABLE comms(id INTEGER, rank INTEGER, local INTEGER, comm_rank INTEGER, size INTEGER,"      \
    "  parent INTEGER, how TEXT, created_ns INTEGER, color INTEGER, key INTEGER, name TEXT);"

/* The bytes of the file at path, and its modification time in ns: 0, or
 * -1 when it cannot be read. */
static int index_stat(const char *path, int64_t *size, int64_t *mtime_ns)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    *size = (int64_t)sb.st_size;
    *mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    return 0;
}

/* The name of path inside dir ("ranks/rank-000001-7.db"), or path. */
static const char *index_rel(const char *dir, const char *path)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (strncmp(path, dir, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

static int index_meta(sqlite3 *db, const char *key, const char *value)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta VALUES(?, ?)", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    return ok ? 0 : -1;
}

/* One rank file into the open index: its processes row, size, time and
 * communicators. */
static int index_add(sqlite3 *db, const char *dir, const char *rank_db, char *err, size_t errlen)
{
    cs_store *r;
    if (cs_store_open(rank_db, CS_STORE_READ, &r, err, errlen) != 0)
        return -1;
    cs_store_close(r);
    int64_t size, mtime;
    if (index_stat(rank_db, &size, &mtime) != 0)
        return cs_store_sql_fail(err, errlen, "%s: %s", rank_db, strerror(errno));
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS r", -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s", sqlite3_errmsg(db));
    sqlite3_bind_text(s, 1, rank_db, -1, SQLITE_TRANSIENT);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    if (!ok)
        return cs_store_sql_fail(err, errlen, "%s: cannot attach: %s", rank_db, sqlite3_errmsg(db));
    ok = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    ok = ok && sqlite3_prepare_v2(db,
                                  "INSERT INTO rank_files SELECT ?, rank, pid, host, status, spans, ?, ?,"
                                  " coalesce((SELECT value FROM r.meta WHERE key = 'run_id'), '') FROM r.processes",
                                  -1, &s, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(s, 1, index_rel(dir, rank_db), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(s, 2, size);
        sqlite3_bind_int64(s, 3, mtime);
        ok = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(db) > 0;
        sqlite3_finalize(s);
    }
    if (ok)
        ok = sqlite3_exec(db,
                          "INSERT INTO comms SELECT id, rank, local, comm_rank, size, parent, how, created_ns, color,"
                          " key, name FROM r.comms",
                          NULL, NULL, NULL) == SQLITE_OK;
    if (ok)
        ok = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    if (!ok) {
        cs_store_sql_fail(err, errlen, "%s: cannot index it: %s", rank_db, sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_exec(db, "DETACH DATABASE r", NULL, NULL, NULL);
    return ok ? 0 : -1;
}

/* The index is never created through a symbolic link. */
#ifdef SQLITE_OPEN_NOFOLLOW
#define CS_INDEX_NOFOLLOW SQLITE_OPEN_NOFOLLOW
#else
#define CS_INDEX_NOFOLLOW 0
#endif

int cs_store_index_write(const char *dir, char *const *rank_dbs, size_t n, const char *command, const char *const *meta,
                         char *err, size_t errlen)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/" CS_STORE_INDEX_FILE, dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cs__store_file_unlink(tmp);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | CS_INDEX_NOFOLLOW,
                        NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "cannot create %s: %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close_v2(db);
        return -1;
    }
    int rc = -1;
    if (cs_store_sql_exec(db, tmp, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" CS_INDEX_TABLES_SQL, err,
                          errlen) != 0)
        goto out;
    int64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (index_add(db, dir, rank_dbs[i], err, errlen) != 0)
            goto out;
        int64_t size, mtime;
        if (index_stat(rank_dbs[i], &size, &mtime) == 0)
            bytes += size;
    }
    char buf[64], now[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* The job's identity: what a results store made from it names. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char id[64];
    snprintf(id, sizeof id, "%lx-%lx-%d", (unsigned long)ts.tv_sec, (unsigned long)ts.tv_nsec, (int)getpid());
    int bad = index_meta(db, "format", CS_INDEX_FORMAT) | index_meta(db, "tool_version", PACKAGE_VERSION);
    snprintf(buf, sizeof buf, "%d", CS_SCHEMA_VERSION);
    bad |= index_meta(db, "schema_version", buf) | index_meta(db, "created", now) | index_meta(db, "job_id", id);
    snprintf(buf, sizeof buf, "%zu", n);
    bad |= index_meta(db, "rank_files", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)bytes);
    bad |= index_meta(db, "rank_bytes", buf);
    /* The run of the job: that which all its rank stores carry ("" when
     * they carry none, or not the same one). */
    char run[CS_LOG_RUN_ID_MAX + 1] = "";
    sqlite3_stmt *rs;
    if (sqlite3_prepare_v2(db, "SELECT min(run_id), count(DISTINCT run_id) FROM rank_files", -1, &rs, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(rs) == SQLITE_ROW && sqlite3_column_int(rs, 1) == 1 && sqlite3_column_text(rs, 0))
            snprintf(run, sizeof run, "%s", (const char *)sqlite3_column_text(rs, 0));
        sqlite3_finalize(rs);
    }
    if (run[0])
        bad |= index_meta(db, "run_id", run);
    if (command)
        bad |= index_meta(db, "command", command);
    for (size_t i = 0; meta && meta[i] && meta[i + 1]; i += 2)
        bad |= index_meta(db, meta[i], meta[i + 1]);
    if (bad) {
        cs_store_sql_fail(err, errlen, "%s: %s", tmp, sqlite3_errmsg(db));
        goto out;
    }
    rc = 0;
out:
    sqlite3_close_v2(db);
    if (rc == 0 && rename(tmp, path) != 0) {
        cs_store_sql_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        cs__store_file_unlink(tmp);
    return rc;
}

int cs_store_index_present(const char *dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/" CS_STORE_INDEX_FILE, dir);
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Open DIR/index.db read-only and check its format. */
static int index_open(const char *dir, sqlite3 **out, char *path, size_t pathlen, char *err, size_t errlen)
{
    snprintf(path, pathlen, "%s/" CS_STORE_INDEX_FILE, dir);
    *out = NULL;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: cannot open it: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close_v2(db);
        return -1;
    }
    sqlite3_stmt *s;
    char fmt[64] = "", ver[32] = "";
    if (sqlite3_prepare_v2(db, "SELECT key, value FROM meta WHERE key IN ('format', 'schema_version')", -1, &s, NULL) ==
        SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *k = (const char *)sqlite3_column_text(s, 0), *v = (const char *)sqlite3_column_text(s, 1);
            if (k && v)
                snprintf(strcmp(k, "format") == 0 ? fmt : ver, strcmp(k, "format") == 0 ? sizeof fmt : sizeof ver, "%s",
                         v);
        }
        sqlite3_finalize(s);
    }
    if (strcmp(fmt, CS_INDEX_FORMAT) != 0) {
        sqlite3_close_v2(db);
        return cs_store_sql_fail(err, errlen, "%s: not a collscope job index", path);
    }
    if (atoi(ver) > CS_SCHEMA_VERSION) {
        sqlite3_close_v2(db);
        return cs_store_sql_fail(err, errlen, "%s: written by a newer collscope (schema %s; this one reads up to %d)",
                                 path, ver, CS_SCHEMA_VERSION);
    }
    *out = db;
    return 0;
}

static void index_get(sqlite3 *db, const char *key, char *buf, size_t len)
{
    buf[0] = '\0';
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &s, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

/* Append "FILE (why)" to the list of rank files left out. */
static void job_fault(char *faults, size_t len, const char *file, const char *why)
{
    size_t n = strlen(faults);
    if (n + 8 >= len)
        return;
    snprintf(faults + n, len - n, "%s%s (%s)", n ? "; " : "", file, why);
}

/* One rank store's share of the job fingerprint: FNV-1a over its name,
 * size and time. The fingerprint sums them, so that the processes of a
 * parallel read can each sum their own. */
static uint64_t job_file_hash(const char *file, int64_t size, int64_t mtime)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = file; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    h = (h ^ (uint64_t)size) * 1099511628211ULL;
    return (h ^ (uint64_t)mtime) * 1099511628211ULL;
}

/* What the index records of one rank file: the process it holds (rank,
 * pid, host, spans) and its run ("" none; NULL: an index written before
 * rank files recorded their run). */
typedef struct job_rec {
    char *file;
    int rank_first;
    int64_t rank, pid, spans;
    char *host;
    char *run_id;
} job_rec;

/* The rank files of the index in order (rank, pid, file); the first of
 * each rank's files is marked, so that a cut into parts keeps a rank's
 * files together. */
typedef struct job_files {
    job_rec *rec;
    int n;
} job_files;

static void job_files_free(job_files *f)
{
    for (int i = 0; i < f->n; i++) {
        free(f->rec[i].file);
        free(f->rec[i].host);
        free(f->rec[i].run_id);
    }
    free(f->rec);
    memset(f, 0, sizeof *f);
}

static char *job_dup_col(sqlite3_stmt *s, int col, int *bad)
{
    const char *v = (const char *)sqlite3_column_text(s, col);
    char *d = v ? strdup(v) : NULL;
    if (v && !d)
        *bad = 1;
    return d;
}

static int job_files_read(sqlite3 *idx, const char *ipath, job_files *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    sqlite3_stmt *s;
    /* An index written before rank files recorded their run has no
     * run_id column: NULL for each. */
    static const char *const sql[] = {
        "SELECT file, rank, pid, host, spans, run_id FROM rank_files ORDER BY rank, pid, file",
        "SELECT file, rank, pid, host, spans, NULL FROM rank_files ORDER BY rank, pid, file",
    };
    if (sqlite3_prepare_v2(idx, sql[0], -1, &s, NULL) != SQLITE_OK &&
        sqlite3_prepare_v2(idx, sql[1], -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: cannot read it: %s", ipath, sqlite3_errmsg(idx));
    size_t cap = 0;
    int rc, prev_rank = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *file = (const char *)sqlite3_column_text(s, 0);
        int rank = sqlite3_column_int(s, 1);
        if (!file)
            continue;
        int bad = CS_VEC_RESERVE(f->rec, cap, (size_t)f->n + 1) != 0;
        job_rec *r = bad ? NULL : &f->rec[f->n];
        if (r) {
            memset(r, 0, sizeof *r);
            r->file = job_dup_col(s, 0, &bad);
            r->host = job_dup_col(s, 3, &bad);
            r->run_id = job_dup_col(s, 5, &bad);
            f->n++;
        }
        if (bad) {
            sqlite3_finalize(s);
            job_files_free(f);
            return cs_store_sql_fail(err, errlen, "%s: out of memory", ipath);
        }
        r->rank_first = f->n == 1 || rank != prev_rank;
        r->rank = sqlite3_column_int64(s, 1);
        r->pid = sqlite3_column_int64(s, 2);
        r->spans = sqlite3_column_int64(s, 4);
        prev_rank = rank;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        job_files_free(f);
        return cs_store_sql_fail(err, errlen, "%s: cannot read it (corrupt?)", ipath);
    }
    return 0;
}

/* Is file a name inside the job's folder? */
static int job_file_inside(const char *file)
{
    size_t n = strlen(file);
    return !(file[0] == '/' || strcmp(file, "..") == 0 || strncmp(file, "../", 3) == 0 || strstr(file, "/../") ||
             (n >= 3 && strcmp(file + n - 3, "/..") == 0));
}

static int job_str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Is the rank store at path the one the index records as f->rec[i]: one
 * process, of that rank, pid and host, of that run (where the index
 * records one), with as many spans, and no other file's? -1 with the
 * reason in why when it is not (another run's store copied over it, a
 * stale or a duplicated one); 0 otherwise, with *unknown set when the
 * store carries no run id (made before stores recorded it). A store that
 * cannot be read is left to cs_store_merge to name. */
static int job_file_owned(const char *path, const job_files *f, int i, int *unknown, char *why, size_t len)
{
    const job_rec *x = &f->rec[i];
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    int rc = 0;
    *unknown = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT rank, pid, host, spans, (SELECT count(*) FROM processes),"
                           " (SELECT value FROM meta WHERE key = 'run_id') FROM processes LIMIT 1",
                           -1, &s, NULL) != SQLITE_OK) {
        /* unreadable: cs_store_merge names why */
        goto out;
    }
    if (sqlite3_step(s) != SQLITE_ROW)
        goto out;
    int64_t r = sqlite3_column_int64(s, 0), p = sqlite3_column_int64(s, 1), spans = sqlite3_column_int64(s, 3),
            n = sqlite3_column_int64(s, 4);
    const char *host = (const char *)sqlite3_column_text(s, 2), *run = (const char *)sqlite3_column_text(s, 5);
    if (!host)
        host = "";
    if (!run)
        run = "";
    const char *xrun = x->run_id ? x->run_id : "";
    rc = -1;
    int same = r == x->rank && p == x->pid && job_str_eq(host, x->host);
    /* the index knows the run of the store it recorded, and this is not it */
    int other_run = x->run_id && strcmp(run, xrun) != 0;
    if (n != 1) {
        snprintf(why, len, "holds %lld processes, the job index records one: not this job's rank store", (long long)n);
        goto out;
    }
    if (!same) {
        /* the store another file of the job should hold: a copy */
        for (int j = 0; j < f->n; j++) {
            const job_rec *o = &f->rec[j];
            if (j != i && o->rank == r && o->pid == p && job_str_eq(o->host, host) &&
                (!o->run_id || strcmp(o->run_id, run) == 0)) {
                snprintf(why, len,
                         "holds rank %lld pid %lld, the process of %s: a duplicate of that rank store, left out",
                         (long long)r, (long long)p, o->file);
                goto out;
            }
        }
    } else if (i > 0 && f->rec[i - 1].rank == x->rank && f->rec[i - 1].pid == x->pid &&
               job_str_eq(f->rec[i - 1].host, x->host) && job_str_eq(f->rec[i - 1].run_id, x->run_id)) {
        snprintf(why, len, "the job index records its process (rank %lld pid %lld) for %s too: a duplicate, left out",
                 (long long)r, (long long)p, f->rec[i - 1].file);
        goto out;
    }
    if (!same || other_run) {
        char mine[128], rec[128];
        snprintf(mine, sizeof mine, "%s", run[0] ? run : "unknown");
        snprintf(rec, sizeof rec, "%s", !x->run_id ? "not recorded" : xrun[0] ? xrun : "unknown");
        snprintf(why, len,
                 "holds rank %lld pid %lld on %s of run %s, but the job index records rank %lld pid %lld on %s of run "
                 "%s: a rank store of another run%s, left out",
                 (long long)r, (long long)p, host[0] ? host : "(no host)", mine, (long long)x->rank, (long long)x->pid,
                 x->host && x->host[0] ? x->host : "(no host)", rec, other_run ? "" : " (or a stale one)");
        goto out;
    }
    if (spans != x->spans) {
        snprintf(why, len,
                 "holds %lld spans of rank %lld pid %lld, but the job index records %lld: a stale rank store (another "
                 "conversion of the process's log), left out",
                 (long long)spans, (long long)r, (long long)p, (long long)x->spans);
        goto out;
    }
    rc = 0;
    *unknown = run[0] == '\0';
out:
    sqlite3_finalize(s);
    sqlite3_close_v2(db);
    return rc;
}

/* Merge the files of part `part` of nparts (all of them when nparts is 0)
 * into job; what was left out goes to p->faults, counted. */
static void job_merge_part(const char *dir, const job_files *f, int part, int nparts, cs_store *job, cs_store_part *p)
{
    for (int i = 0, fp = 0; i < f->n; i++) {
        if (nparts > 0) {
            while (fp + 1 < nparts && f->rec[i].rank_first && (int)((int64_t)i * nparts / f->n) > fp)
                fp = (int)((int64_t)i * nparts / f->n);
            if (fp != part)
                continue;
        }
        const char *file = f->rec[i].file;
        char path[PATH_MAX + 8], why[1024];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        /* The index names files inside DIR only. */
        if (!job_file_inside(file)) {
            job_fault(p->faults, sizeof p->faults, file, "not a file inside the job's folder: refused");
            p->nfaults++;
            continue;
        }
        int64_t size, mtime;
        if (index_stat(path, &size, &mtime) != 0) {
            job_fault(p->faults, sizeof p->faults, path, "missing");
            p->nfaults++;
            continue;
        }
        int unknown;
        if (job_file_owned(path, f, i, &unknown, why, sizeof why) != 0) {
            job_fault(p->faults, sizeof p->faults, path, why);
            p->nfaults++;
            continue;
        }
        if (cs_store_merge(job, path, why, sizeof why) != 0) {
            /* the reason names the file first */
            const char *r = strncmp(why, path, strlen(path)) == 0 ? why + strlen(path) : why;
            while (*r == ':' || *r == ' ')
                r++;
            job_fault(p->faults, sizeof p->faults, path, r[0] ? r : "unreadable");
            p->nfaults++;
            continue;
        }
        p->merged++;
        p->unknown_run += unknown;
        p->sum += job_file_hash(file, size, mtime);
    }
}

/* Index the merged rows as cs_store_finish does, and read them in place
 * as every store opened for reading is (cs_store_open). */
static int job_index_rows(cs_store *job, char *err, size_t errlen)
{
    if (cs_store_sql_exec(job->db, job->path,
                          "PRAGMA mmap_size=" CS_STORE_MMAP "; PRAGMA threads=2; BEGIN;" CS_SCHEMA_INDEXES_SQL "COMMIT;"
                          "PRAGMA analysis_limit=1000; ANALYZE; PRAGMA locking_mode=NORMAL;"
                          "PRAGMA cache_size=" CS_STORE_READ_CACHE ";",
                          err, errlen) != 0)
        return -1;
    sqlite3_exec(job->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    return 0;
}

void cs__store_job_meta(cs_store *job, const char *dir, const cs_store_part *total)
{
    char ipath[PATH_MAX], command[4096] = "", job_id[64] = "", created[64] = "", end_ns[32] = "", end_host[256] = "",
                          idx_run[CS_LOG_RUN_ID_MAX + 1] = "";
    sqlite3 *idx;
    char e[256];
    if (index_open(dir, &idx, ipath, sizeof ipath, e, sizeof e) == 0) {
        index_get(idx, "command", command, sizeof command);
        index_get(idx, "job_end_ns", end_ns, sizeof end_ns);
        index_get(idx, "job_end_host", end_host, sizeof end_host);
        index_get(idx, "created", created, sizeof created);
        index_get(idx, "job_id", job_id, sizeof job_id);
        index_get(idx, "run_id", idx_run, sizeof idx_run);
        sqlite3_close_v2(idx);
    }
    cs_store_meta_set(job, "kind", "job");
    if (created[0])
        cs_store_meta_set(job, "created", created);
    if (command[0])
        cs_store_meta_set(job, "command", command);
    if (end_ns[0]) {
        cs_store_meta_set(job, "job_end_ns", end_ns);
        cs_store_meta_set(job, "job_end_host", end_host);
    }
    /* The run of the job as its index records it; "unknown" where a rank
     * store read carries none. */
    char nunk[32];
    if (idx_run[0] && total->unknown_run == 0)
        cs_store_meta_set(job, "run_id", idx_run);
    else if (total->unknown_run) {
        cs_store_meta_set(job, "run_id", "unknown");
        snprintf(nunk, sizeof nunk, "%d", total->unknown_run);
        cs_store_meta_set(job, "run_id_unknown", nunk);
    }
    char fp[256];
    snprintf(fp, sizeof fp, "%s:%d:%016llx", job_id, total->merged, (unsigned long long)total->sum);
    cs_store_meta_set(job, "job_index", ipath);
    cs_store_meta_set(job, "job_fingerprint", fp);
    if (total->faults[0]) {
        char note[3200];
        snprintf(note, sizeof note, "%d rank store%s left out: %s", total->nfaults, total->nfaults == 1 ? "" : "s",
                 total->faults);
        cs_store_meta_set(job, "recovered_from", ipath);
        cs_store_meta_set(job, "recovered_note", note);
    }
    snprintf(job->path, sizeof job->path, "%s", ipath);
}

/* The files of the job, and a new store at path (a private file in
 * $TMPDIR when path is NULL) to merge them into. */
static int job_begin(const char *dir, const char *path, job_files *f, cs_store **job, char *err, size_t errlen)
{
    sqlite3 *idx;
    char ipath[PATH_MAX];
    *job = NULL;
    if (index_open(dir, &idx, ipath, sizeof ipath, err, errlen) != 0)
        return -1;
    int rc = job_files_read(idx, ipath, f, err, errlen);
    sqlite3_close_v2(idx);
    if (rc != 0)
        return -1;
    char tmp[PATH_MAX];
    if (!path) {
        const char *tmpdir;
        if (cs__store_file_scratch(tmp, sizeof tmp, "collscope-job", &tmpdir) != 0) {
            int e = errno;
            job_files_free(f);
            return cs_store_sql_fail(err, errlen, "%s: cannot make the job's store in %s: %s", ipath, tmpdir,
                                     strerror(e));
        }
    } else {
        snprintf(tmp, sizeof tmp, "%s", path);
    }
    if (cs__store_file_create(tmp, job, err, errlen) != 0) {
        cs__store_file_unlink(tmp);
        job_files_free(f);
        return -1;
    }
    if (!path)
        snprintf((*job)->scratch, sizeof(*job)->scratch, "%s", tmp);
    return 0;
}

int cs_store_open_job(const char *dir, cs_store **out, int *nfaults, char *err, size_t errlen)
{
    *out = NULL;
    *nfaults = 0;
    job_files f;
    cs_store *job;
    if (job_begin(dir, NULL, &f, &job, err, errlen) != 0)
        return -1;
    cs_store_part total;
    memset(&total, 0, sizeof total);
    job_merge_part(dir, &f, 0, 0, job, &total);
    job_files_free(&f);
    *nfaults = total.nfaults;
    if (total.merged == 0) {
        cs_store_close(job);
        return cs_store_sql_fail(err, errlen, "%s/" CS_STORE_INDEX_FILE ": no rank store of the job can be read%s%s",
                                 dir, total.faults[0] ? ": " : "", total.faults);
    }
    if (job_index_rows(job, err, errlen) != 0) {
        cs_store_close(job);
        return -1;
    }
    cs__store_job_meta(job, dir, &total);
    *out = job;
    return 0;
}

int cs_store_job_part(const char *dir, const char *path, int part, int nparts, cs_store_part *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    job_files f;
    cs_store *job;
    if (job_begin(dir, path, &f, &job, err, errlen) != 0)
        return -1;
    job_merge_part(dir, &f, part, nparts, job, out);
    job_files_free(&f);
    int rc = job_index_rows(job, err, errlen);
    /* read by every process at once: a rollback journal, so that readers
     * share a plain read lock (no WAL index to recover or map) */
    if (rc == 0)
        sqlite3_exec(job->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
    sqlite3_stmt *s;
    out->min_id = 1;
    out->max_id = 0;
    if (rc == 0 &&
        sqlite3_prepare_v2(job->db, "SELECT min(id), max(id), count(*) FROM span", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
            out->min_id = sqlite3_column_int64(s, 0);
            out->max_id = sqlite3_column_int64(s, 1);
            out->spans = sqlite3_column_int64(s, 2);
        }
        sqlite3_finalize(s);
    }
    cs_store_close(job);
    if (rc != 0)
        cs__store_file_unlink(path);
    return rc;
}

int cs_store_job_fingerprint(const char *dir, char *fp, size_t len, char *err, size_t errlen)
{
    sqlite3 *idx;
    char ipath[PATH_MAX], job_id[64];
    if (index_open(dir, &idx, ipath, sizeof ipath, err, errlen) != 0)
        return -1;
    index_get(idx, "job_id", job_id, sizeof job_id);
    job_files f;
    int rc = job_files_read(idx, ipath, &f, err, errlen);
    sqlite3_close_v2(idx);
    if (rc != 0)
        return -1;
    int n = 0;
    uint64_t sum = 0;
    for (int i = 0; i < f.n; i++) {
        char path[PATH_MAX + 8];
        int64_t size, mtime;
        snprintf(path, sizeof path, "%s/%s", dir, f.rec[i].file);
        if (job_file_inside(f.rec[i].file) && index_stat(path, &size, &mtime) == 0) {
            n++;
            sum += job_file_hash(f.rec[i].file, size, mtime);
        }
    }
    job_files_free(&f);
    snprintf(fp, len, "%s:%d:%016llx", job_id, n, (unsigned long long)sum);
    return 0;
}

const char *cs_store_file(const cs_store *st)
{
    return st->scratch[0] ? st->scratch : st->path;
}

int cs_store_job_merge(const char *dir, const char *path, int *nfaults, char *run_note, size_t run_notelen, char *err,
                       size_t errlen)
{
    cs_store *job;
    *nfaults = 0;
    if (run_note && run_notelen)
        run_note[0] = '\0';
    /* Never beside another command writing the folder (a run, an ingest);
     * held until the process ends, so that what the caller does next in
     * DIR is covered too. */
    int lk = cs_dirlock_take(dir, 0, err, errlen);
    if (lk != 0) {
        if (lk == 1 && strlen(err) + 40 < errlen)
            strcat(err, "; wait for it to end, then merge");
        return -1;
    }
    if (cs_store_open_job(dir, &job, nfaults, err, errlen) != 0)
        return -1;
    if (run_note && run_notelen)
        cs_store_job_run_unknown(job, run_note, run_notelen);
    /* The merged file is the job's trace: no index to point back to. */
    sqlite3_exec(job->db, "DELETE FROM meta WHERE key IN ('job_index', 'job_fingerprint')", NULL, NULL, NULL);
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cs__store_file_unlink(tmp);
    int rc = cs__store_copy_file(job, tmp, err, errlen);
    cs_store_close(job);
    if (rc == 0 && rename(tmp, path) != 0) {
        cs_store_sql_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        cs__store_file_unlink(tmp);
    return rc;
}

int cs_store_job_run_unknown(cs_store *st, char *note, size_t notelen)
{
    char n[32];
    if (cs_store_meta_get(st, "run_id_unknown", n, sizeof n) != 0 || atoi(n) <= 0)
        return 0;
    snprintf(note, notelen,
             "run id unknown for %s rank store%s (made before rank stores recorded their run): each checked by its "
             "process (rank, pid, host) only",
             n, atoi(n) == 1 ? "" : "s");
    return 1;
}
