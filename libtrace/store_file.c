/* store_file.c: a store's file (see store.h): creating, opening (with the
 * format and version checks, and the upgrade of an older file opened for
 * writing), closing, and the meta table. */
#include "config.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cs_store_path(const cs_store *st)
{
    return st->path;
}

int cs_store_schema_version(const cs_store *st)
{
    return st->version;
}

/* The settings of a store opened for writing. */
static void write_pragmas(cs_store *st)
{
    sqlite3_exec(st->db,
                 "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-16384;"
                 "PRAGMA temp_store=MEMORY;",
                 NULL, NULL, NULL);
    sqlite3_busy_timeout(st->db, 5000);
}

/* A new store is built in one go and renamed into place when whole: no
 * journal while it is built (cs_store_finish turns on WAL). */
void cs__store_file_build_pragmas(cs_store *st)
{
    sqlite3_exec(st->db,
                 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-8192;"
                 "PRAGMA temp_store=MEMORY; PRAGMA locking_mode=EXCLUSIVE; PRAGMA threads=2;",
                 NULL, NULL, NULL);
}

int cs__store_file_scratch(char *buf, size_t len, const char *prefix, const char **dir)
{
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !tmpdir[0])
        tmpdir = "/tmp";
    *dir = tmpdir;
    snprintf(buf, len, "%s/%s-XXXXXX", tmpdir, prefix);
    int fd = mkstemp(buf);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* A new store is never created through a symbolic link. */
#ifdef SQLITE_OPEN_NOFOLLOW
#define CS_STORE_FILE_NOFOLLOW SQLITE_OPEN_NOFOLLOW
#else
#define CS_STORE_FILE_NOFOLLOW 0
#endif

void cs__store_file_unlink(const char *path)
{
    char side[PATH_MAX + 8];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    /* a rollback journal left by a write that failed (a full disk) would
     * be played back into the next file of that name: damage that never
     * was */
    snprintf(side, sizeof side, "%s-journal", path);
    unlink(side);
}

int cs_store_create(const char *path, cs_store **out, char *err, size_t errlen)
{
    return cs_store_create_sized(path, -1, out, err, errlen);
}

int cs_store_create_sized(const char *path, long long expect_bytes, cs_store **out, char *err, size_t errlen)
{
    cs__store_file_unlink(path);
    return cs__store_file_create_sized(path, expect_bytes, out, err, errlen);
}

int cs__store_file_create(const char *path, cs_store **out, char *err, size_t errlen)
{
    return cs__store_file_create_sized(path, -1, out, err, errlen);
}

int cs__store_file_create_sized(const char *path, long long expect_bytes, cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    cs_store *st = calloc(1, sizeof *st);
    if (!st)
        return cs_store_sql_fail(err, errlen, "%s: out of memory", path);
    snprintf(st->path, sizeof st->path, "%s", path);
    /* One thread uses a store: no SQLite mutexes on its calls. */
    if (sqlite3_open_v2(path, &st->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | CS_STORE_FILE_NOFOLLOW,
                        NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "cannot create %s: %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
        cs_store_close(st);
        return -1;
    }
    sqlite3_exec(st->db,
                 expect_bytes >= 0 && expect_bytes < CS_STORE_SMALL_BYTES ? "PRAGMA page_size=4096"
                                                                          : "PRAGMA page_size=65536",
                 NULL, NULL, NULL);
    cs__store_file_build_pragmas(st);
    if (cs__store_schema_create(st, err, errlen) != 0) {
        cs_store_close(st);
        unlink(path);
        return -1;
    }
    *out = st;
    return 0;
}

/* Is the file at path an SQLite database at all? 0, or -1 with a reason. */
static int check_magic(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return cs_store_sql_fail(err, errlen, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return cs_store_sql_fail(err, errlen, "%s: not a regular file", path);
    FILE *f = fopen(path, "rb");
    char magic[16] = "";
    size_t got = f ? fread(magic, 1, 16, f) : 0;
    if (f)
        fclose(f);
    if (got < 16 || memcmp(magic, "SQLite format 3", 16) != 0)
        return cs_store_sql_fail(err, errlen, "%s: not a collscope trace (not an SQLite database)", path);
    return 0;
}

/* The format mark and the schema version of an open store: the version,
 * or -1 with a reason. A file that cannot be read in place (a read-only
 * folder) is reopened as immutable when mode is CS_STORE_READ. */
static long check_format(cs_store *st, int mode, char *err, size_t errlen)
{
    const char *path = st->path;
    /* A truncated or corrupt file fails here, with SQLite's own words. */
    sqlite3_stmt *s;
    static const char fmt_sql[] = "SELECT value FROM meta WHERE key = 'format'";
    int rc = sqlite3_prepare_v2(st->db, fmt_sql, -1, &s, NULL);
    if (rc != SQLITE_OK && mode != CS_STORE_WRITE && cs_store_sql_needs_immutable(st->db, path)) {
        char why[256];
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(st->db));
        int im = cs_store_sql_open_immutable(&st->db, path);
        if (im > 0)
            return cs_store_sql_fail(err, errlen,
                                     "%s: cannot read it in place (%s), and its latest changes are in %s-wal: "
                                     "copy both files to a writable folder",
                                     path, why, path);
        if (im < 0)
            return cs_store_sql_fail(err, errlen, "%s: cannot read it in place (%s)", path, why);
        rc = sqlite3_prepare_v2(st->db, fmt_sql, -1, &s, NULL);
    }
    if (rc != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: not a collscope trace (%s)", path, sqlite3_errmsg(st->db));
    rc = sqlite3_step(s);
    const unsigned char *fmt = rc == SQLITE_ROW ? sqlite3_column_text(s, 0) : NULL;
    int ok = fmt && strcmp((const char *)fmt, CS_TRACE_FORMAT) == 0;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        cs_store_sql_fail(err, errlen, "%s: corrupt trace (%s)", path, sqlite3_errmsg(st->db));
        sqlite3_finalize(s);
        return -1;
    }
    sqlite3_finalize(s);
    if (!ok)
        return cs_store_sql_fail(err, errlen, "%s: not a collscope trace (no format mark)", path);
    char buf[64];
    if (cs_store_meta_get(st, "schema_version", buf, sizeof buf) != 0)
        return cs_store_sql_fail(err, errlen, "%s: corrupt trace (no schema version)", path);
    char *end;
    long v = strtol(buf, &end, 10);
    if (*end || v < 1)
        return cs_store_sql_fail(err, errlen, "%s: corrupt trace (schema version '%s')", path, buf);
    if (v > CS_SCHEMA_VERSION)
        return cs_store_sql_fail(err, errlen,
                                 "%s: schema version %ld is newer than this collscope understands (%d); "
                                 "use a newer collscope",
                                 path, v, CS_SCHEMA_VERSION);
    return v;
}

int cs_store_open(const char *path, int mode, cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    if (check_magic(path, err, errlen) != 0)
        return -1;
    cs_store *st = calloc(1, sizeof *st);
    if (!st)
        return cs_store_sql_fail(err, errlen, "%s: out of memory", path);
    snprintf(st->path, sizeof st->path, "%s", path);
    int flags = (mode == CS_STORE_WRITE ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
        cs_store_close(st);
        return -1;
    }
    sqlite3_busy_timeout(st->db, 5000);
    long v = check_format(st, mode, err, errlen);
    if (v < 0) {
        cs_store_close(st);
        return -1;
    }
    if (v < CS_SCHEMA_VERSION) {
        if (mode != CS_STORE_WRITE) {
            /* Reading an older file upgrades it first. */
            cs_store_close(st);
            return cs_store_open(path, CS_STORE_WRITE, out, err, errlen) != 0 ? -1 : 0;
        }
        if (cs__store_schema_upgrade(st, v, err, errlen) != 0) {
            cs_store_close(st);
            return -1;
        }
        v = CS_SCHEMA_VERSION;
    }
    st->version = (int)v;
    /* Analysis and reports read a store many times and out of its file
     * order (per rank, per communicator; a merged job's rows lie rank by
     * rank): read in place, through a map, not copied page by page through
     * pread into the cache (match on 1024 ranks x 2 M spans: 21 s through
     * a 64 MB cache, 6.7 s mapped). */
    sqlite3_exec(st->db, "PRAGMA cache_size=" CS_STORE_READ_CACHE "; PRAGMA mmap_size=" CS_STORE_MMAP ";", NULL, NULL,
                 NULL);
    if (mode == CS_STORE_WRITE) {
        if (cs_store_sql_exec(st->db, path, CS_NCCL_COLL_SQL CS_FUSE_GUARD_SQL, err, errlen) != 0) {
            cs_store_close(st);
            return -1;
        }
        write_pragmas(st);
    }
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
        cs__store_file_unlink(st->scratch);
    free(st);
}
