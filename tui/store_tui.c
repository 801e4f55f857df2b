/* store_tui.c: the terminal browser's queries (see store_tui.h): the
 * level-of-detail summary, per-lane time windows, instances, frames. */
#include "config.h"
#include "tui/store_tui.h"
#include "common/vec.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

typedef struct cs_tui_clock {
    int rank;
    int64_t offset_ns, ref_ns;
    double drift_ppm;
} cs_tui_clock;

struct cs_tui {
    sqlite3 *db;
    char path[PATH_MAX];
    cs_tui_clock *aClock;
    int nClock;
    cs_tui_index_info idx;
    sqlite3_stmt *pLod, *pWindow, *pSpan, *pInst, *pFrames, *pSWindow, *pKernels, *pEnds;
    int has_act;  /* gpu_activity is there */
    int has_inst; /* the analysis's instances are there (1), else the summary's (2) */
};

int cs_tui_kind_of(const char *k)
{
    if (!k)
        return CS_TK_OTHER;
    if (!strcmp(k, "coll") || !strcmp(k, "rooted"))
        return CS_TK_COLL;
    if (!strcmp(k, "send") || !strcmp(k, "recv") || !strcmp(k, "sendrecv") || !strcmp(k, "probe") ||
        !strcmp(k, "complete"))
        return CS_TK_P2P;
    if (!strncmp(k, "kernel", 6) || !strncmp(k, "gpu", 3) || !strncmp(k, "memcpy", 6) || !strcmp(k, "cuda") ||
        !strcmp(k, "launch"))
        return CS_TK_GPU;
    if (!strcmp(k, "compute")) /* compute spans of imported traces: kernels and CPU ops */
        return CS_TK_GPU;
    return CS_TK_OTHER;
}

int cs_tui_kind_all_to_all(const char *k)
{
    return k && !strcmp(k, "coll");
}

/* ---- time conversion ---- */

static const cs_tui_clock *cs_tui_clock_of(const cs_tui_clock *a, int n, int rank)
{
    for (int i = 0; i < n; i++)
        if (a[i].rank == rank)
            return &a[i];
    return NULL;
}

/* A raw time of the rank's clock whose aligned time is at or before t
 * (lo) or after it (hi), allowing for drift. */
static int64_t cs_tui_raw_of(const cs_tui_clock *c, int64_t t, int hi)
{
    if (!c)
        return t;
    double d = c->drift_ppm * 1e-6;
    double raw = ((double)t - (double)c->offset_ns + d * (double)c->ref_ns) / (1.0 + d);
    return (int64_t)raw + (hi ? 1000 : -1000);
}

static const cs_store_sql_col cs_tui_clock_cols[] = { CS_SQL_INT(cs_tui_clock, rank),
                                                      CS_SQL_I64(cs_tui_clock, offset_ns),
                                                      CS_SQL_DBL(cs_tui_clock, drift_ppm),
                                                      CS_SQL_I64(cs_tui_clock, ref_ns) };

static void cs_tui_clock_row(sqlite3_stmt *s, void *elem)
{
    cs_store_sql_read_row(s, cs_tui_clock_cols, CS_SQL_NCOLS(cs_tui_clock_cols), elem);
}

static int cs_tui_load_clocks(sqlite3 *db, cs_tui_clock **out, int *n)
{
    return cs_store_read_array(db, "SELECT rank, offset_ns, drift_ppm, ref_ns FROM clocks ORDER BY rank", sizeof **out,
                               cs_tui_clock_row, out, n) == 0
               ? 0
               : -1;
}

/* ---- opening ---- */

static int cs_tui_meta_i64(sqlite3 *db, const char *key, int64_t *v)
{
    sqlite3_stmt *s;
    int rc = -1;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
        *v = sqlite3_column_int64(s, 0);
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}

static int cs_tui_table_exists(sqlite3 *db, const char *name)
{
    return cs_store_sql_table_exists(db, name) == 1;
}

int cs_tui_has_table(cs_tui *t, const char *name)
{
    return cs_tui_table_exists(t->db, name);
}

static void cs_tui_read_index(sqlite3 *db, cs_tui_index_info *x)
{
    int64_t v = 0;
    memset(x, 0, sizeof *x);
    if (!cs_tui_table_exists(db, "tui_lod") || !cs_tui_table_exists(db, "tui_lanes"))
        return;
    if (cs_tui_meta_i64(db, "tui_lod_version", &v) != 0 || v != CS_TUI_LOD_VERSION)
        return;
    int64_t spans = 0, shift = 0, levels = 0, base = 0, end = 0, waits = 0, ms = 0;
    if (cs_tui_meta_i64(db, "tui_lod_spans", &spans) || cs_tui_meta_i64(db, "tui_lod_shift", &shift) ||
        cs_tui_meta_i64(db, "tui_lod_levels", &levels) || cs_tui_meta_i64(db, "tui_lod_base_ns", &base) ||
        cs_tui_meta_i64(db, "tui_lod_end_ns", &end))
        return;
    cs_tui_meta_i64(db, "tui_lod_waits", &waits);
    cs_tui_meta_i64(db, "tui_lod_build_ms", &ms);
    x->present = 1;
    x->spans = spans;
    x->shift = (int)shift;
    x->levels = (int)levels;
    x->base_ns = base;
    x->end_ns = end;
    x->waits = (int)waits;
    x->build_s = (double)ms / 1000.0;
}

int cs_tui_open(const char *path, cs_tui **out, char *err, size_t errlen)
{
    *out = NULL;
    cs_tui *t = calloc(1, sizeof *t);
    if (!t)
        return cs_store_sql_fail(err, errlen, "%s: out of memory", path);
    snprintf(t->path, sizeof t->path, "%s", path);
    if (sqlite3_open_v2(path, &t->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", path, t->db ? sqlite3_errmsg(t->db) : "out of memory");
        cs_tui_close(t);
        return -1;
    }
    sqlite3_busy_timeout(t->db, 5000);
    sqlite3_exec(t->db, "PRAGMA cache_size=-32768;", NULL, NULL, NULL);
    int ok = cs_tui_load_clocks(t->db, &t->aClock, &t->nClock) == 0;
    if (!ok && cs_store_sql_needs_immutable(t->db, path) && cs_store_sql_open_immutable(&t->db, path) == 0) {
        sqlite3_exec(t->db, "PRAGMA cache_size=-32768;", NULL, NULL, NULL);
        ok = cs_tui_load_clocks(t->db, &t->aClock, &t->nClock) == 0;
    }
    if (!ok) {
        cs_store_sql_fail(err, errlen, "%s: corrupt trace (%s)", path, sqlite3_errmsg(t->db));
        cs_tui_close(t);
        return -1;
    }
    cs_tui_index_reload(t); /* the summary, and where instances are read */
    t->has_act = cs_tui_table_exists(t->db, "gpu_activity");
    *out = t;
    return 0;
}

int cs_tui_index_reload(cs_tui *t)
{
    cs_tui_read_index(t->db, &t->idx);
    t->has_inst = cs_tui_table_exists(t->db, "instances") ? 1 : cs_tui_table_exists(t->db, "tui_inst") ? 2 : 0;
    sqlite3_finalize(t->pEnds);
    t->pEnds = NULL;
    sqlite3_finalize(t->pLod);
    t->pLod = NULL;
    return t->idx.present ? 0 : -1;
}

void cs_tui_close(cs_tui *t)
{
    if (!t)
        return;
    sqlite3_finalize(t->pLod);
    sqlite3_finalize(t->pWindow);
    sqlite3_finalize(t->pSpan);
    sqlite3_finalize(t->pInst);
    sqlite3_finalize(t->pFrames);
    sqlite3_finalize(t->pSWindow);
    sqlite3_finalize(t->pKernels);
    sqlite3_finalize(t->pEnds);
    if (t->db)
        sqlite3_close_v2(t->db);
    free(t->aClock);
    free(t);
}

int cs_tui_index_info_get(cs_tui *t, int64_t spans_now, cs_tui_index_info *out)
{
    *out = t->idx;
    if (out->present) {
        int waits_now = cs_tui_table_exists(t->db, "waits");
        out->stale = out->spans != spans_now || (waits_now && !out->waits);
    }
    return 0;
}

/* ---- spans ---- */

static int cs_tui_prep(cs_tui *t, sqlite3_stmt **ps, const char *sql)
{
    if (*ps) {
        sqlite3_reset(*ps);
        sqlite3_clear_bindings(*ps);
        return 0;
    }
    return sqlite3_prepare_v2(t->db, sql, -1, ps, NULL) == SQLITE_OK ? 0 : -1;
}

int cs_tui_window(cs_tui *t, int rank, int tid, int64_t max_dur_ns, int64_t t0, int64_t t1,
                  int (*cb)(const cs_span *, void *), void *arg)
{
    if (cs_tui_prep(t, &t->pWindow,
                    "SELECT " CS_SPAN_COLS " WHERE s.rank = ?1 AND s.begin_ns >= ?2 AND s.begin_ns < ?3"
                    " ORDER BY s.rank, s.begin_ns") != 0)
        return -1;
    const cs_tui_clock *c = cs_tui_clock_of(t->aClock, t->nClock, rank);
    int64_t lo = cs_tui_raw_of(c, t0, 0) - (max_dur_ns > 0 ? max_dur_ns : 0);
    int64_t hi = cs_tui_raw_of(c, t1, 1);
    sqlite3_bind_int(t->pWindow, 1, rank);
    sqlite3_bind_int64(t->pWindow, 2, lo);
    sqlite3_bind_int64(t->pWindow, 3, hi);
    int rc;
    cs_span sp;
    while ((rc = sqlite3_step(t->pWindow)) == SQLITE_ROW) {
        cs_store_read_span_row(t->pWindow, &sp);
        if (sp.tid != tid || sp.end_ns < t0 || sp.begin_ns >= t1)
            continue;
        if (cb(&sp, arg) != 0)
            break;
    }
    int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_reset(t->pWindow);
    return bad ? -1 : 0;
}

int cs_tui_span(cs_tui *t, int64_t id, cs_span *out)
{
    if (cs_tui_prep(t, &t->pSpan, "SELECT " CS_SPAN_COLS " WHERE s.id = ?1") != 0)
        return -1;
    sqlite3_bind_int64(t->pSpan, 1, id);
    int rc = -1;
    if (sqlite3_step(t->pSpan) == SQLITE_ROW) {
        cs_store_read_span_row(t->pSpan, out);
        rc = 0;
    }
    sqlite3_reset(t->pSpan);
    return rc;
}

int cs_tui_instance_ends(cs_tui *t, int64_t comm, int64_t seq, int64_t *first, int64_t *last, int *members,
                         int *last_rank)
{
    if (!t->has_inst || cs_tui_prep(t, &t->pEnds,
                                    t->has_inst == 1 ? "SELECT first_entry_ns, last_entry_ns, nranks, last_rank"
                                                       " FROM instances WHERE comm = ?1 AND seq = ?2"
                                                     : "SELECT first_ns, last_ns, members, last_rank FROM tui_inst"
                                                       " WHERE comm = ?1 AND seq = ?2") != 0)
        return -1;
    sqlite3_bind_int64(t->pEnds, 1, comm);
    sqlite3_bind_int64(t->pEnds, 2, seq);
    int rc = -1;
    if (sqlite3_step(t->pEnds) == SQLITE_ROW && sqlite3_column_type(t->pEnds, 1) == SQLITE_INTEGER) {
        *first = sqlite3_column_int64(t->pEnds, 0);
        *last = sqlite3_column_int64(t->pEnds, 1);
        *members = sqlite3_column_int(t->pEnds, 2);
        *last_rank = sqlite3_column_int(t->pEnds, 3);
        rc = 0;
    }
    sqlite3_reset(t->pEnds);
    return rc;
}

int cs_tui_instance(cs_tui *t, int64_t comm, int64_t seq, int (*cb)(const cs_span *, void *), void *arg)
{
    if (cs_tui_prep(t, &t->pInst, "SELECT " CS_SPAN_COLS " WHERE s.comm = ?1 AND s.seq = ?2 ORDER BY s.rank") != 0)
        return -1;
    sqlite3_bind_int64(t->pInst, 1, comm);
    sqlite3_bind_int64(t->pInst, 2, seq);
    int rc;
    cs_span sp;
    while ((rc = sqlite3_step(t->pInst)) == SQLITE_ROW) {
        cs_store_read_span_row(t->pInst, &sp);
        if (cb(&sp, arg) != 0)
            break;
    }
    int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_reset(t->pInst);
    return bad ? -1 : 0;
}

int cs_tui_frames(cs_tui *t, int rank, int64_t callsite, int (*cb)(const cs_tui_frame *, void *), void *arg)
{
    if (cs_tui_prep(t, &t->pFrames,
                    "SELECT level, pc, module, func, file, line FROM frames"
                    " WHERE rank = ?1 AND callsite = ?2 ORDER BY level") != 0)
        return -1;
    sqlite3_bind_int(t->pFrames, 1, rank);
    sqlite3_bind_int64(t->pFrames, 2, callsite);
    int rc;
    while ((rc = sqlite3_step(t->pFrames)) == SQLITE_ROW) {
        sqlite3_stmt *s = t->pFrames;
        cs_tui_frame f = { sqlite3_column_int(s, 0),
                           (uint64_t)sqlite3_column_int64(s, 1),
                           (const char *)sqlite3_column_text(s, 2),
                           (const char *)sqlite3_column_text(s, 3),
                           (const char *)sqlite3_column_text(s, 4),
                           sqlite3_column_int(s, 5) };
        if (cb(&f, arg) != 0)
            break;
    }
    int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_reset(t->pFrames);
    return bad ? -1 : 0;
}

/* A stream lane: its spans at their GPU times (else CPU times), found
 * through the (rank, begin_ns) index from their CPU begin; max_dur_ns
 * covers the CPU begin to the latest end drawn. Then its kernels. */
int cs_tui_stream_window(cs_tui *t, int rank, int64_t stream, int64_t max_dur_ns, int64_t t0, int64_t t1,
                         int (*cb)(const cs_span *, void *), void *arg)
{
    if (cs_tui_prep(t, &t->pSWindow,
                    "SELECT " CS_SPAN_COLS
                    " WHERE s.rank = ?1 AND s.begin_ns >= ?2 AND s.begin_ns < ?3 AND s.stream = ?4"
                    " ORDER BY s.rank, s.begin_ns") != 0)
        return -1;
    const cs_tui_clock *c = cs_tui_clock_of(t->aClock, t->nClock, rank);
    int64_t lo = cs_tui_raw_of(c, t0, 0) - (max_dur_ns > 0 ? max_dur_ns : 0);
    /* a GPU begin may precede the CPU begin by the clocks' jitter */
    int64_t hi = cs_tui_raw_of(c, t1, 1) + 100000;
    sqlite3_bind_int(t->pSWindow, 1, rank);
    sqlite3_bind_int64(t->pSWindow, 2, lo);
    sqlite3_bind_int64(t->pSWindow, 3, hi);
    sqlite3_bind_int64(t->pSWindow, 4, stream);
    int rc, stop = 0;
    cs_span sp;
    while ((rc = sqlite3_step(t->pSWindow)) == SQLITE_ROW) {
        cs_store_read_span_row(t->pSWindow, &sp);
        if (sp.gpu_begin_ns && sp.gpu_end_ns >= sp.gpu_begin_ns) {
            sp.begin_ns = sp.gpu_begin_ns;
            sp.end_ns = sp.gpu_end_ns;
        }
        if (sp.end_ns < t0 || sp.begin_ns >= t1)
            continue;
        if (cb(&sp, arg) != 0) {
            stop = 1;
            break;
        }
    }
    int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_reset(t->pSWindow);
    if (bad)
        return -1;
    if (stop || !t->has_act)
        return 0;
    if (cs_tui_prep(t, &t->pKernels,
                    "SELECT " CS_ALIGNED("g.begin_ns") ", " CS_ALIGNED(
                        "g.end_ns") " FROM gpu_activity g LEFT JOIN clocks k ON k.rank = g.rank"
                                    " WHERE g.rank = ?1 AND g.stream = ?2 AND g.kind = 'kernel'"
                                    " AND g.begin_ns >= ?3 AND g.begin_ns < ?4 ORDER BY g.begin_ns") != 0)
        return -1;
    sqlite3_bind_int(t->pKernels, 1, rank);
    sqlite3_bind_int64(t->pKernels, 2, stream);
    sqlite3_bind_int64(t->pKernels, 3, lo);
    sqlite3_bind_int64(t->pKernels, 4, hi);
    memset(&sp, 0, sizeof sp);
    sp.rank = rank;
    sp.tid = -1;
    sp.op = -1;
    sp.seq = -1;
    sp.peer = sp.peer2 = sp.tag = -1;
    sp.stream = stream;
    while ((rc = sqlite3_step(t->pKernels)) == SQLITE_ROW) {
        sp.begin_ns = sqlite3_column_int64(t->pKernels, 0);
        sp.end_ns = sqlite3_column_int64(t->pKernels, 1);
        if (sp.end_ns < t0 || sp.begin_ns >= t1)
            continue;
        if (cb(&sp, arg) != 0)
            break;
    }
    bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_reset(t->pKernels);
    return bad ? -1 : 0;
}

/* ---- lanes ---- */

static void cs_tui_lane_row(sqlite3_stmt *s, void *elem)
{
    cs_tui_lane *l = elem;
    l->rank = sqlite3_column_int(s, 0);
    l->tid = sqlite3_column_int(s, 1);
    l->spans = sqlite3_column_int64(s, 2);
    l->max_dur_ns = sqlite3_column_int64(s, 3);
    l->first_ns = sqlite3_column_int64(s, 4);
    l->last_ns = sqlite3_column_int64(s, 5);
    l->stream = sqlite3_column_count(s) > 7 ? sqlite3_column_int64(s, 6) : 0;
    l->sidx = sqlite3_column_count(s) > 7 ? sqlite3_column_int(s, 7) : 0;
    if (l->sidx > 0)
        l->tid = -1;
}

/* 0; -2 when sql cannot be prepared; -1 when the rows cannot be read. */
static int cs_tui_lanes_sql(sqlite3 *db, const char *sql, cs_tui_lane **out, int *n)
{
    return cs_store_read_array(db, sql, sizeof **out, cs_tui_lane_row, out, n);
}

/* The stream lanes of the trace by scanning span and gpu_activity: by
 * rank, then first use (its earliest CPU begin or kernel). */
#define CS_TUI_STREAM_LANES_SPANS                                                                                       \
    "SELECT s.rank AS rank, s.stream AS stream, count(*) AS n,"                                                         \
    " MAX(MAX(s.end_ns, COALESCE(s.gpu_end_ns, s.end_ns)) - s.begin_ns) AS d,"                                          \
    " MIN(" CS_ALIGNED(                                                                                                 \
        "COALESCE(s.gpu_begin_ns, s.begin_ns)") ") AS f,"                                                               \
                                                " MAX(" CS_ALIGNED(                                                     \
                                                    "COALESCE(s.gpu_end_ns, s.end_ns)") ") AS l, MIN(s.begin_ns) AS fu" \
                                                                                        " FROM span s LEFT JOIN clocks k ON k.rank = s.rank WHERE s.stream IS NOT NULL GROUP BY s.rank, s.stream"
#define CS_TUI_STREAM_LANES_KERNELS                                                                                  \
    " UNION ALL SELECT g.rank, g.stream, count(*), MAX(g.end_ns - g.begin_ns), MIN(" CS_ALIGNED(                     \
        "g.begin_ns") "),"                                                                                           \
                      " MAX(" CS_ALIGNED(                                                                            \
                          "g.end_ns") "), MIN(g.begin_ns) FROM gpu_activity g LEFT JOIN clocks k ON k.rank = g.rank" \
                                      " WHERE g.kind = 'kernel' AND g.stream IS NOT NULL GROUP BY g.rank, g.stream"
#define CS_TUI_STREAM_LANES(kernels)                                                                          \
    "SELECT rank, -1, SUM(n), MAX(d), MIN(f), MAX(l), stream, 1 FROM (" CS_TUI_STREAM_LANES_SPANS kernels ")" \
    " GROUP BY rank, stream ORDER BY rank, MIN(fu), stream"

int cs_tui_lanes(cs_tui *t, cs_tui_lane **out, int *n)
{
    if (t->idx.present)
        return cs_tui_lanes_sql(t->db,
                                "SELECT rank, tid, spans, max_dur_ns, first_ns, last_ns, stream, sidx"
                                " FROM tui_lanes ORDER BY lane",
                                out, n);
    if (cs_tui_lanes_sql(
            t->db,
            "SELECT s.rank, s.tid, count(*), MAX(s.end_ns - s.begin_ns), MIN(" CS_ALIGNED(
                "s.begin_ns") "), MAX(" CS_ALIGNED("s.end_ns") ")"
                                                               " FROM span s LEFT JOIN clocks k ON k.rank = s.rank"
                                                               " GROUP BY s.rank, s.tid ORDER BY s.rank, s.tid",
            out, n) != 0)
        return -1;
    cs_tui_lane *aS = NULL;
    int nS = 0;
    int got = cs_tui_lanes_sql(
        t->db, t->has_act ? CS_TUI_STREAM_LANES(CS_TUI_STREAM_LANES_KERNELS) : CS_TUI_STREAM_LANES(""), &aS, &nS);
    if (got == -1) {
        free(*out);
        *out = NULL;
        *n = 0;
        return -1;
    }
    if (got != 0 || !nS) {
        free(aS);
        return 0; /* no stream lanes */
    }
    /* each rank's stream lanes after its threads, numbered from 1 */
    cs_tui_lane *na = *out, *m = malloc((size_t)(*n + nS) * sizeof *m);
    if (!m) {
        free(aS);
        return 0;
    }
    int i = 0, j = 0, k = 0;
    while (i < *n || j < nS) {
        int rank = i < *n && (j >= nS || na[i].rank <= aS[j].rank) ? na[i].rank : aS[j].rank;
        while (i < *n && na[i].rank == rank)
            m[k++] = na[i++];
        for (int sidx = 1; j < nS && aS[j].rank == rank; sidx++) {
            m[k] = aS[j++];
            m[k].sidx = sidx;
            m[k].tid = -1;
            k++;
        }
    }
    free(na);
    free(aS);
    *out = m;
    *n = k;
    return 0;
}

/* ---- level of detail ---- */

int cs_tui_lod(cs_tui *t, int lane, int level, int64_t b0, int64_t b1, cs_tui_bucket *out, int max)
{
    if (!t->idx.present)
        return -1;
    if (cs_tui_prep(t, &t->pLod,
                    "SELECT bucket, n, coll, wait, p2p, gpu, other FROM tui_lod"
                    " WHERE lane = ?1 AND level = ?2 AND bucket >= ?3 AND bucket < ?4"
                    " ORDER BY bucket") != 0)
        return -1;
    sqlite3_bind_int(t->pLod, 1, lane);
    sqlite3_bind_int(t->pLod, 2, level);
    sqlite3_bind_int64(t->pLod, 3, b0);
    sqlite3_bind_int64(t->pLod, 4, b1);
    int n = 0, rc = SQLITE_DONE;
    while (n < max && (rc = sqlite3_step(t->pLod)) == SQLITE_ROW) {
        sqlite3_stmt *s = t->pLod;
        cs_tui_bucket *b = &out[n++];
        b->b = sqlite3_column_int64(s, 0);
        b->n = sqlite3_column_int64(s, 1);
        b->ns[CS_TK_GAP] = 0;
        b->ns[CS_TK_COLL] = sqlite3_column_int64(s, 2);
        b->ns[CS_TK_WAIT] = sqlite3_column_int64(s, 3);
        b->ns[CS_TK_P2P] = sqlite3_column_int64(s, 4);
        b->ns[CS_TK_GPU] = sqlite3_column_int64(s, 5);
        b->ns[CS_TK_OTHER] = sqlite3_column_int64(s, 6);
    }
    sqlite3_reset(t->pLod);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? n : -1;
}

int cs_tui_lane_busy(cs_tui *t, int (*cb)(int, int64_t, void *), void *arg)
{
    if (!t->idx.present)
        return -1;
    sqlite3_stmt *s;
    /* through the key (lane, level, bucket): one look-up per lane */
    if (sqlite3_prepare_v2(t->db,
                           "SELECT l.lane, (SELECT SUM(d.coll + d.wait + d.p2p + d.gpu + d.other) FROM tui_lod d"
                           " WHERE d.lane = l.lane AND d.level = ?1) FROM tui_lanes l ORDER BY l.lane",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(s, 1, t->idx.levels - 1);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        if (cb(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), arg) != 0)
            break;
    int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_finalize(s);
    return bad ? -1 : 0;
}

/* The last arrival of every N-to-N collective instance, for the waiting
 * parts: an open-addressing map (comm, seq) -> latest aligned begin. */
typedef struct cs_tui_inst {
    int64_t comm, seq, last, first;
    int n, last_rank;
} cs_tui_inst;
typedef struct cs_tui_imap {
    cs_tui_inst *a;
    size_t cap, n;
} cs_tui_imap;

static size_t cs_tui_ihash(int64_t comm, int64_t seq, size_t cap)
{
    uint64_t h =
        (uint64_t)comm * 0x9e3779b97f4a7c15ull ^ ((uint64_t)seq + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    return (size_t)h & (cap - 1);
}

static cs_tui_inst *cs_tui_iget(cs_tui_imap *m, int64_t comm, int64_t seq, int add)
{
    if (add && (m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 1024;
        cs_tui_inst *na = calloc(nc, sizeof *na);
        if (!na)
            return NULL;
        for (size_t i = 0; i < m->cap; i++)
            if (m->a[i].seq > 0 || m->a[i].comm) {
                size_t j = cs_tui_ihash(m->a[i].comm, m->a[i].seq, nc);
                while (na[j].seq > 0 || na[j].comm)
                    j = (j + 1) & (nc - 1);
                na[j] = m->a[i];
            }
        free(m->a);
        m->a = na;
        m->cap = nc;
    }
    if (!m->cap)
        return NULL;
    size_t j = cs_tui_ihash(comm, seq, m->cap);
    while (m->a[j].seq > 0 || m->a[j].comm) {
        if (m->a[j].comm == comm && m->a[j].seq == seq)
            return &m->a[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!add)
        return NULL;
    m->a[j] = (cs_tui_inst){ comm, seq, INT64_MIN, INT64_MAX, 0, -1 };
    m->n++;
    return &m->a[j];
}

typedef struct cs_tui_acc {
    int64_t n;
    int64_t ns[CS_TK_N];
} cs_tui_acc;

static void cs_tui_add(cs_tui_acc *a, int64_t nb, int shift, int64_t base, int64_t b, int64_t e, int kind)
{
    if (e <= b)
        return;
    int64_t i0 = (b - base) >> shift, i1 = (e - 1 - base) >> shift;
    if (i0 < 0)
        i0 = 0;
    if (i1 >= nb)
        i1 = nb - 1;
    for (int64_t i = i0; i <= i1; i++) {
        int64_t lo = base + (i << shift), hi = lo + ((int64_t)1 << shift);
        int64_t x0 = b > lo ? b : lo, x1 = e < hi ? e : hi;
        if (x1 > x0)
            a[i].ns[kind] += x1 - x0;
    }
}

static int64_t cs_tui_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct cs_tui_build {
    sqlite3 *db;
    const char *path;
    char *err;
    size_t errlen;
    int nOp;
    signed char *aKind;  /* op id -> CS_TK_* */
    unsigned char *aAll; /* op id -> N-to-N collective */
    cs_tui_imap inst;
    int waits_table, act_table;
    int64_t base, end, nb;
    int shift, levels;
    sqlite3_stmt *pIns, *pLane;
    int lane;
} cs_tui_build;

static int cs_tui_build_ops(cs_tui_build *B)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(B->db, "SELECT id, kind FROM ops", -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int id = sqlite3_column_int(s, 0);
        if (id < 0 || id > 65535)
            continue;
        if (id >= B->nOp) {
            size_t capKind = (size_t)B->nOp, capAll = (size_t)B->nOp;
            if (CS_VEC_RESERVE(B->aKind, capKind, (size_t)id + 1) != 0 ||
                CS_VEC_RESERVE(B->aAll, capAll, (size_t)id + 1) != 0) {
                sqlite3_finalize(s);
                return -1;
            }
            int nn = (int)(capKind < capAll ? capKind : capAll);
            memset(B->aKind + B->nOp, CS_TK_OTHER, (size_t)(nn - B->nOp));
            memset(B->aAll + B->nOp, 0, (size_t)(nn - B->nOp));
            B->nOp = nn;
        }
        const char *k = (const char *)sqlite3_column_text(s, 1);
        B->aKind[id] = (signed char)cs_tui_kind_of(k);
        B->aAll[id] = (unsigned char)cs_tui_kind_all_to_all(k);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Write the buckets of one lane at every level. */
static int cs_tui_build_flush(cs_tui_build *B, cs_tui_acc *a, int rank, int tid, int64_t stream, int sidx,
                              int64_t spans, int64_t maxdur, int64_t first, int64_t last)
{
    int lane = B->lane++;
    int64_t nb = B->nb;
    for (int level = 0; level < B->levels; level++) {
        for (int64_t i = 0; i < nb; i++) {
            cs_tui_acc *x = &a[i];
            if (!x->n && !x->ns[CS_TK_COLL] && !x->ns[CS_TK_WAIT] && !x->ns[CS_TK_P2P] && !x->ns[CS_TK_GPU] &&
                !x->ns[CS_TK_OTHER])
                continue;
            sqlite3_stmt *s = B->pIns;
            sqlite3_bind_int(s, 1, lane);
            sqlite3_bind_int(s, 2, level);
            sqlite3_bind_int64(s, 3, i);
            sqlite3_bind_int64(s, 4, x->n);
            sqlite3_bind_int64(s, 5, x->ns[CS_TK_COLL]);
            sqlite3_bind_int64(s, 6, x->ns[CS_TK_WAIT]);
            sqlite3_bind_int64(s, 7, x->ns[CS_TK_P2P]);
            sqlite3_bind_int64(s, 8, x->ns[CS_TK_GPU]);
            sqlite3_bind_int64(s, 9, x->ns[CS_TK_OTHER]);
            if (sqlite3_step(s) != SQLITE_DONE) {
                sqlite3_reset(s);
                return cs_store_sql_fail(B->err, B->errlen, "%s: %s", B->path, sqlite3_errmsg(B->db));
            }
            sqlite3_reset(s);
        }
        /* next level: pairs summed in place */
        int64_t nn = (nb + 1) / 2;
        for (int64_t i = 0; i < nn; i++) {
            cs_tui_acc x = a[2 * i];
            if (2 * i + 1 < nb) {
                x.n += a[2 * i + 1].n;
                for (int k = 0; k < CS_TK_N; k++)
                    x.ns[k] += a[2 * i + 1].ns[k];
            }
            a[i] = x;
        }
        nb = nn;
    }
    sqlite3_stmt *s = B->pLane;
    sqlite3_bind_int(s, 1, lane);
    sqlite3_bind_int(s, 2, rank);
    sqlite3_bind_int(s, 3, tid);
    sqlite3_bind_int64(s, 4, spans);
    sqlite3_bind_int64(s, 5, maxdur);
    sqlite3_bind_int64(s, 6, first);
    sqlite3_bind_int64(s, 7, last);
    sqlite3_bind_int64(s, 8, stream);
    sqlite3_bind_int(s, 9, sidx);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_reset(s);
    return ok ? 0 : cs_store_sql_fail(B->err, B->errlen, "%s: %s", B->path, sqlite3_errmsg(B->db));
}

typedef struct cs_tui_lanebuf {
    int tid;
    int64_t stream; /* stream lanes */
    cs_tui_acc *a;
    int64_t spans, maxdur, first, last;
} cs_tui_lanebuf;

/* The lane of key in L (threads: by tid; streams: by stream), added when
 * absent; NULL when out of memory. */
static cs_tui_lanebuf *cs_tui_lane_get(cs_tui_build *B, cs_tui_lanebuf **L, int *nL, size_t *capL, int64_t key,
                                       int stream, int64_t b, int64_t e)
{
    for (int i = 0; i < *nL; i++)
        if (stream ? (*L)[i].stream == key : (*L)[i].tid == (int)key)
            return &(*L)[i];
    if (CS_VEC_RESERVE(*L, *capL, (size_t)*nL + 1) != 0)
        return NULL;
    cs_tui_lanebuf *lb = &(*L)[(*nL)++];
    memset(lb, 0, sizeof *lb);
    lb->tid = stream ? -1 : (int)key;
    lb->stream = stream ? key : 0;
    lb->first = b;
    lb->last = e;
    lb->a = calloc((size_t)B->nb, sizeof *lb->a);
    if (!lb->a)
        return NULL;
    return lb;
}

static void cs_tui_lane_count(cs_tui_build *B, cs_tui_lanebuf *lb, int64_t b)
{
    int64_t bi = (b - B->base) >> B->shift;
    if (bi < 0)
        bi = 0;
    if (bi >= B->nb)
        bi = B->nb - 1;
    lb->a[bi].n++;
    lb->spans++;
}

static int cs_tui_build_rank(cs_tui_build *B, int rank, int64_t *done)
{
    char sql[4096];
    /* the spans, then the stored wait (column CS_SPAN_NCOLS) */
    snprintf(sql, sizeof sql,
             "SELECT " CS_SPAN_LIST ", %s" CS_SPAN_FROM "%s WHERE s.rank = ?1 ORDER BY s.rank, s.begin_ns",
             B->waits_table ? "w.wait_ns" : "NULL", B->waits_table ? " LEFT JOIN waits w ON w.span = s.id" : "");
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(B->db, sql, -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(B->err, B->errlen, "%s: %s", B->path, sqlite3_errmsg(B->db));
    sqlite3_bind_int(s, 1, rank);
    cs_tui_lanebuf *L = NULL, *SL = NULL;
    int nL = 0, nSL = 0, rc, ret = 0;
    size_t capL = 0, capSL = 0;
    cs_span sp;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        cs_store_read_span_row(s, &sp);
        int tid = sp.tid, op = sp.op;
        int64_t b = sp.begin_ns, e = sp.end_ns, comm = sp.comm, seq = sp.seq;
        cs_tui_lanebuf *lb = cs_tui_lane_get(B, &L, &nL, &capL, tid, 0, b, e);
        if (!lb) {
            ret = cs_store_sql_fail(B->err, B->errlen, "out of memory (%lld buckets)", (long long)B->nb);
            break;
        }
        int kind = op >= 0 && op < B->nOp ? B->aKind[op] : CS_TK_OTHER;
        int64_t w = 0;
        if (kind == CS_TK_COLL) {
            if (sqlite3_column_type(s, CS_SPAN_NCOLS) != SQLITE_NULL) {
                w = sqlite3_column_int64(s, CS_SPAN_NCOLS);
            } else if (!B->waits_table && seq >= 0 && B->aAll[op]) {
                cs_tui_inst *in = cs_tui_iget(&B->inst, comm, seq, 0);
                if (in && in->last > b)
                    w = in->last - b;
            }
            if (w > e - b)
                w = e - b;
            if (w < 0)
                w = 0;
        }
        int64_t bi = (b - B->base) >> B->shift;
        if (bi < 0)
            bi = 0;
        if (bi >= B->nb)
            bi = B->nb - 1;
        lb->a[bi].n++;
        if (w > 0) {
            cs_tui_add(lb->a, B->nb, B->shift, B->base, b, b + w, CS_TK_WAIT);
            cs_tui_add(lb->a, B->nb, B->shift, B->base, b + w, e, CS_TK_COLL);
        } else {
            cs_tui_add(lb->a, B->nb, B->shift, B->base, b, e, kind);
        }
        lb->spans++;
        if (e - b > lb->maxdur)
            lb->maxdur = e - b;
        if (e > lb->last)
            lb->last = e;
        (*done)++;
        if (sp.stream != -1) {
            /* its stream lane: at its GPU times when known */
            int64_t gb = b, ge = e;
            if (sp.gpu_begin_ns && sp.gpu_end_ns >= sp.gpu_begin_ns) {
                gb = sp.gpu_begin_ns;
                ge = sp.gpu_end_ns;
            }
            cs_tui_lanebuf *sb = cs_tui_lane_get(B, &SL, &nSL, &capSL, sp.stream, 1, b, ge);
            if (!sb) {
                ret = cs_store_sql_fail(B->err, B->errlen, "out of memory (%lld buckets)", (long long)B->nb);
                break;
            }
            cs_tui_lane_count(B, sb, gb);
            cs_tui_add(sb->a, B->nb, B->shift, B->base, gb, ge, kind);
            /* first: the first use (CPU begin); max duration: from the
             * CPU begin, which the window query looks up */
            int64_t end = ge > e ? ge : e;
            if (end - b > sb->maxdur)
                sb->maxdur = end - b;
            if (ge > sb->last)
                sb->last = ge;
        }
    }
    if (!ret && rc != SQLITE_DONE)
        ret = cs_store_sql_fail(B->err, B->errlen, "%s: corrupt trace (%s)", B->path, sqlite3_errmsg(B->db));
    sqlite3_finalize(s);
    /* kernels on their stream lanes */
    if (!ret && B->act_table) {
        if (sqlite3_prepare_v2(B->db,
                               "SELECT g.stream, " CS_ALIGNED("g.begin_ns") ", " CS_ALIGNED(
                                   "g.end_ns") " FROM gpu_activity g LEFT JOIN clocks k ON k.rank = g.rank"
                                               " WHERE g.rank = ?1 AND g.kind = 'kernel' AND g.stream IS NOT NULL"
                                               " ORDER BY g.begin_ns",
                               -1, &s, NULL) != SQLITE_OK)
            ret = cs_store_sql_fail(B->err, B->errlen, "%s: %s", B->path, sqlite3_errmsg(B->db));
        else {
            sqlite3_bind_int(s, 1, rank);
            while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
                int64_t b = sqlite3_column_int64(s, 1), e = sqlite3_column_int64(s, 2);
                cs_tui_lanebuf *sb = cs_tui_lane_get(B, &SL, &nSL, &capSL, sqlite3_column_int64(s, 0), 1, b, e);
                if (!sb) {
                    ret = cs_store_sql_fail(B->err, B->errlen, "out of memory (%lld buckets)", (long long)B->nb);
                    break;
                }
                cs_tui_lane_count(B, sb, b);
                cs_tui_add(sb->a, B->nb, B->shift, B->base, b, e, CS_TK_GPU);
                if (e - b > sb->maxdur)
                    sb->maxdur = e - b;
                if (b < sb->first)
                    sb->first = b;
                if (e > sb->last)
                    sb->last = e;
            }
            if (!ret && rc != SQLITE_DONE)
                ret = cs_store_sql_fail(B->err, B->errlen, "%s: corrupt trace (%s)", B->path, sqlite3_errmsg(B->db));
            sqlite3_finalize(s);
        }
    }
    /* lanes of a rank by thread */
    for (int i = 0; i < nL; i++)
        for (int j = i + 1; j < nL; j++)
            if (L[j].tid < L[i].tid) {
                cs_tui_lanebuf x = L[i];
                L[i] = L[j];
                L[j] = x;
            }
    for (int i = 0; i < nL; i++) {
        /* max duration is in raw time: add a little for drift */
        if (!ret && L[i].a)
            ret = cs_tui_build_flush(B, L[i].a, rank, L[i].tid, 0, 0, L[i].spans, L[i].maxdur + 1000, L[i].first,
                                     L[i].last);
        free(L[i].a);
    }
    free(L);
    /* then by stream, in order of first use (first holds the first CPU
     * begin or kernel; the span's drawn begin may come later) */
    for (int i = 0; i < nSL; i++)
        for (int j = i + 1; j < nSL; j++)
            if (SL[j].first < SL[i].first || (SL[j].first == SL[i].first && SL[j].stream < SL[i].stream)) {
                cs_tui_lanebuf x = SL[i];
                SL[i] = SL[j];
                SL[j] = x;
            }
    for (int i = 0; i < nSL; i++) {
        int64_t first = SL[i].first;
        if (!ret && SL[i].a)
            ret = cs_tui_build_flush(B, SL[i].a, rank, -1, SL[i].stream, i + 1, SL[i].spans, SL[i].maxdur + 1000, first,
                                     SL[i].last);
        free(SL[i].a);
    }
    free(SL);
    return ret;
}

static int cs_tui_build_instances(cs_tui_build *B)
{
    const char *sql = "SELECT COALESCE(s.comm, 0), s.seq, s.op, " CS_ALIGNED(
        "s.begin_ns") ", s.rank FROM span s LEFT JOIN clocks k ON k.rank = s.rank WHERE s.seq IS NOT NULL";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(B->db, sql, -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(B->err, B->errlen, "%s: %s", B->path, sqlite3_errmsg(B->db));
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int op = sqlite3_column_int(s, 2);
        if (op < 0 || op >= B->nOp || !B->aAll[op])
            continue;
        int64_t seq = sqlite3_column_int64(s, 1);
        if (seq <= 0 && sqlite3_column_int64(s, 0) == 0)
            continue; /* (0, <=0) is the empty slot of the map */
        cs_tui_inst *in = cs_tui_iget(&B->inst, sqlite3_column_int64(s, 0), seq, 1);
        if (!in) {
            sqlite3_finalize(s);
            return cs_store_sql_fail(B->err, B->errlen, "out of memory");
        }
        int64_t b = sqlite3_column_int64(s, 3);
        if (b > in->last) {
            in->last = b;
            in->last_rank = sqlite3_column_int(s, 4);
        }
        if (b < in->first)
            in->first = b;
        in->n++;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE
               ? 0
               : cs_store_sql_fail(B->err, B->errlen, "%s: corrupt trace (%s)", B->path, sqlite3_errmsg(B->db));
}

/* The instances of the map as table tui_inst (created in the build's
 * transaction). */
static int cs_tui_build_inst_table(cs_tui_build *B)
{
    if (cs_store_sql_exec(B->db, B->path,
                          "DROP TABLE IF EXISTS tui_inst; CREATE TABLE tui_inst(comm INTEGER NOT NULL, seq INTEGER NOT"
                          " NULL, first_ns INTEGER, last_ns INTEGER, members INTEGER, last_rank INTEGER,"
                          " PRIMARY KEY(comm, seq)) WITHOUT ROWID;",
                          B->err, B->errlen) != 0)
        return -1;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(B->db, "INSERT OR REPLACE INTO tui_inst VALUES(?,?,?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(B->err, B->errlen, "%s: %s", B->path, sqlite3_errmsg(B->db));
    for (size_t i = 0; i < B->inst.cap; i++) {
        const cs_tui_inst *x = &B->inst.a[i];
        if (!(x->seq > 0 || x->comm) || x->n == 0)
            continue;
        sqlite3_bind_int64(s, 1, x->comm);
        sqlite3_bind_int64(s, 2, x->seq);
        sqlite3_bind_int64(s, 3, x->first);
        sqlite3_bind_int64(s, 4, x->last);
        sqlite3_bind_int(s, 5, x->n);
        sqlite3_bind_int(s, 6, x->last_rank);
        if (sqlite3_step(s) != SQLITE_DONE) {
            sqlite3_finalize(s);
            return cs_store_sql_fail(B->err, B->errlen, "%s: %s", B->path, sqlite3_errmsg(B->db));
        }
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return 0;
}

/* Open the trace at path to write what the TUI keeps in it (what: the
 * message's "cannot ..."): 0, or -1 with a reason and *db NULL. */
static int cs_tui_keep_open(const char *path, const char *what, sqlite3 **db, char *err, size_t errlen)
{
    *db = NULL;
    if (access(path, W_OK) != 0)
        return cs_store_sql_fail(err, errlen, "%s: cannot %s (%s)", path, what, strerror(errno));
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", path, *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close_v2(*db);
        *db = NULL;
        return -1;
    }
    sqlite3_busy_timeout(*db, 5000);
    return 0;
}

/* Step one bound insert and reset it: 0, or -1 with a reason. */
static int cs_tui_keep_step(sqlite3 *db, const char *path, sqlite3_stmt *s, char *err, size_t errlen)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
}

int cs_tui_index_build(const char *path, void (*progress)(double, void *), void *arg, cs_tui_index_info *out, char *err,
                       size_t errlen)
{
    int64_t t_start = cs_tui_now_ms();
    cs_tui_build B = { 0 };
    B.path = path;
    B.err = err;
    B.errlen = errlen;
    if (cs_tui_keep_open(path, "write the timeline index", &B.db, err, errlen) != 0)
        return -1;
    /* one rank's spans lie all over the file: read them in place, mapped,
     * not copied page by page through pread into the cache */
    sqlite3_exec(B.db, "PRAGMA synchronous=OFF; PRAGMA cache_size=-65536; PRAGMA mmap_size=17179869184;", NULL, NULL,
                 NULL);
    int ret = -1;
    int *aRank = NULL, nRank = 0;
    int64_t total = 0, maxspans = 0;
    cs_tui_clock *aClock = NULL;
    int nClock = 0;
    if (cs_tui_build_ops(&B) != 0 || cs_tui_load_clocks(B.db, &aClock, &nClock) != 0) {
        cs_store_sql_fail(err, errlen, "%s: corrupt trace (%s)", path, sqlite3_errmsg(B.db));
        goto done;
    }
    B.waits_table = cs_tui_table_exists(B.db, "waits");
    B.act_table = cs_tui_table_exists(B.db, "gpu_activity");
    /* The ranks, their span counts and time range, from the index. */
    {
        sqlite3_stmt *s, *q;
        if (sqlite3_prepare_v2(B.db, "SELECT DISTINCT rank FROM processes ORDER BY rank", -1, &s, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(B.db, "SELECT count(*), MIN(begin_ns), MAX(begin_ns) FROM span WHERE rank = ?1", -1, &q,
                               NULL) != SQLITE_OK) {
            cs_store_sql_fail(err, errlen, "%s: corrupt trace (%s)", path, sqlite3_errmsg(B.db));
            goto done;
        }
        B.base = INT64_MAX;
        B.end = INT64_MIN;
        size_t capRank = 0;
        int rc, got = SQLITE_ROW;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            int rank = sqlite3_column_int(s, 0);
            sqlite3_bind_int(q, 1, rank);
            if ((got = sqlite3_step(q)) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0) {
                int64_t cnt = sqlite3_column_int64(q, 0);
                const cs_tui_clock *c = cs_tui_clock_of(aClock, nClock, rank);
                int64_t off = c ? c->offset_ns : 0;
                int64_t lo = sqlite3_column_int64(q, 1) + off - 1000000, hi = sqlite3_column_int64(q, 2) + off;
                if (lo < B.base)
                    B.base = lo;
                if (hi > B.end)
                    B.end = hi;
                total += cnt;
                if (cnt > maxspans)
                    maxspans = cnt;
                if (CS_VEC_RESERVE(aRank, capRank, (size_t)nRank + 1) != 0) {
                    rc = SQLITE_NOMEM;
                    break;
                }
                aRank[nRank++] = rank;
            }
            sqlite3_reset(q);
            if (got != SQLITE_ROW)
                break;
        }
        if (rc != SQLITE_DONE || got != SQLITE_ROW)
            cs_store_sql_fail(err, errlen, "%s: corrupt trace (%s)", path, sqlite3_errmsg(B.db));
        sqlite3_finalize(s);
        sqlite3_finalize(q);
        if (rc != SQLITE_DONE || got != SQLITE_ROW)
            goto done;
    }
    if (!nRank) {
        B.base = 0;
        B.end = 1;
    }
    /* Spans that run past the last begin (Finalize) are clipped: leave room. */
    B.end += (B.end - B.base) / 16 + 1000000;
    {
        int64_t want = maxspans / 2;
        int64_t nb = 256;
        while (nb < want && nb < ((int64_t)1 << 19))
            nb <<= 1;
        int shift = 0;
        while (((B.end - B.base) >> shift) >= nb)
            shift++;
        B.shift = shift;
        B.nb = ((B.end - B.base) >> shift) + 1;
        B.levels = 1;
        for (int64_t x = B.nb; x > 1; x = (x + 1) / 2)
            B.levels++;
    }
    if (!B.waits_table && cs_tui_build_instances(&B) != 0)
        goto done;
    if (cs_store_sql_exec(B.db, path,
                          "BEGIN; DROP TABLE IF EXISTS tui_lod; DROP TABLE IF EXISTS tui_lanes;"
                          " CREATE TABLE IF NOT EXISTS tui_lanes(lane INTEGER PRIMARY KEY, rank INTEGER, tid INTEGER,"
                          " spans INTEGER, max_dur_ns INTEGER, first_ns INTEGER, last_ns INTEGER, stream INTEGER,"
                          " sidx INTEGER);"
                          " CREATE TABLE IF NOT EXISTS tui_lod(lane INTEGER NOT NULL, level INTEGER NOT NULL,"
                          " bucket INTEGER NOT NULL, n INTEGER, coll INTEGER, wait INTEGER, p2p INTEGER, gpu INTEGER,"
                          " other INTEGER, PRIMARY KEY(lane, level, bucket)) WITHOUT ROWID;",
                          err, errlen) != 0)
        goto done;
    /* the kernels of a stream lane in a window */
    if (B.act_table && cs_store_sql_exec(B.db, path,
                                         "CREATE INDEX IF NOT EXISTS tui_gpu_activity"
                                         " ON gpu_activity(rank, stream, begin_ns);",
                                         err, errlen) != 0) {
        sqlite3_exec(B.db, "ROLLBACK", NULL, NULL, NULL);
        goto done;
    }
    if (sqlite3_prepare_v2(B.db, "INSERT INTO tui_lod VALUES(?,?,?,?,?,?,?,?,?)", -1, &B.pIns, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(B.db, "INSERT INTO tui_lanes VALUES(?,?,?,?,?,?,?,?,?)", -1, &B.pLane, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(B.db));
        sqlite3_exec(B.db, "ROLLBACK", NULL, NULL, NULL);
        goto done;
    }
    int64_t done_spans = 0;
    for (int i = 0; i < nRank; i++) {
        if (cs_tui_build_rank(&B, aRank[i], &done_spans) != 0) {
            sqlite3_exec(B.db, "ROLLBACK", NULL, NULL, NULL);
            goto done;
        }
        if (progress)
            progress(total ? (double)done_spans / (double)total : 1.0, arg);
    }
    /* Without the analysis, a lane read raw finds each collective's last
     * arrival from its members' spans: with many ranks, thousands of spans
     * an instance. Kept here instead, one row an instance. */
    if (!B.waits_table && nRank >= CS_TUI_INST_RANKS && cs_tui_build_inst_table(&B) != 0) {
        sqlite3_exec(B.db, "ROLLBACK", NULL, NULL, NULL);
        goto done;
    }
    int64_t ms = cs_tui_now_ms() - t_start;
    char meta[1024];
    snprintf(meta, sizeof meta,
             "INSERT OR REPLACE INTO meta(key, value) VALUES ('tui_lod_version', '%d'), ('tui_lod_spans', '%lld'),"
             " ('tui_lod_shift', '%d'), ('tui_lod_levels', '%d'), ('tui_lod_base_ns', '%lld'),"
             " ('tui_lod_end_ns', '%lld'), ('tui_lod_waits', '%d'), ('tui_lod_build_ms', '%lld'); COMMIT;",
             CS_TUI_LOD_VERSION, (long long)total, B.shift, B.levels, (long long)B.base, (long long)B.end,
             B.waits_table, (long long)ms);
    if (cs_store_sql_exec(B.db, path, meta, err, errlen) != 0) {
        sqlite3_exec(B.db, "ROLLBACK", NULL, NULL, NULL);
        goto done;
    }
    if (out) {
        memset(out, 0, sizeof *out);
        out->present = 1;
        out->spans = total;
        out->shift = B.shift;
        out->levels = B.levels;
        out->base_ns = B.base;
        out->end_ns = B.end;
        out->waits = B.waits_table;
        out->build_s = (double)(cs_tui_now_ms() - t_start) / 1000.0;
    }
    ret = 0;
done:
    sqlite3_finalize(B.pIns);
    sqlite3_finalize(B.pLane);
    sqlite3_close_v2(B.db);
    free(B.aKind);
    free(B.aAll);
    free(B.inst.a);
    free(aRank);
    free(aClock);
    return ret;
}

/* ---- the failures, kept beside the summary ---- */

int cs_tui_failures_load(cs_tui *t, int64_t spans, cs_tui_fly **fly, int *nfly, cs_tui_fail **fail, int *nfail,
                         int64_t *end_ns)
{
    *fly = NULL;
    *fail = NULL;
    *nfly = *nfail = 0;
    *end_ns = 0;
    int64_t kept = -1;
    if (!cs_tui_table_exists(t->db, "tui_fly") || !cs_tui_table_exists(t->db, "tui_fail") ||
        cs_tui_meta_i64(t->db, "tui_fail_spans", &kept) != 0 || kept != spans)
        return 1;
    cs_tui_meta_i64(t->db, "tui_fail_end_ns", end_ns);
    sqlite3_stmt *s = NULL;
    size_t cap = 0;
    int rc = SQLITE_DONE;
    if (sqlite3_prepare_v2(t->db, "SELECT rank, tid, begin_ns FROM tui_fly ORDER BY rowid", -1, &s, NULL) != SQLITE_OK)
        goto fail;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (CS_VEC_RESERVE(*fly, cap, (size_t)*nfly + 1) != 0)
            goto fail;
        (*fly)[(*nfly)++] =
            (cs_tui_fly){ sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int64(s, 2) };
    }
    sqlite3_finalize(s);
    s = NULL;
    if (rc != SQLITE_DONE)
        goto fail;
    cap = 0;
    if (sqlite3_prepare_v2(t->db, "SELECT rank, t_ns, kind, text FROM tui_fail ORDER BY i", -1, &s, NULL) != SQLITE_OK)
        goto fail;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (CS_VEC_RESERVE(*fail, cap, (size_t)*nfail + 1) != 0)
            goto fail;
        cs_tui_fail *f = &(*fail)[(*nfail)++];
        f->rank = sqlite3_column_int(s, 0);
        f->t_ns = sqlite3_column_int64(s, 1);
        const char *k = (const char *)sqlite3_column_text(s, 2), *x = (const char *)sqlite3_column_text(s, 3);
        snprintf(f->kind, sizeof f->kind, "%s", k ? k : "");
        snprintf(f->text, sizeof f->text, "%s", x ? x : "");
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        goto fail2;
    return 0;
fail:
    sqlite3_finalize(s);
fail2:
    free(*fly);
    free(*fail);
    *fly = NULL;
    *fail = NULL;
    *nfly = *nfail = 0;
    return -1;
}

int cs_tui_failures_save(const char *path, int64_t spans, const cs_tui_fly *fly, int nfly, const cs_tui_fail *fail,
                         int nfail, int64_t end_ns, char *err, size_t errlen)
{
    sqlite3 *db;
    if (cs_tui_keep_open(path, "keep the failures", &db, err, errlen) != 0)
        return -1;
    sqlite3_stmt *a = NULL, *b = NULL;
    int ret = -1;
    if (cs_store_sql_exec(db, path,
                          "BEGIN; DROP TABLE IF EXISTS tui_fly; DROP TABLE IF EXISTS tui_fail;"
                          " CREATE TABLE tui_fly(rank INTEGER, tid INTEGER, begin_ns INTEGER);"
                          " CREATE TABLE tui_fail(i INTEGER PRIMARY KEY, rank INTEGER, t_ns INTEGER, kind TEXT,"
                          " text TEXT);",
                          err, errlen) != 0)
        goto done;
    if (sqlite3_prepare_v2(db, "INSERT INTO tui_fly VALUES(?,?,?)", -1, &a, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO tui_fail VALUES(?,?,?,?,?)", -1, &b, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
        goto rollback;
    }
    for (int i = 0; i < nfly; i++) {
        sqlite3_bind_int(a, 1, fly[i].rank);
        sqlite3_bind_int(a, 2, fly[i].tid);
        sqlite3_bind_int64(a, 3, fly[i].begin_ns);
        if (cs_tui_keep_step(db, path, a, err, errlen) != 0)
            goto rollback;
    }
    for (int i = 0; i < nfail; i++) {
        sqlite3_bind_int(b, 1, i);
        sqlite3_bind_int(b, 2, fail[i].rank);
        sqlite3_bind_int64(b, 3, fail[i].t_ns);
        sqlite3_bind_text(b, 4, fail[i].kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(b, 5, fail[i].text, -1, SQLITE_STATIC);
        if (cs_tui_keep_step(db, path, b, err, errlen) != 0)
            goto rollback;
    }
    char meta[256];
    snprintf(meta, sizeof meta,
             "INSERT OR REPLACE INTO meta(key, value) VALUES ('tui_fail_spans', '%lld'), ('tui_fail_end_ns', '%lld');"
             " COMMIT;",
             (long long)spans, (long long)end_ns);
    if (cs_store_sql_exec(db, path, meta, err, errlen) != 0)
        goto rollback;
    ret = 0;
    goto done;
rollback:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
done:
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    sqlite3_close_v2(db);
    return ret;
}

/* ---- the ranks' time in calls, kept beside the summary ---- */

int cs_tui_rank_busy_load(cs_tui *t, int64_t spans, int (*cb)(int, int64_t, int64_t, int64_t, void *), void *arg)
{
    int64_t kept = -1;
    if (!cs_tui_table_exists(t->db, "tui_rank_busy") || cs_tui_meta_i64(t->db, "tui_busy_spans", &kept) != 0 ||
        kept != spans)
        return 1;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(t->db, "SELECT rank, busy_ns, wall_ns, spans FROM tui_rank_busy ORDER BY rank", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        if (cb(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
               sqlite3_column_int64(s, 3), arg) != 0)
            break;
    int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_finalize(s);
    return bad ? -1 : 0;
}

int cs_tui_rank_busy_save(const char *path, int64_t spans, const cs_tui_busy *rows, int n, char *err, size_t errlen)
{
    sqlite3 *db;
    if (cs_tui_keep_open(path, "keep the ranks' times", &db, err, errlen) != 0)
        return -1;
    sqlite3_stmt *a = NULL;
    int ret = -1;
    if (cs_store_sql_exec(db, path,
                          "BEGIN; DROP TABLE IF EXISTS tui_rank_busy; CREATE TABLE tui_rank_busy(rank INTEGER PRIMARY"
                          " KEY, busy_ns INTEGER, wall_ns INTEGER, spans INTEGER);",
                          err, errlen) != 0)
        goto done;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO tui_rank_busy VALUES(?,?,?,?)", -1, &a, NULL) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
        goto rollback;
    }
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int(a, 1, rows[i].rank);
        sqlite3_bind_int64(a, 2, rows[i].busy_ns);
        sqlite3_bind_int64(a, 3, rows[i].wall_ns);
        sqlite3_bind_int64(a, 4, rows[i].spans);
        if (cs_tui_keep_step(db, path, a, err, errlen) != 0)
            goto rollback;
    }
    char meta[160];
    snprintf(meta, sizeof meta, "INSERT OR REPLACE INTO meta(key, value) VALUES ('tui_busy_spans', '%lld'); COMMIT;",
             (long long)spans);
    if (cs_store_sql_exec(db, path, meta, err, errlen) != 0)
        goto rollback;
    ret = 0;
    goto done;
rollback:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
done:
    sqlite3_finalize(a);
    sqlite3_close_v2(db);
    return ret;
}
