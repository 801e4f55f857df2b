/* store_recover.c: a damaged store (pages SQLite cannot read) found
 * (cs_store_check_pages) and what can still be read of it copied into a
 * new store (cs_store_recover). */
#include "config.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* SQLite's report as one line: without its "*** in database main ***"
 * header, lines joined by ';'. */
static void one_line(char *what, size_t len, const char *text)
{
    static const char head[] = "*** in database main ***";
    if (strncmp(text, head, sizeof head - 1) == 0)
        text += sizeof head - 1;
    while (*text == '\n' || *text == ' ')
        text++;
    snprintf(what, len, "%s", text);
    for (char *p = what; *p; p++)
        if (*p == '\n')
            *p = ';';
}

/* The resource a SQLite result code says was missing (memory, the disk's
 * reads, disk space), or NULL when the code is no such failure. */
static const char *resource_of(int code)
{
    switch (code & 0xff) {
    case SQLITE_NOMEM: return "out of memory";
    case SQLITE_IOERR: return "an I/O error";
    case SQLITE_FULL: return "no space left";
    default: return NULL;
    }
}

/* A failure for want of a resource: its message in st->fault and what;
 * -1. */
static int resource_fault(cs_store *st, const char *res, const char *detail, char *what, size_t len)
{
    snprintf(st->fault, sizeof st->fault,
             "%s reading %s (%s); the trace was not checked for damage: try again with "
             "more memory or after fixing the disk",
             res, st->path, detail);
    if (what)
        snprintf(what, len, "%s", st->fault);
    return -1;
}

/* One quick_check statement (sql) as cs_store_check_pages answers. */
static int check_run(cs_store *st, const char *sql, char *what, size_t len)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
        int code = sqlite3_extended_errcode(st->db);
        if (resource_of(code))
            return resource_fault(st, resource_of(code), sqlite3_errmsg(st->db), what, len);
        if (what)
            snprintf(what, len, "%s", sqlite3_errmsg(st->db));
        return (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB ? 1 : -1;
    }
    int rc = sqlite3_step(s), ret;
    if (rc == SQLITE_ROW) {
        const char *r = (const char *)sqlite3_column_text(s, 0);
        /* quick_check reports a page it could not get as a row ("Page N:
         * unable to get the page. error code=C"): only damage when C is. */
        const char *ec = r ? strstr(r, "error code=") : NULL;
        const char *res = ec ? resource_of(atoi(ec + 11)) : NULL;
        if (res) {
            char detail[256];
            one_line(detail, sizeof detail, r);
            ret = resource_fault(st, res, detail, what, len);
        } else if (!r && resource_of(sqlite3_extended_errcode(st->db))) {
            ret = resource_fault(st, resource_of(sqlite3_extended_errcode(st->db)), sqlite3_errmsg(st->db), what, len);
        } else {
            ret = r && strcmp(r, "ok") == 0 ? 0 : 1;
            if (ret && what)
                one_line(what, len, r ? r : "damaged");
        }
    } else {
        int code = sqlite3_extended_errcode(st->db);
        if (resource_of(code))
            ret = resource_fault(st, resource_of(code), sqlite3_errmsg(st->db), what, len);
        else {
            ret = (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB ? 1 : -1;
            if (what)
                snprintf(what, len, "%s", sqlite3_errmsg(st->db));
        }
    }
    sqlite3_finalize(s);
    return ret;
}

int cs_store_check_pages(cs_store *st, char *what, size_t len)
{
    if (what && len)
        what[0] = '\0';
    st->fault[0] = '\0';
    return check_run(st, "PRAGMA quick_check(1)", what, len);
}

int cs_store_check_tables(cs_store *st, const char *const *skip, char *what, size_t len)
{
    if (what && len)
        what[0] = '\0';
    st->fault[0] = '\0';
    /* the schema's own page first: a name read from a damaged one is not
     * trusted */
    int rc = check_run(st, "PRAGMA quick_check(sqlite_schema)", what, len);
    if (rc != 0)
        return rc;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rootpage", -1, &s,
                           NULL) != SQLITE_OK)
        return check_run(st, "PRAGMA quick_check(1)", what, len);
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        int skipped = !name;
        for (size_t i = 0; !skipped && skip && skip[i]; i++)
            skipped = strcmp(name, skip[i]) == 0;
        if (skipped)
            continue;
        char *sql = sqlite3_mprintf("PRAGMA quick_check(\"%w\")", name);
        rc = sql ? check_run(st, sql, what, len)
                 : resource_fault(st, "out of memory", "the check of a table", what, len);
        sqlite3_free(sql);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        /* the schema could not be read to its end: the whole check decides */
        sqlite3_finalize(s);
        return check_run(st, "PRAGMA quick_check(1)", what, len);
    }
    sqlite3_finalize(s);
    return rc;
}

const char *cs_store_fault(const cs_store *st)
{
    return st->fault[0] ? st->fault : NULL;
}

/* ---- copying one table ---- */

/* The columns that both stores' versions of a table have, quoted and
 * comma-separated, into buf: their number, 0 when none, -1 when either
 * schema cannot be read. */
static int common_columns(sqlite3 *from, sqlite3 *to, const char *table, char *buf, size_t len)
{
    sqlite3_stmt *s, *has;
    if (sqlite3_prepare_v2(to, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(from, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", -1, &has, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(s);
        return -1;
    }
    sqlite3_bind_text(s, 1, table, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(has, 1, table, -1, SQLITE_TRANSIENT);
    int rc, n = 0;
    size_t used = 0;
    buf[0] = '\0';
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(s, 0);
        if (!c || strchr(c, '"'))
            continue;
        sqlite3_reset(has);
        sqlite3_bind_text(has, 2, c, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(has) != SQLITE_ROW) {
            rc = SQLITE_ERROR;
            break;
        }
        if (sqlite3_column_int(has, 0) == 0)
            continue;
        int w = snprintf(buf + used, len - used, "%s\"%s\"", n ? ", " : "", c);
        if (w < 0 || (size_t)w >= len - used) {
            rc = SQLITE_ERROR;
            break;
        }
        used += (size_t)w;
        n++;
    }
    sqlite3_finalize(s);
    sqlite3_finalize(has);
    return rc == SQLITE_DONE ? n : -1;
}

/* Does SELECT rowid FROM table WHERE rowid >= x find a row? 1 and *at
 * its rowid; 0 past the last row; -1 when the pages on the way cannot be
 * read. */
static int probe(sqlite3_stmt *p, int64_t x, int64_t *at)
{
    sqlite3_reset(p);
    sqlite3_bind_int64(p, 1, x);
    int rc = sqlite3_step(p);
    if (rc == SQLITE_ROW) {
        *at = sqlite3_column_int64(p, 0);
        return 1;
    }
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The first row after a damaged range that begins at `from`: 1 and *next
 * (its rowid), 0 when no readable row follows. Probes further and further
 * ahead until a probe reads (a row, or the end), then narrows the
 * boundary down. */
static int skip_damage(sqlite3_stmt *p, int64_t from, int64_t *next)
{
    int64_t bad = from < 0 ? -1 : from, good = 0, at = 0; /* rowids below 0: none to narrow to */
    int found = 0;
    /* rowids count from 1: from a negative start, probe from 0 on */
    int64_t base = from < 0 ? 0 : from;
    if (base != from) {
        if (probe(p, base, &at) >= 0) {
            good = base;
            found = 1;
        } else {
            bad = base;
        }
    }
    for (int64_t step = 1; !found; step *= 2) {
        if (base > INT64_MAX - step)
            break;
        if (probe(p, base + step, &at) >= 0) {
            good = base + step;
            found = 1;
            break;
        }
        bad = base + step;
        if (step > INT64_MAX / 2)
            break;
    }
    if (!found)
        return 0;
    /* probe(bad) fails, probe(good) does not: the smallest such good */
    while (good - bad > 1) {
        int64_t mid = bad + (good - bad) / 2, m;
        if (probe(p, mid, &m) < 0)
            bad = mid;
        else
            good = mid;
    }
    if (probe(p, good, &at) != 1)
        return 0;
    *next = at;
    return 1;
}

typedef struct table_result {
    int64_t kept, lost; /* lost: rowids skipped over damage, rows refused (-1: not countable) */
    int damaged;        /* damaged ranges and refused rows met */
} table_result;

/* Copy the rows of table that read (by rowid, skipping the ranges that do
 * not) from `from` into the same table of `to`. 0, or -1 when `to` cannot
 * be written (err says why). */
static int copy_table(cs_store *src, cs_store *dst, const char *table, table_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    char cols[4096];
    int ncols = common_columns(src->db, dst->db, table, cols, sizeof cols);
    if (ncols < 0) {
        res->damaged = 1;
        res->lost = -1;
        return 0;
    }
    if (ncols == 0)
        return 0;
    size_t sqllen = strlen(cols) * 2 + 512;
    char *sel = malloc(sqllen), *ins = malloc(sqllen), *prb = malloc(sqllen);
    if (!sel || !ins || !prb) {
        free(sel);
        free(ins);
        free(prb);
        return cs_store_sql_fail(err, errlen, "%s: out of memory", dst->path);
    }
    snprintf(sel, sqllen, "SELECT rowid, %s FROM main.\"%s\" WHERE rowid >= ?1 ORDER BY rowid", cols, table);
    snprintf(prb, sqllen, "SELECT rowid FROM main.\"%s\" WHERE rowid >= ?1 ORDER BY rowid LIMIT 1", table);
    int n = snprintf(ins, sqllen, "INSERT OR REPLACE INTO main.\"%s\"(%s) VALUES(?", table, cols);
    for (int i = 1; i < ncols && n > 0 && (size_t)n < sqllen - 4; i++)
        n += snprintf(ins + n, sqllen - (size_t)n, ",?");
    snprintf(ins + n, sqllen - (size_t)n, ")");
    sqlite3_stmt *s = NULL, *p = NULL, *w = NULL;
    int ret = 0;
    if (sqlite3_prepare_v2(dst->db, ins, -1, &w, NULL) != SQLITE_OK) {
        ret = cs_store_sql_fail(err, errlen, "%s: %s", dst->path, sqlite3_errmsg(dst->db));
        goto out;
    }
    if (sqlite3_prepare_v2(src->db, sel, -1, &s, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(src->db, prb, -1, &p, NULL) != SQLITE_OK) {
        res->damaged = 1;
        res->lost = -1;
        goto out;
    }
    /* A table cannot hold more rows than its file has bytes: a damaged
     * b-tree whose pages loop, or that returns rows out of order, is cut
     * there (how much is lost is then unknown). */
    struct stat sb;
    int64_t budget = stat(src->path, &sb) == 0 && sb.st_size > 0 ? (int64_t)sb.st_size + 64 : INT64_MAX;
    int64_t lo = INT64_MIN;
    for (;;) {
        sqlite3_reset(s);
        sqlite3_bind_int64(s, 1, lo);
        int rc, any = 0;
        int64_t last = lo;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            int64_t rid = sqlite3_column_int64(s, 0);
            if (--budget < 0 || rid < lo || (any && rid <= last)) {
                rc = SQLITE_CORRUPT;
                budget = -1;
                break;
            }
            for (int i = 0; i < ncols; i++)
                sqlite3_bind_value(w, i + 1, sqlite3_column_value(s, i + 1));
            int wr = sqlite3_step(w);
            sqlite3_reset(w);
            last = sqlite3_column_int64(s, 0);
            any = 1;
            if (wr == SQLITE_CONSTRAINT) {
                /* a row this schema does not take (damaged in place): lost */
                res->damaged++;
                if (res->lost >= 0)
                    res->lost++;
                continue;
            }
            if (wr != SQLITE_DONE) {
                ret = cs_store_sql_fail(err, errlen, "%s: %s", dst->path, sqlite3_errmsg(dst->db));
                goto out;
            }
            res->kept++;
        }
        if (rc == SQLITE_DONE)
            break;
        if (budget < 0) {
            res->damaged++;
            res->lost = -1;
            break;
        }
        /* A page that does not read: go on after it. */
        res->damaged++;
        int64_t from = any ? last + 1 : lo;
        if (!any && lo != INT64_MIN) {
            from = lo + 1; /* the row at lo itself does not read */
            if (res->lost >= 0)
                res->lost++;
        }
        if (any && last == INT64_MAX)
            break;
        int64_t next;
        if (skip_damage(p, from, &next) != 1) {
            res->lost = -1; /* nothing readable after it: how much is lost is unknown */
            break;
        }
        if (next < from || --budget < 0) { /* no progress: the damage loops */
            res->lost = -1;
            break;
        }
        /* rowids count from 1: the rows skipped, where they are dense */
        if (res->lost >= 0 && next > from)
            res->lost += next - (from < 1 ? 1 : from);
        lo = next;
    }
out:
    sqlite3_finalize(s);
    sqlite3_finalize(p);
    sqlite3_finalize(w);
    free(sel);
    free(ins);
    free(prb);
    return ret;
}

/* ---- the whole store ---- */

/* Append to a summary line. */
static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
    size_t l = strlen(buf);
    if (l + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + l, len - l, fmt, ap);
    va_end(ap);
}

/* Meta keys the copy keeps: not the format marks of the new store, nor
 * what describes tables it does not copy (the analysis, the TUI's index). */
static int meta_key_kept(const char *k)
{
    return k && strcmp(k, "format") != 0 && strcmp(k, "schema_version") != 0 && strncmp(k, "analysis_", 9) != 0 &&
           strncmp(k, "tui_", 4) != 0 && strncmp(k, "recovered_", 10) != 0;
}

/* The meta table (keyed by text, no rowid): its rows in key order until
 * the first that does not read. */
static int copy_meta(cs_store *src, cs_store *dst, int *damaged, char *err, size_t errlen)
{
    sqlite3_stmt *s, *w;
    if (sqlite3_prepare_v2(src->db, "SELECT key, value FROM meta ORDER BY key", -1, &s, NULL) != SQLITE_OK) {
        *damaged = 1;
        return 0;
    }
    if (sqlite3_prepare_v2(dst->db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1, &w, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(s);
        return cs_store_sql_fail(err, errlen, "%s: %s", dst->path, sqlite3_errmsg(dst->db));
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!meta_key_kept((const char *)sqlite3_column_text(s, 0)))
            continue;
        sqlite3_bind_value(w, 1, sqlite3_column_value(s, 0));
        sqlite3_bind_value(w, 2, sqlite3_column_value(s, 1));
        int wr = sqlite3_step(w);
        sqlite3_reset(w);
        if (wr != SQLITE_DONE) {
            ret = cs_store_sql_fail(err, errlen, "%s: %s", dst->path, sqlite3_errmsg(dst->db));
            break;
        }
    }
    if (ret == 0 && rc != SQLITE_DONE)
        *damaged = 1;
    sqlite3_finalize(s);
    sqlite3_finalize(w);
    return ret;
}

/* Spans kept (temp table kept_spans), per rank, against the counts the
 * processes table gives, into buf: the first ranks that lost spans (or
 * whose count is lost) are named, the others counted. */
static void say_spans(cs_store *dst, cs_store_recovery *r, char *buf, size_t len)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(dst->db,
                           "SELECT p.rank, p.spans, COALESCE(k.n, 0) FROM processes p"
                           " LEFT JOIN kept_spans k ON k.rank = p.rank"
                           " UNION ALL SELECT rank, NULL, n FROM kept_spans"
                           " WHERE rank NOT IN (SELECT rank FROM processes) ORDER BY 1",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    char ranks[1024] = "";
    int64_t kept = 0, want = 0;
    int nwhole = 0, nproc = 0, unknown = 0, nnamed = 0, nmore = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int64_t w = sqlite3_column_int64(s, 1), have = sqlite3_column_int64(s, 2);
        int known = sqlite3_column_type(s, 1) != SQLITE_NULL && w >= have;
        nproc++;
        kept += have;
        want += known ? w : have;
        if (known && w == have) {
            nwhole++;
            continue;
        }
        if (known)
            r->spans_lost += w - have;
        else
            unknown = 1;
        /* the first few by name; a large job's message stays one line */
        if (nnamed == 8) {
            nmore++;
            continue;
        }
        nnamed++;
        say(ranks, sizeof ranks, "%srank %d: %lld", ranks[0] ? ", " : "", sqlite3_column_int(s, 0), (long long)have);
        if (known)
            say(ranks, sizeof ranks, " of %lld", (long long)w);
        else
            say(ranks, sizeof ranks, " of ?");
    }
    if (nmore)
        say(ranks, sizeof ranks, " and %d more rank%s short", nmore, nmore == 1 ? "" : "s");
    sqlite3_finalize(s);
    if (!nproc) {
        say(buf, len, "; no spans and no process rows");
        return;
    }
    say(buf, len, "; spans kept: %lld of %lld%s", (long long)kept, (long long)want, unknown ? " or more" : "");
    if (ranks[0] && nwhole)
        say(buf, len, " (%s; %d other rank%s whole)", ranks, nwhole, nwhole == 1 ? "" : "s");
    else if (ranks[0])
        say(buf, len, " (%s)", ranks);
    else
        say(buf, len, " (all %d ranks whole)", nproc);
}

int cs_store_recover(cs_store *src, const char *path, cs_store **out, cs_store_recovery *r, char *err, size_t errlen)
{
    *out = NULL;
    memset(r, 0, sizeof *r);
    cs_store *dst;
    char tmp[PATH_MAX];
    if (!path) {
        const char *tmpdir;
        if (cs__store_file_scratch(tmp, sizeof tmp, "collscope", &tmpdir) != 0)
            return cs_store_sql_fail(err, errlen, "cannot make a private file in %s: %s", tmpdir, strerror(errno));
        path = tmp;
        if (cs__store_file_create(path, &dst, err, errlen) != 0) {
            unlink(tmp);
            return -1;
        }
    } else if (cs_store_create(path, &dst, err, errlen) != 0) {
        return -1;
    }
    char(*names)[64] = NULL;
    size_t nnames = 0, cap = 0;
    sqlite3_stmt *s;
    /* The tables of the new store (this build's schema), minus meta. */
    if (sqlite3_prepare_v2(dst->db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE"
                           " '\\' AND name != 'meta' ORDER BY name",
                           -1, &s, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(dst->db));
        goto fail;
    }
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *n = (const char *)sqlite3_column_text(s, 0);
        if (!n || strlen(n) >= sizeof names[0])
            continue;
        if (nnames == cap) {
            size_t nc = cap ? cap * 2 : 32;
            void *g = realloc(names, nc * sizeof names[0]);
            if (!g)
                break;
            names = g;
            cap = nc;
        }
        snprintf(names[nnames++], sizeof names[0], "%s", n);
    }
    sqlite3_finalize(s);
    if (cs_store_sql_exec(dst->db, path, "BEGIN", err, errlen) != 0)
        goto fail;
    for (size_t i = 0; i < nnames; i++) {
        if (cs_store_sql_table_exists(src->db, names[i]) != 1)
            continue;
        table_result t;
        if (copy_table(src, dst, names[i], &t, err, errlen) != 0)
            goto fail;
        r->rows_kept += t.kept;
        if (!t.damaged)
            continue;
        r->tables_damaged++;
        if (t.lost >= 0) {
            say(r->lost, sizeof r->lost, "%s%s: %lld row%s", r->lost[0] ? ", " : "", names[i], (long long)t.lost,
                t.lost == 1 ? "" : "s");
            r->rows_lost += t.lost;
        } else {
            if (t.kept == 0)
                say(r->lost, sizeof r->lost, "%s%s: every row", r->lost[0] ? ", " : "", names[i]);
            else
                say(r->lost, sizeof r->lost, "%s%s: the rows past the last that reads (%lld kept)",
                    r->lost[0] ? ", " : "", names[i], (long long)t.kept);
            r->rows_uncounted = 1;
        }
    }
    /* The spans kept per rank, counted once (one scan, no index yet). */
    if (cs_store_sql_exec(dst->db, path,
                          "CREATE TEMP TABLE kept_spans AS SELECT rank, count(*) AS n FROM main.span GROUP BY rank",
                          err, errlen) != 0)
        goto fail;
    char spans[1024] = "";
    say_spans(dst, r, spans, sizeof spans);
    /* Each process row counts the spans this store holds; what its log
     * held is kept in its note. */
    sqlite3_exec(dst->db,
                 "UPDATE processes SET note = trim(COALESCE(note, '') || ' ' || spans || ' spans in the damaged"
                 " trace'), spans = COALESCE((SELECT n FROM kept_spans k WHERE k.rank = processes.rank), 0)"
                 " WHERE spans IS NOT COALESCE((SELECT n FROM kept_spans k WHERE k.rank = processes.rank), 0)",
                 NULL, NULL, NULL);
    /* Ranks whose process row was lost still have their spans: a row for
     * each (its span count is what was kept; the rest is unknown). */
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(dst->db,
                           "INSERT INTO processes(rank, pid, spans, status, note)"
                           " SELECT rank, 0, n, 'crashed', 'rebuilt from its spans: the trace was damaged'"
                           " FROM kept_spans WHERE rank NOT IN (SELECT rank FROM processes)",
                           -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_DONE && sqlite3_changes(dst->db) > 0)
            r->procs_rebuilt = sqlite3_changes(dst->db);
        sqlite3_finalize(q);
    }
    sqlite3_exec(dst->db, "DROP TABLE temp.kept_spans", NULL, NULL, NULL);
    if (cs_store_sql_exec(dst->db, path, "COMMIT", err, errlen) != 0)
        goto fail;
    if (cs_store_finish(dst, NULL, err, errlen) != 0)
        goto fail;
    int meta_damaged = 0;
    if (copy_meta(src, dst, &meta_damaged, err, errlen) != 0)
        goto fail;
    if (meta_damaged) {
        r->tables_damaged++;
        say(r->lost, sizeof r->lost, "%smeta: the keys past the last that reads", r->lost[0] ? ", " : "");
        r->rows_uncounted = 1;
    }
    snprintf(r->summary, sizeof r->summary, "%lld rows kept%s", (long long)r->rows_kept, spans);
    if (r->procs_rebuilt)
        say(r->summary, sizeof r->summary, "; the process rows of %d rank%s rebuilt from their spans", r->procs_rebuilt,
            r->procs_rebuilt == 1 ? "" : "s");
    say(r->summary, sizeof r->summary, "; lost: %s",
        r->lost[0] ? r->lost
                   : "no row (the damage was in an index or"
                     " a table collscope recomputes)");
    cs_store_meta_set(dst, "recovered_from", src->path);
    cs_store_meta_set(dst, "recovered_note", r->summary);
    cs_store_close(dst);
    free(names);
    /* Reopened as any store is, for the analysis to write into. */
    if (cs_store_open(path, CS_STORE_WRITE, out, err, errlen) != 0) {
        cs__store_file_unlink(path);
        return -1;
    }
    if (path == tmp)
        snprintf((*out)->scratch, sizeof(*out)->scratch, "%s", tmp);
    return 0;
fail:
    free(names);
    sqlite3_exec(dst->db, "ROLLBACK", NULL, NULL, NULL);
    cs_store_close(dst);
    cs__store_file_unlink(path);
    return -1;
}

int cs_store_recovered(cs_store *st, char *from, size_t fromlen, char *note, size_t notelen)
{
    if (cs_store_meta_get(st, "recovered_from", from, fromlen) != 0)
        return 0;
    if (cs_store_meta_get(st, "recovered_note", note, notelen) != 0)
        snprintf(note, notelen, "recovered");
    return 1;
}
