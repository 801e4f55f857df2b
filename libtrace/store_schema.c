/* store_schema.c: creating the tables of schema version CS_SCHEMA_VERSION
 * (store.h; the SQL is in store_schema.h, the tables in docs/schema.md)
 * and upgrading older files to it. */
#include "config.h"
#include "libtrace/dtypes.h"
#include "libtrace/ops.gen.h"
#include "libtrace/store_int.h"
#include "libtrace/store_tables.h"
#include "libtrace/store_sql.h"

#include <stdio.h>

/* Upgrades from version v to v+1, in order; each schema change adds its
 * step here and bumps CS_SCHEMA_VERSION (store.h). The op table gains this
 * build's new ops after the steps (ids of older ops never change). */
static const char *const cs_upgrades[CS_SCHEMA_VERSION + 1] = {
    [1] = CS_UPGRADE_1_TO_2_SQL, /* NCCL/CUDA span columns, gpu_activity */
    [2] = CS_UPGRADE_2_TO_3_SQL, /* communicator names, split colors and keys */
    [3] = CS_UPGRADE_3_TO_4_SQL, /* the watchdog's hangs */
    [4] = CS_UPGRADE_4_TO_5_SQL, /* the names of GPU kernels, copies and sets */
    [5] = CS_UPGRADE_5_TO_6_SQL, /* the index of the flagged spans (in flight, finalize) */
    [6] = CS_UPGRADE_6_TO_7_SQL, /* the launches of imported kernels */
};

/* The ops of this build: all of them in a new file, those an older file
 * lacks (same id, same name) in an upgraded one. */
static int add_new_ops(cs_store *st, char *err, size_t errlen)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "INSERT OR IGNORE INTO ops(id, name, api, kind, nonblocking) VALUES(?,?,?,?,?)", -1,
                           &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
    int ok = 1;
    for (int i = 0; i < CS_OP_COUNT && ok; i++) {
        sqlite3_bind_int(s, 1, i);
        sqlite3_bind_text(s, 2, cs_ops[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, cs_ops[i].api, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, cs_ops[i].kind_name, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 5, cs_ops[i].nonblocking);
        ok = sqlite3_step(s) == SQLITE_DONE;
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return ok ? 0
              : cs_store_sql_fail(err, errlen, "%s: cannot write the op table: %s", st->path, sqlite3_errmsg(st->db));
}

/* The datatype table of this build. */
static int add_dtypes(cs_store *st, char *err, size_t errlen)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "INSERT INTO dtypes(id, name) VALUES(?,?)", -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
    int ok = 1;
    for (int i = 0; i < CS_DT_COUNT && ok; i++) {
        sqlite3_bind_int(s, 1, i);
        sqlite3_bind_text(s, 2, cs_dtype_names[i], -1, SQLITE_STATIC);
        ok = sqlite3_step(s) == SQLITE_DONE;
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return ok ? 0
              : cs_store_sql_fail(err, errlen, "%s: cannot write the datatype table: %s", st->path,
                                  sqlite3_errmsg(st->db));
}

int cs__store_schema_create(cs_store *st, char *err, size_t errlen)
{
    char ver[16];
    snprintf(ver, sizeof ver, "%d", CS_SCHEMA_VERSION);
    if (cs_store_sql_exec(st->db, st->path, "BEGIN;" CS_SCHEMA_TABLES_SQL CS_SCHEMA_TIME_INDEX_SQL, err, errlen) != 0 ||
        add_new_ops(st, err, errlen) != 0 || add_dtypes(st, err, errlen) != 0 ||
        cs_store_meta_set(st, "format", CS_TRACE_FORMAT) != 0 || cs_store_meta_set(st, "schema_version", ver) != 0 ||
        cs_store_meta_set(st, "tool_version", PACKAGE_VERSION) != 0 ||
        cs_store_sql_exec(st->db, st->path, "COMMIT;", err, errlen) != 0) {
        if (err && !*err)
            cs_store_sql_fail(err, errlen, "cannot write %s: %s", st->path, sqlite3_errmsg(st->db));
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    st->version = CS_SCHEMA_VERSION;
    return 0;
}

int cs__store_schema_upgrade(cs_store *st, long from, char *err, size_t errlen)
{
    if (cs_store_sql_exec(st->db, st->path, "BEGIN", err, errlen) != 0)
        return -1;
    for (long u = from; u < CS_SCHEMA_VERSION; u++) {
        if (!cs_upgrades[u]) {
            sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
            return cs_store_sql_fail(err, errlen,
                                     "%s: schema version %ld cannot be upgraded to %d; "
                                     "rebuild it with collscope ingest",
                                     st->path, from, CS_SCHEMA_VERSION);
        }
        if (cs_store_sql_exec(st->db, st->path, cs_upgrades[u], err, errlen) != 0) {
            sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    }
    char buf[16];
    snprintf(buf, sizeof buf, "%d", CS_SCHEMA_VERSION);
    if (add_new_ops(st, err, errlen) != 0 || cs_store_meta_set(st, "schema_version", buf) != 0 ||
        cs_store_sql_exec(st->db, st->path, "COMMIT", err, errlen) != 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot upgrade to schema version %d: %s", st->path, CS_SCHEMA_VERSION,
                          sqlite3_errmsg(st->db));
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    st->version = CS_SCHEMA_VERSION;
    return 0;
}
