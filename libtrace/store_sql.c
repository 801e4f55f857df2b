/* store_sql.c: the SQL helpers of the store's files and of the parts that
 * keep tables of their own in a trace (see store_sql.h). */
#include "config.h"
#include "libtrace/store_sql.h"
#include "libtrace/store_int.h"
#include "common/path.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set once SQLite reports a full disk (its error log, or a copy). */
static volatile int cs_store_full;

static void cs_store_sql_log(void *arg, int code, const char *msg)
{
    (void)arg, (void)msg;
    if ((code & 0xff) == SQLITE_FULL)
        cs_store_full = 1;
}

int cs_store_watch_space(void)
{
    return sqlite3_config(SQLITE_CONFIG_LOG, cs_store_sql_log, NULL) == SQLITE_OK ? 0 : -1;
}

int cs_store_disk_full(void)
{
    return cs_store_full;
}

void cs__store_sql_note_full(void)
{
    cs_store_full = 1;
}

void cs__store_sql_note(sqlite3 *db)
{
    if (db && (sqlite3_errcode(db) & 0xff) == SQLITE_FULL)
        cs_store_full = 1;
}

sqlite3 *cs_store_sql_db(cs_store *st)
{
    return st->db;
}

int cs_store_sql_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int cs_store_sql_exec(sqlite3 *db, const char *path, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        cs__store_sql_note(db);
        cs_store_sql_fail(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int cs_store_sql_table_exists(sqlite3 *db, const char *name)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

void cs_store_sql_text(sqlite3_stmt *s, int i, char *buf, size_t len)
{
    const unsigned char *v = sqlite3_column_text(s, i);
    snprintf(buf, len, "%s", v ? (const char *)v : "");
}

int cs_store_sql_open_immutable(sqlite3 **db, const char *path)
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

int cs_store_sql_needs_immutable(sqlite3 *db, const char *path)
{
    int prim = sqlite3_errcode(db) & 0xff;
    return (prim == SQLITE_READONLY || prim == SQLITE_CANTOPEN) && !cs_store_sql_writable(path);
}

void cs_store_sql_read_row(sqlite3_stmt *s, const cs_store_sql_col *cols, int ncols, void *rowp)
{
    char *row = rowp;
    for (int i = 0; i < ncols; i++) {
        char *p = row + cols[i].off;
        switch (cols[i].type) {
        case 'l': *(int64_t *)(void *)p = sqlite3_column_int64(s, i); break;
        case 'i': *(int *)(void *)p = sqlite3_column_int(s, i); break;
        case 'd': *(double *)(void *)p = sqlite3_column_double(s, i); break;
        default: cs_store_sql_text(s, i, p, cols[i].len); break;
        }
    }
}

void cs_store_sql_bind_row(sqlite3_stmt *s, const cs_store_sql_col *cols, int ncols, const void *rowp)
{
    const char *row = rowp;
    for (int i = 0; i < ncols; i++) {
        const char *p = row + cols[i].off;
        switch (cols[i].type) {
        case 'l': sqlite3_bind_int64(s, i + 1, *(const int64_t *)(const void *)p); break;
        case 'i': sqlite3_bind_int(s, i + 1, *(const int *)(const void *)p); break;
        case 'd': sqlite3_bind_double(s, i + 1, *(const double *)(const void *)p); break;
        default: sqlite3_bind_text(s, i + 1, p, -1, SQLITE_TRANSIENT); break;
        }
    }
}

int cs_store_sql_rows(sqlite3 *db, const char *sql, const cs_store_sql_col *cols, int ncols, size_t size,
                      int (*each)(const void *row, void *ctx), void *ctx)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    char *row = malloc(size);
    if (!row) {
        sqlite3_finalize(s);
        return -1;
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        memset(row, 0, size);
        cs_store_sql_read_row(s, cols, ncols, row);
        if ((ret = each(row, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = -1;
    free(row);
    sqlite3_finalize(s);
    return ret;
}

int cs_store_sql_writable(const char *path)
{
    char dir[PATH_MAX];
    cs_path_folder(path, dir, sizeof dir);
    /* The file, and its folder for SQLite's -wal and -shm files. */
    return access(path, W_OK) == 0 && access(dir, W_OK) == 0;
}
