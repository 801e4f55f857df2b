/* store_live.c: the alarms `collscope run` raised while its job ran
 * (analyzer/live), kept in the trace's table live_alarms (docs/schema.md):
 * made when the first alarms are stored, absent from a trace that had
 * none or was not followed. */
#include "config.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <stdio.h>
#include <string.h>

static const char cs_live_create[] = "CREATE TABLE IF NOT EXISTS live_alarms(kind TEXT NOT NULL, rank INTEGER,\n"
                                     "  step INTEGER, raised INTEGER, until_step INTEGER, factor REAL, text TEXT,\n"
                                     "  subject TEXT, comm TEXT, name TEXT, peer INTEGER);";

/* Has live_alarms the column col (subject and comm: a table of before the
 * communicators' alarms has not; name and peer: of before the stages' and
 * links')? 1, 0, or -1 when it cannot be read. */
static int cs_live_has_col(sqlite3 *db, const char *col)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info('live_alarms') WHERE name = ?", -1, &s, NULL) !=
        SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, col, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s), n = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
    sqlite3_finalize(s);
    return n < 0 ? -1 : n > 0;
}

int cs_store_live_alarms_put(cs_store *st, const cs_store_alarm_row *a, size_t n, char *err, size_t errlen)
{
    if (cs_store_sql_exec(st->db, st->path, "BEGIN IMMEDIATE", err, errlen) != 0)
        return -1;
    if (cs_store_sql_exec(st->db, st->path, cs_live_create, err, errlen) != 0 ||
        cs_store_sql_exec(st->db, st->path, "DELETE FROM live_alarms", err, errlen) != 0)
        goto bad;
    if (cs_live_has_col(st->db, "subject") == 0 && /* a table of an older collscope */
        (cs_store_sql_exec(st->db, st->path, "ALTER TABLE live_alarms ADD COLUMN subject TEXT", err, errlen) != 0 ||
         cs_store_sql_exec(st->db, st->path, "ALTER TABLE live_alarms ADD COLUMN comm TEXT", err, errlen) != 0))
        goto bad;
    if (cs_live_has_col(st->db, "name") == 0 &&
        (cs_store_sql_exec(st->db, st->path, "ALTER TABLE live_alarms ADD COLUMN name TEXT", err, errlen) != 0 ||
         cs_store_sql_exec(st->db, st->path, "ALTER TABLE live_alarms ADD COLUMN peer INTEGER", err, errlen) != 0))
        goto bad;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db,
                           "INSERT INTO live_alarms(kind, rank, step, raised, until_step, factor, text, subject, comm, "
                           "name, peer) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &s, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
        goto bad;
    }
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(s);
        sqlite3_bind_text(s, 1, a[i].kind, -1, SQLITE_TRANSIENT);
        if (a[i].rank >= 0)
            sqlite3_bind_int(s, 2, a[i].rank);
        else
            sqlite3_bind_null(s, 2);
        sqlite3_bind_int64(s, 3, a[i].step);
        sqlite3_bind_int64(s, 4, a[i].raised);
        sqlite3_bind_int64(s, 5, a[i].until_step);
        sqlite3_bind_double(s, 6, a[i].factor);
        sqlite3_bind_text(s, 7, a[i].text, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 8, a[i].subject, -1, SQLITE_TRANSIENT);
        if (a[i].comm[0])
            sqlite3_bind_text(s, 9, a[i].comm, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(s, 9);
        if (a[i].name[0])
            sqlite3_bind_text(s, 10, a[i].name, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(s, 10);
        if (a[i].peer >= 0)
            sqlite3_bind_int(s, 11, a[i].peer);
        else
            sqlite3_bind_null(s, 11);
        if (sqlite3_step(s) != SQLITE_DONE) {
            cs_store_sql_fail(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
            sqlite3_finalize(s);
            goto bad;
        }
    }
    sqlite3_finalize(s);
    return cs_store_sql_exec(st->db, st->path, "COMMIT", err, errlen);
bad:;
    char ignore[64];
    cs_store_sql_exec(st->db, st->path, "ROLLBACK", ignore, sizeof ignore);
    return -1;
}

static const cs_store_sql_col cs_alarm_cols[] = {
    CS_SQL_STR(cs_store_alarm_row, kind),       CS_SQL_INT(cs_store_alarm_row, rank),
    CS_SQL_I64(cs_store_alarm_row, step),       CS_SQL_I64(cs_store_alarm_row, raised),
    CS_SQL_I64(cs_store_alarm_row, until_step), CS_SQL_DBL(cs_store_alarm_row, factor),
    CS_SQL_STR(cs_store_alarm_row, text),       CS_SQL_STR(cs_store_alarm_row, subject),
    CS_SQL_STR(cs_store_alarm_row, comm),       CS_SQL_STR(cs_store_alarm_row, name),
    CS_SQL_INT(cs_store_alarm_row, peer),
};
CS_SQL_ROWS_TRAMPOLINE(cs_store_alarm_row)

int cs_store_live_alarms(cs_store *st, int (*each)(const cs_store_alarm_row *, void *), void *arg)
{
    if (!cs_store_sql_table_exists(st->db, "live_alarms"))
        return 0;
    int has = cs_live_has_col(st->db, "subject"), named = cs_live_has_col(st->db, "name");
    if (has < 0 || named < 0)
        return -1;
    /* a table of an older collscope: a rank's alarm or the job's; no
     * names nor peers */
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT kind, IFNULL(rank, -1), step, raised, until_step, factor, text, %s, %s, %s FROM live_alarms "
             "ORDER BY rowid",
             has ? "IFNULL(subject, CASE WHEN rank IS NULL THEN 'job' ELSE 'rank' END), IFNULL(comm, '')"
                 : "CASE WHEN rank IS NULL THEN 'job' ELSE 'rank' END, ''",
             named ? "IFNULL(name, '')" : "''", named ? "IFNULL(peer, -1)" : "-1");
    int rc = CS_SQL_READ_ROWS(st->db, sql, cs_alarm_cols, cs_store_alarm_row, each, arg);
    return rc < 0 ? -1 : 0;
}
