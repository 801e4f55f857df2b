/* store_meta.c: the store's meta table: one value a key (store.h). */
#include "config.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

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
        cs_store_sql_text(s, 0, buf, len);
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}
