/* store_copy.c: copies of a store made by SQLite: the private, writable
 * copy of a trace that cannot be written in place (cs_store_open_scratch),
 * and the page copy a job store starts from (cs_store_create_from). */
#include "config.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cs__store_copy_file(cs_store *from, const char *to, char *err, size_t errlen)
{
    sqlite3 *db;
    int ok =
        sqlite3_open_v2(to, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_backup *b = sqlite3_backup_init(db, "main", from->db, "main");
        int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
        ok = rc == SQLITE_DONE;
        if ((rc & 0xff) == SQLITE_FULL)
            cs__store_sql_note_full();
        if (sqlite3_backup_finish(b) != SQLITE_OK)
            ok = 0;
        cs__store_sql_note(db);
    }
    if (!ok)
        cs_store_sql_fail(err, errlen, "%s: cannot copy it to %s: %s", from->path, to,
                          db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close_v2(db);
    return ok ? 0 : -1;
}

int cs_store_open_scratch(const char *path, cs_store **out, char *err, size_t errlen)
{
    *out = NULL;
    cs_store *r;
    if (cs_store_open(path, CS_STORE_READ, &r, err, errlen) != 0)
        return -1;
    char tmp[PATH_MAX];
    const char *tmpdir;
    if (cs__store_file_scratch(tmp, sizeof tmp, "collscope", &tmpdir) != 0) {
        int e = errno;
        cs_store_close(r);
        return cs_store_sql_fail(err, errlen, "%s: cannot make a private copy in %s: %s", path, tmpdir, strerror(e));
    }
    int ok = cs__store_copy_file(r, tmp, err, errlen) == 0;
    cs_store_close(r);
    if (!ok || cs_store_open(tmp, CS_STORE_WRITE, out, err, errlen) != 0) {
        cs__store_file_unlink(tmp);
        return -1;
    }
    snprintf((*out)->scratch, sizeof(*out)->scratch, "%s", tmp);
    snprintf((*out)->path, sizeof(*out)->path, "%s", path);
    return 0;
}
