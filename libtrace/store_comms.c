/* store_comms.c: the display names of a trace's communicators (see
 * store_comms.h). */
#include "config.h"
#include "common/vec.h"
#include "libtrace/store_comms.h"
#include "libtrace/store_int.h"
#include "libtrace/store_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One row per communicator: its largest size, the lowest rank's
 * parent, how, color and key, and the first name a member set. */
#define CS_COMMS_SQL_V3                                                                                  \
    "SELECT c.id, MAX(c.size), COALESCE(MIN(c.parent), 0), MIN(c.how), MIN(c.created_ns), MIN(c.color)," \
    " MIN(c.key), (SELECT n.name FROM comms n WHERE n.id = c.id AND n.name IS NOT NULL AND n.name != ''" \
    " ORDER BY n.rank LIMIT 1) FROM comms c GROUP BY c.id ORDER BY MIN(c.created_ns), c.id"
#define CS_COMMS_SQL_V2                                                                                     \
    "SELECT c.id, MAX(c.size), COALESCE(MIN(c.parent), 0), MIN(c.how), MIN(c.created_ns), NULL, NULL, NULL" \
    " FROM comms c GROUP BY c.id ORDER BY MIN(c.created_ns), c.id"

static int cs_comms_read(cs_store *st, cs_comms *t)
{
    sqlite3_stmt *s;
    const char *sql = cs_store_schema_version(st) >= 3 ? CS_COMMS_SQL_V3 : CS_COMMS_SQL_V2;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        if (id == 0 || (uint64_t)id == UINT64_MAX)
            continue; /* no communicator (damage) */
        if (CS_VEC_RESERVE(t->a, t->cap, t->n + 1) != 0 || cs_map_put(&t->idx, (uint64_t)id, (int64_t)t->n) != 0) {
            rc = -1;
            break;
        }
        cs_comm_info *c = &t->a[t->n++];
        memset(c, 0, sizeof *c);
        c->id = id;
        c->size = sqlite3_column_int(s, 1);
        c->parent = sqlite3_column_int64(s, 2);
        cs_store_sql_text(s, 3, c->how, sizeof c->how);
        c->created_ns = sqlite3_column_int64(s, 4);
        if ((c->has_color = sqlite3_column_type(s, 5) != SQLITE_NULL))
            c->color = sqlite3_column_int(s, 5);
        if ((c->has_key = sqlite3_column_type(s, 6) != SQLITE_NULL))
            c->key = sqlite3_column_int(s, 6);
        cs_store_sql_text(s, 7, c->name, sizeof c->name);
        /* a name is one line of text, whatever the file holds */
        for (char *p = c->name; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(s);
    return rc;
}

static const char *cs_comms_hex(int64_t id, char *buf, size_t len, const char *prefix)
{
    snprintf(buf, len, "%s:%06llx", prefix, (unsigned long long)id & 0xffffffull);
    return buf;
}

/* The origin and display name of a[i] before duplicates are told apart.
 * `depth` bounds the walk up the parents (a damaged store may hold a
 * cycle). */
static const char *cs_comms_derive(cs_comms *t, size_t i, int depth)
{
    cs_comm_info *c = &t->a[i];
    if (c->display[0])
        return c->display;
    char parent[CS_COMMS_DISPLAY_MAX];
    int64_t pi;
    if (c->parent && depth < 8 && cs_map_get(&t->idx, (uint64_t)c->parent, &pi) && (size_t)pi != i)
        snprintf(parent, sizeof parent, "%s", cs_comms_derive(t, (size_t)pi, depth + 1));
    else if (c->parent)
        cs_comms_hex(c->parent, parent, sizeof parent, "comm");
    else
        snprintf(parent, sizeof parent, "?");
    char *d = c->origin;
    int n = (int)sizeof c->origin;
    const char *how = c->how;
    int split = strcmp(how, "split") == 0 || strcmp(how, "nccl_split") == 0;
    if (strcmp(how, "world") == 0)
        snprintf(d, (size_t)n, "MPI_COMM_WORLD");
    else if (strcmp(how, "self") == 0)
        snprintf(d, (size_t)n, "MPI_COMM_SELF");
    else if (strcmp(how, "dup") == 0)
        snprintf(d, (size_t)n, "dup(%.*s)", n - 8, parent);
    else if (split && c->has_color)
        snprintf(d, (size_t)n, "split(%.*s, color %d)", n - 32, parent, c->color);
    else if (split)
        snprintf(d, (size_t)n, "split(%.*s)", n - 8, parent);
    else if (strcmp(how, "create") == 0 && c->has_color)
        snprintf(d, (size_t)n, "create(%.*s, leader %d)", n - 32, parent, c->color);
    else if (strcmp(how, "create") == 0)
        snprintf(d, (size_t)n, "create(%.*s)", n - 10, parent);
    else if (strcmp(how, "nccl") == 0 && c->nth > 0)
        snprintf(d, (size_t)n, "nccl comm %d", c->nth);
    else if (strcmp(how, "nccl") == 0)
        cs_comms_hex(c->id, d, (size_t)n, "nccl");
    else
        cs_comms_hex(c->id, d, (size_t)n, "other");
    /* the predefined ones keep their names; a set name wins elsewhere */
    int predefined = strcmp(how, "world") == 0 || strcmp(how, "self") == 0;
    /* an origin that is only a hash or a number (other:HEX, nccl comm N)
     * tells a reader nothing: names set on several such communicators get
     * " #2", " #3" */
    int opaque =
        strcmp(how, "nccl") == 0 || !(predefined || strcmp(how, "dup") == 0 || split || strcmp(how, "create") == 0);
    if (c->name[0] && !predefined && c->shared && !opaque) {
        char both[2 * CS_COMMS_DISPLAY_MAX + 4];
        snprintf(both, sizeof both, "%s [%s]", c->name, c->origin);
        snprintf(c->display, sizeof c->display, "%.*s", CS_COMMS_DISPLAY_MAX - 1, both);
    } else {
        snprintf(c->display, sizeof c->display, "%s", c->name[0] && !predefined ? c->name : c->origin);
    }
    return c->display;
}

static int cs_comms_by_display(const void *x, const void *y)
{
    const cs_comm_info *a = *(const cs_comm_info *const *)x, *b = *(const cs_comm_info *const *)y;
    int r = strcmp(a->display, b->display);
    if (r)
        return r;
    if (a->created_ns != b->created_ns)
        return a->created_ns < b->created_ns ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Communicators that still read the same get " #2", " #3", ... in
 * creation order. */
static int cs_comms_disambiguate(cs_comms *t)
{
    if (t->n < 2)
        return 0;
    cs_comm_info **o = malloc(t->n * sizeof *o);
    if (!o)
        return -1;
    for (size_t i = 0; i < t->n; i++)
        o[i] = &t->a[i];
    qsort(o, t->n, sizeof *o, cs_comms_by_display);
    /* marks first: a mark must not change the names still to compare */
    int *nth = calloc(t->n, sizeof *nth);
    if (!nth) {
        free(o);
        return -1;
    }
    for (size_t i = 1; i < t->n; i++)
        if (strcmp(o[i]->display, o[i - 1]->display) == 0)
            nth[i] = nth[i - 1] ? nth[i - 1] + 1 : 2;
    for (size_t i = 0; i < t->n; i++) {
        if (!nth[i])
            continue;
        char *d = o[i]->display;
        char mark[16];
        int m = snprintf(mark, sizeof mark, " #%d", nth[i]);
        size_t keep = strlen(d);
        if (keep + (size_t)m >= CS_COMMS_DISPLAY_MAX)
            keep = CS_COMMS_DISPLAY_MAX - 1 - (size_t)m;
        memcpy(d + keep, mark, (size_t)m + 1);
    }
    free(nth);
    free(o);
    return 0;
}

static int cs_comms_by_name(const void *x, const void *y)
{
    return strcmp((*(const cs_comm_info *const *)x)->name, (*(const cs_comm_info *const *)y)->name);
}

/* A name set on several communicators is shown with each one's origin
 * ("grad [split(MPI_COMM_WORLD, color 1)]"), also inside the names of the
 * communicators made from them. */
static int cs_comms_mark_shared(cs_comms *t)
{
    if (t->n < 2)
        return 0;
    cs_comm_info **o = malloc(t->n * sizeof *o);
    if (!o)
        return -1;
    for (size_t i = 0; i < t->n; i++)
        o[i] = &t->a[i];
    qsort(o, t->n, sizeof *o, cs_comms_by_name);
    for (size_t i = 1; i < t->n; i++)
        if (o[i]->name[0] && strcmp(o[i]->name, o[i - 1]->name) == 0)
            o[i]->shared = o[i - 1]->shared = 1;
    free(o);
    return 0;
}

static int cs_comms_by_creation(const void *x, const void *y)
{
    const cs_comm_info *a = *(const cs_comm_info *const *)x, *b = *(const cs_comm_info *const *)y;
    if (a->created_ns != b->created_ns)
        return a->created_ns < b->created_ns ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The NCCL communicators made from a unique id, numbered 1, 2, ... in
 * creation order (their ids are hashes: "nccl:86935c" told a reader
 * nothing and looked like an address). */
static int cs_comms_number_nccl(cs_comms *t)
{
    cs_comm_info **o = malloc((t->n + 1) * sizeof *o);
    if (!o)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->a[i].how, "nccl") == 0)
            o[k++] = &t->a[i];
    qsort(o, k, sizeof *o, cs_comms_by_creation);
    for (size_t i = 0; i < k; i++)
        o[i]->nth = (int)i + 1;
    free(o);
    return 0;
}

int cs_store_comms_load(cs_store *st, cs_comms *t)
{
    memset(t, 0, sizeof *t);
    if (cs_comms_read(st, t) != 0 || cs_comms_mark_shared(t) != 0 || cs_comms_number_nccl(t) != 0)
        goto fail;
    for (size_t i = 0; i < t->n; i++)
        cs_comms_derive(t, i, 0);
    if (cs_comms_disambiguate(t) != 0)
        goto fail;
    return 0;
fail:
    cs_store_comms_free(t);
    return -1;
}

void cs_store_comms_free(cs_comms *t)
{
    free(t->a);
    cs_map_free(&t->idx);
    memset(t, 0, sizeof *t);
}

const cs_comm_info *cs_store_comms_find(const cs_comms *t, int64_t id)
{
    int64_t i;
    if (!t || id == 0 || (uint64_t)id == UINT64_MAX || !cs_map_get(&t->idx, (uint64_t)id, &i))
        return NULL;
    return &t->a[i];
}

const char *cs_store_comms_name(const cs_comms *t, int64_t id, char *buf, size_t len)
{
    const cs_comm_info *c = cs_store_comms_find(t, id);
    if (c)
        snprintf(buf, len, "%s", c->display);
    else if (id == 0)
        snprintf(buf, len, "none");
    else
        cs_comms_hex(id, buf, len, "comm");
    return buf;
}

const char *cs_store_comms_label(const cs_comms *t, int64_t id, char *buf, size_t len)
{
    const cs_comm_info *c = cs_store_comms_find(t, id);
    if (c && c->size > 0)
        snprintf(buf, len, "%s (%d rank%s)", c->display, c->size, c->size == 1 ? "" : "s");
    else
        cs_store_comms_name(t, id, buf, len);
    return buf;
}
