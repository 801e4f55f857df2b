/* model.c: what the terminal browser shows, without curses: the trace,
 * the view window, the cells of each lane, the selection, navigation by
 * analysis results, and the stats and ranks tables. */
#include "config.h"
#include "tui/tui.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tui_status(tui *t, int warn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->status, sizeof t->status, fmt, ap);
    va_end(ap);
    t->status_warn = warn;
}

const char *tui_fmt_ns(int64_t ns, char *buf, int len)
{
    double v = (double)ns;
    double a = fabs(v);
    if (a < 1e3)
        snprintf(buf, (size_t)len, "%lld ns", (long long)ns);
    else if (a < 1e6)
        snprintf(buf, (size_t)len, "%.3g us", v / 1e3);
    else if (a < 1e9)
        snprintf(buf, (size_t)len, "%.3g ms", v / 1e6);
    else
        snprintf(buf, (size_t)len, "%.4g s", v / 1e9);
    return buf;
}

const char *tui_fmt_bytes(int64_t b, char *buf, int len)
{
    if (b < 1024)
        snprintf(buf, (size_t)len, "%lld B", (long long)b);
    else if (b < 1024 * 1024)
        snprintf(buf, (size_t)len, "%.3g KiB", (double)b / 1024);
    else if (b < 1024LL * 1024 * 1024)
        snprintf(buf, (size_t)len, "%.3g MiB", (double)b / (1024.0 * 1024));
    else
        snprintf(buf, (size_t)len, "%.3g GiB", (double)b / (1024.0 * 1024 * 1024));
    return buf;
}

int64_t tui_parse_time(const tui *t, const char *s)
{
    char *end;
    while (*s == ' ')
        s++;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    while (*end == ' ')
        end++;
    double mul;
    if (!strcmp(end, "%"))
        return (int64_t)((double)(t->t_end - t->t_begin) * v / 100.0);
    if (!strcmp(end, "ns"))
        mul = 1;
    else if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "ms") || !*end)
        mul = 1e6;
    else if (!strcmp(end, "s"))
        mul = 1e9;
    else
        return -1;
    return (int64_t)(v * mul);
}

/* ---- opening ---- */

static int tui_comm_member(const cs_comm_member *m, void *arg)
{
    tui *t = arg;
    for (int i = 0; i < t->nComm; i++)
        if (t->aCommSize[2 * i] == m->comm)
            return 0;
    int64_t *na = realloc(t->aCommSize, (size_t)(t->nComm + 1) * 2 * sizeof *na);
    if (!na)
        return -1;
    t->aCommSize = na;
    na[2 * t->nComm] = m->comm;
    na[2 * t->nComm + 1] = m->size;
    t->nComm++;
    return 0;
}

static int tui_comm_size(const tui *t, int64_t comm)
{
    for (int i = 0; i < t->nComm; i++)
        if (t->aCommSize[2 * i] == comm)
            return (int)t->aCommSize[2 * i + 1];
    return 0;
}

static void tui_index_progress(double frac, void *arg)
{
    (void)arg;
    fprintf(stderr, "\rcollscope-tui: indexing the timeline... %3d%%", (int)(frac * 100));
    fflush(stderr);
}

int tui_open(tui *t, const char *arg, int build_index, int quiet, char *err, size_t errlen)
{
    struct stat sb;
    memset(t, 0, sizeof *t);
    t->f_op = -1;
    t->f_rank = -1;
    t->lod_level = -1;
    t->stats_sort = 3; /* total, as the report */
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(t->dir, sizeof t->dir, "%s", arg);
        snprintf(t->path, sizeof t->path, "%s/trace.db", arg);
    } else {
        snprintf(t->path, sizeof t->path, "%s", arg);
        snprintf(t->dir, sizeof t->dir, "%s", arg);
        char *sl = strrchr(t->dir, '/');
        if (sl)
            *sl = '\0';
        else
            snprintf(t->dir, sizeof t->dir, ".");
    }
    if (stat(t->path, &sb) != 0) {
        snprintf(err, errlen, "%s: no trace there (%s)", t->path,
                 stat(arg, &sb) == 0 ? "no trace.db in the directory; run collscope run -o DIR first"
                                     : "no such file or directory");
        return -1;
    }
    if (cs_store_open(t->path, CS_STORE_READ, &t->st, err, errlen) != 0)
        return -1;
    if (cs_store_procs(t->st, &t->aProc, &t->nProc) != 0 || cs_store_ops(t->st, &t->aOp, &t->nOp) != 0 ||
        cs_store_comm_members(t->st, tui_comm_member, t) != 0) {
        snprintf(err, errlen, "%s: corrupt trace (cannot read its processes)", t->path);
        return -1;
    }
    for (int i = 0; i < t->nProc; i++)
        t->nSpan += t->aProc[i].spans;
    t->aOpKind = calloc((size_t)t->nOp + 1, 1);
    t->aOpAll = calloc((size_t)t->nOp + 1, 1);
    if (!t->aOpKind || !t->aOpAll) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < t->nOp; i++) {
        t->aOpKind[i] = (unsigned char)cs_tui_kind_of(t->aOp[i].kind);
        t->aOpAll[i] = (unsigned char)cs_tui_kind_all_to_all(t->aOp[i].kind);
    }
    if (cs_tui_open(t->path, &t->q, err, errlen) != 0)
        return -1;
    cs_tui_index_info_get(t->q, t->nSpan, &t->idx);
    if ((!t->idx.present || t->idx.stale) && build_index && t->nSpan > 0) {
        char e2[512] = "";
        cs_tui_index_info info;
        int big = t->nSpan > 200000 && !quiet;
        if (cs_tui_index_build(t->path, big ? tui_index_progress : NULL, NULL, &info, e2, sizeof e2) == 0) {
            if (big)
                fprintf(stderr, "\rcollscope-tui: indexed %lld spans in %.1f s\n", (long long)t->nSpan, info.build_s);
            cs_tui_index_reload(t->q);
            cs_tui_index_info_get(t->q, t->nSpan, &t->idx);
        } else {
            if (big)
                fputc('\n', stderr);
            tui_status(t, 1, "no timeline index (%s): zoomed-out views are slow", e2);
        }
    }
    if (cs_tui_lanes(t->q, &t->aLane, &t->nLane) != 0) {
        snprintf(err, errlen, "%s: corrupt trace (cannot read its spans)", t->path);
        return -1;
    }
    if (t->nLane == 0) {
        snprintf(err, errlen, "%s: the trace holds no spans (did the job call MPI?)", t->path);
        return -1;
    }
    t->t_begin = INT64_MAX;
    t->t_end = INT64_MIN;
    for (int i = 0; i < t->nLane; i++) {
        if (t->aLane[i].first_ns < t->t_begin)
            t->t_begin = t->aLane[i].first_ns;
        if (t->aLane[i].last_ns > t->t_end)
            t->t_end = t->aLane[i].last_ns;
        if (t->aLane[i].sidx > 0)
            t->has_streams = 1;
        else if (i && t->aLane[i].rank == t->aLane[i - 1].rank && t->aLane[i - 1].sidx == 0)
            t->multi_tid = 1;
    }
    if (t->t_end <= t->t_begin)
        t->t_end = t->t_begin + 1000;
    t->aBuf = calloc((size_t)t->nLane, sizeof *t->aBuf);
    t->aVis = calloc((size_t)t->nLane, sizeof *t->aVis);
    if (!t->aBuf || !t->aVis) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int ex = cs_store_analysis_exists(t->st);
    if (ex == 1) {
        char v[64];
        t->analysed = 1;
        if (cs_store_meta_get(t->st, "analysis_spans", v, sizeof v) == 0 && strtoll(v, NULL, 10) == t->nSpan)
            t->analysed = 2;
    }
    int nranks = 0;
    for (int i = 0; i < t->nLane; i++)
        nranks += !i || t->aLane[i].rank != t->aLane[i - 1].rank;
    if (!t->status[0]) {
        if (nranks == 1)
            tui_status(t, 1, "single-rank trace: no cross-rank waits or stragglers to find");
        else if (!t->analysed)
            tui_status(t, 0,
                       "not analysed: worst instances, straggler steps and lateness need "
                       "'collscope analyze %s'",
                       t->dir);
        else if (t->analysed == 1)
            tui_status(t, 1, "the stored analysis is stale: run 'collscope analyze %s'", t->dir);
        else
            tui_status(t, 0, "%d ranks, %lld spans. Press ? for help.", nranks, (long long)t->nSpan);
    }
    tui_filters_apply(t);
    t->t0 = t->t_begin;
    t->t1 = t->t_end + (t->t_end - t->t_begin) / 50 + 1;
    return 0;
}

void tui_close(tui *t)
{
    for (int i = 0; i < t->nLane; i++)
        free(t->aBuf ? t->aBuf[i].a : NULL);
    free(t->aBuf);
    free(t->aVis);
    free(t->aCell);
    free(t->aInst);
    free(t->aLane);
    free(t->aProc);
    free(t->aOp);
    free(t->aOpKind);
    free(t->aOpAll);
    free(t->aCommSize);
    free(t->aWorst);
    free(t->aStep);
    free(t->aStrag);
    free(t->aRank);
    for (int i = 0; i < 3; i++)
        free(t->aGroup[i]);
    cs_tui_close(t->q);
    cs_store_close(t->st);
    memset(t, 0, sizeof *t);
}

void tui_filters_apply(tui *t)
{
    t->nVis = 0;
    for (int i = 0; i < t->nLane; i++)
        if (t->f_rank < 0 || t->aLane[i].rank == t->f_rank)
            t->aVis[t->nVis++] = i;
    if (t->cur_lane >= t->nVis)
        t->cur_lane = t->nVis ? t->nVis - 1 : 0;
    if (t->lane_top > t->cur_lane)
        t->lane_top = t->cur_lane;
}

int tui_lane_of(const tui *t, int rank, int tid)
{
    for (int i = 0; i < t->nVis; i++)
        if (t->aLane[t->aVis[i]].rank == rank && t->aLane[t->aVis[i]].sidx == 0 &&
            (tid < 0 || t->aLane[t->aVis[i]].tid == tid))
            return i;
    return -1;
}

int tui_stream_index(const tui *t, int rank, int64_t stream)
{
    for (int i = 0; i < t->nLane; i++)
        if (t->aLane[i].rank == rank && t->aLane[i].sidx > 0 && t->aLane[i].stream == stream)
            return t->aLane[i].sidx;
    return 0;
}

/* ---- view ---- */

int64_t tui_cursor_time(const tui *t)
{
    int n = t->ncols > 0 ? t->ncols : 1;
    double col = (double)(t->t1 - t->t0) / n;
    return t->t0 + (int64_t)(col * (t->cur_col + 0.5));
}

static void tui_clamp_view(tui *t)
{
    int64_t w = t->t1 - t->t0;
    int64_t span = t->t_end - t->t_begin;
    int64_t minw = t->ncols > 0 ? t->ncols : 80; /* 1 ns a column */
    int64_t maxw = span + span / 2 + 1000;
    if (w < minw)
        w = minw;
    if (w > maxw)
        w = maxw;
    if (t->t0 < t->t_begin - span / 4)
        t->t0 = t->t_begin - span / 4;
    if (t->t0 > t->t_end - w / 8)
        t->t0 = t->t_end - w / 8;
    t->t1 = t->t0 + w;
}

void tui_zoom(tui *t, double factor)
{
    int64_t tc = tui_cursor_time(t);
    double frac = t->ncols > 0 ? (t->cur_col + 0.5) / t->ncols : 0.5;
    int64_t w = (int64_t)((double)(t->t1 - t->t0) * factor);
    if (w < 1)
        w = 1;
    t->t0 = tc - (int64_t)(frac * (double)w);
    t->t1 = t->t0 + w;
    tui_clamp_view(t);
}

void tui_pan(tui *t, int64_t dt)
{
    t->t0 += dt;
    t->t1 += dt;
    tui_clamp_view(t);
}

void tui_center(tui *t, int64_t tc, int64_t width)
{
    if (width > 0) {
        t->t0 = tc - width / 2;
        t->t1 = t->t0 + width;
    } else {
        int64_t w = t->t1 - t->t0;
        t->t0 = tc - w / 2;
        t->t1 = t->t0 + w;
    }
    tui_clamp_view(t);
    int n = t->ncols > 0 ? t->ncols : 1;
    double col = (double)(t->t1 - t->t0) / n;
    int c = (int)((double)(tc - t->t0) / col);
    t->cur_col = c < 0 ? 0 : c >= n ? n - 1 : c;
}

/* ---- instances (last arrival), cached ---- */

static tui_inst *tui_inst_get(tui *t, int64_t comm, int64_t seq)
{
    if (!t->aInst) {
        t->nInstCap = 1 << 14;
        t->aInst = calloc((size_t)t->nInstCap, sizeof *t->aInst);
        if (!t->aInst)
            return NULL;
    }
    uint64_t h = ((uint64_t)comm * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)seq * 0xbf58476d1ce4e5b9ull);
    size_t j = (size_t)(h ^ (h >> 29)) & (size_t)(t->nInstCap - 1);
    for (int probe = 0; probe < 16; probe++, j = (j + 1) & (size_t)(t->nInstCap - 1)) {
        tui_inst *x = &t->aInst[j];
        if (x->used && x->comm == comm && x->seq == seq)
            return x;
        if (!x->used) {
            *x = (tui_inst){ comm, seq, INT64_MIN, INT64_MAX, 0, 0 };
            return x;
        }
    }
    /* a full neighbourhood: reuse the slot (it is only a cache) */
    tui_inst *x = &t->aInst[j];
    *x = (tui_inst){ comm, seq, INT64_MIN, INT64_MAX, 0, 0 };
    return x;
}

typedef struct tui_instq {
    int64_t last, first;
    int n, last_rank;
} tui_instq;

static int tui_instq_cb(const cs_span *s, void *arg)
{
    tui_instq *q = arg;
    if (s->begin_ns > q->last) {
        q->last = s->begin_ns;
        q->last_rank = s->rank;
    }
    if (s->begin_ns < q->first)
        q->first = s->begin_ns;
    q->n++;
    return 0;
}

static const tui_inst *tui_instance(tui *t, int64_t comm, int64_t seq)
{
    tui_inst *x = tui_inst_get(t, comm, seq);
    if (!x)
        return NULL;
    if (!x->used) {
        tui_instq q = { INT64_MIN, INT64_MAX, 0, -1 };
        if (cs_tui_instance(t->q, comm, seq, tui_instq_cb, &q) != 0)
            return NULL;
        x->last = q.last;
        x->first = q.first;
        x->used = 1;
    }
    return x;
}

/* ---- one frame ---- */

typedef struct tui_rawctx {
    tui *t;
    tui_lanebuf *lb;
    int limit;
    int stream; /* a stream lane: no waiting parts there */
} tui_rawctx;

/* The spans of lane L overlapping [t0, t1), as its lane draws them. */
static int tui_lane_window(tui *t, const cs_tui_lane *L, int64_t t0, int64_t t1, int (*cb)(const cs_span *, void *),
                           void *arg)
{
    if (L->sidx > 0)
        return cs_tui_stream_window(t->q, L->rank, L->stream, L->max_dur_ns, t0, t1, cb, arg);
    return cs_tui_window(t->q, L->rank, L->tid, L->max_dur_ns, t0, t1, cb, arg);
}

static int tui_raw_cb(const cs_span *s, void *arg)
{
    tui_rawctx *c = arg;
    tui *t = c->t;
    if (t->f_op >= 0 && s->op != t->f_op)
        return 0;
    if (t->f_comm && s->comm != t->f_comm)
        return 0;
    tui_lanebuf *lb = c->lb;
    if (lb->n >= c->limit) {
        lb->capped = 1;
        return 1;
    }
    if (lb->n == lb->cap) {
        int nc = lb->cap ? lb->cap * 2 : 256;
        tui_span *na = realloc(lb->a, (size_t)nc * sizeof *na);
        if (!na)
            return 1;
        lb->a = na;
        lb->cap = nc;
    }
    int kind = s->op < 0 ? CS_TK_GPU : s->op < t->nOp ? t->aOpKind[s->op] : CS_TK_OTHER;
    /* on a stream lane a collective is drawn whole, at its GPU times */
    lb->a[lb->n++] = (tui_span){ s->id, s->begin_ns, s->end_ns, s->comm, c->stream ? -1 : s->seq, s->op, kind, -1 };
    return 0;
}

static void tui_cells_add(tui_cell *row, double *acc, int ncols, int64_t t0, double colns, int64_t b, int64_t e,
                          int kind)
{
    if (e < b)
        return;
    double x0 = (double)(b - t0) / colns, x1 = (double)(e - t0) / colns;
    int c0 = (int)floor(x0), c1 = (int)floor(x1);
    if (c1 < 0 || c0 >= ncols)
        return;
    if (c0 < 0)
        c0 = 0;
    if (c1 >= ncols)
        c1 = ncols - 1;
    for (int c = c0; c <= c1; c++) {
        double lo = x0 > c ? x0 : c, hi = x1 < c + 1 ? x1 : c + 1;
        double v = hi > lo ? hi - lo : 0;
        /* something that is there shows, however short */
        if (v < 1e-3)
            v = 1e-3;
        acc[c * CS_TK_N + kind] += v;
    }
    (void)row;
}

static void tui_cells_finish(tui_cell *row, const double *acc, int ncols)
{
    for (int c = 0; c < ncols; c++) {
        const double *a = &acc[c * CS_TK_N];
        int best = CS_TK_GAP;
        double bv = 0, tot = 0;
        for (int k = 1; k < CS_TK_N; k++) {
            tot += a[k];
            if (a[k] > bv) {
                bv = a[k];
                best = k;
            }
        }
        row[c].kind = (unsigned char)best;
        row[c].light = best != CS_TK_GAP && tot < 0.25;
        row[c].cursor = 0;
    }
}

int tui_frame(tui *t, int ncols, int rows)
{
    if (ncols < 1)
        ncols = 1;
    if (t->ncols != ncols) {
        /* keep the cursor at the same time when the width changes */
        int64_t tc = t->ncols > 0 ? tui_cursor_time(t) : t->t0;
        t->ncols = ncols;
        double col = (double)(t->t1 - t->t0) / ncols;
        int c = (int)((double)(tc - t->t0) / col);
        t->cur_col = c < 0 ? 0 : c >= ncols ? ncols - 1 : c;
    }
    if (rows < 0)
        rows = 0;
    if (t->cur_lane < t->lane_top)
        t->lane_top = t->cur_lane;
    if (rows > 0 && t->cur_lane >= t->lane_top + rows)
        t->lane_top = t->cur_lane - rows + 1;
    if (t->lane_top + rows > t->nVis)
        t->lane_top = t->nVis - rows > 0 ? t->nVis - rows : 0;
    int nrows = t->nVis - t->lane_top < rows ? t->nVis - t->lane_top : rows;
    size_t need = (size_t)(nrows > 0 ? nrows : 1) * (size_t)ncols;
    if ((size_t)t->cell_rows * (size_t)t->ncols < need || !t->aCell) {
        free(t->aCell);
        t->aCell = calloc(need, sizeof *t->aCell);
        if (!t->aCell)
            return -1;
    }
    t->cell_rows = nrows;
    double *acc = calloc((size_t)ncols * CS_TK_N, sizeof *acc);
    cs_tui_bucket *bk = malloc(sizeof *bk * (size_t)(4 * ncols + 8));
    if (!acc || !bk) {
        free(acc);
        free(bk);
        return -1;
    }
    double colns = (double)(t->t1 - t->t0) / ncols;
    int filtered = t->f_op >= 0 || t->f_comm != 0;
    /* the level whose buckets are at most a column wide */
    int level = -1;
    if (t->idx.present) {
        /* below the finest level, its buckets still tell whether the lane
         * is dense enough here to need the summary */
        level = colns >= 1.0 ? (int)floor(log2(colns)) - t->idx.shift : 0;
        if (level < 0)
            level = 0;
        if (level >= t->idx.levels)
            level = t->idx.levels - 1;
    }
    t->lod_level = -1;
    int64_t raw_max = nrows > 0 ? TUI_RAW_BUDGET / nrows : TUI_RAW_MAX;
    raw_max = raw_max < TUI_RAW_MIN ? TUI_RAW_MIN : raw_max > TUI_RAW_MAX ? TUI_RAW_MAX : raw_max;
    /* Pass 1: read each visible lane, raw or summarized. */
    for (int r = 0; r < nrows; r++) {
        int li = t->aVis[t->lane_top + r];
        const cs_tui_lane *L = &t->aLane[li];
        tui_lanebuf *lb = &t->aBuf[li];
        tui_cell *row = &t->aCell[(size_t)r * (size_t)ncols];
        memset(acc, 0, (size_t)ncols * CS_TK_N * sizeof *acc);
        lb->n = 0;
        lb->capped = 0;
        lb->raw = 1;
        int nb = 0;
        if (level >= 0) {
            int sh = t->idx.shift + level;
            int64_t b0 = (t->t0 - t->idx.base_ns) >> sh, b1 = ((t->t1 - t->idx.base_ns) >> sh) + 1;
            if (b0 < 0)
                b0 = 0;
            if (b1 - b0 > 4 * ncols + 8)
                b1 = b0 + 4 * ncols + 8;
            nb = cs_tui_lod(t->q, li, level, b0, b1, bk, 4 * ncols + 8);
            int64_t inview = 0;
            for (int i = 0; i < nb; i++)
                inview += bk[i].n;
            if (nb >= 0 && inview > raw_max)
                lb->raw = 0;
        }
        if (!lb->raw && !filtered) {
            int sh = t->idx.shift + level;
            t->lod_level = level;
            for (int i = 0; i < nb; i++) {
                int64_t lo = t->idx.base_ns + (bk[i].b << sh);
                double width = (double)((int64_t)1 << sh);
                for (int k = 1; k < CS_TK_N; k++) {
                    if (!bk[i].ns[k])
                        continue;
                    /* spread the busy time over the bucket's columns */
                    double x0 = (double)(lo - t->t0) / colns, x1 = x0 + width / colns;
                    int c0 = (int)floor(x0), c1 = (int)floor(x1 - 1e-9);
                    double per = (double)bk[i].ns[k] / width;
                    for (int c = c0 < 0 ? 0 : c0; c <= c1 && c < ncols; c++) {
                        double l2 = x0 > c ? x0 : c, h2 = x1 < c + 1 ? x1 : c + 1;
                        if (h2 > l2)
                            acc[c * CS_TK_N + k] += per * (h2 - l2);
                    }
                }
            }
        } else {
            tui_rawctx c = { t, lb, lb->raw ? (int)(4 * raw_max) : 50000, L->sidx > 0 };
            lb->raw = 1;
            tui_lane_window(t, L, t->t0, t->t1, tui_raw_cb, &c);
        }
        tui_cells_finish(row, acc, ncols); /* provisional for summarized lanes */
        if (!lb->raw)
            continue;
    }
    /* Pass 2: last arrivals of the collectives in view, then raw cells. */
    for (int r = 0; r < nrows; r++) {
        int li = t->aVis[t->lane_top + r];
        tui_lanebuf *lb = &t->aBuf[li];
        if (!lb->raw)
            continue;
        for (int i = 0; i < lb->n; i++) {
            tui_span *s = &lb->a[i];
            if (s->seq < 0 || s->op < 0 || s->op >= t->nOp || !t->aOpAll[s->op])
                continue;
            tui_inst *x = tui_inst_get(t, s->comm, s->seq);
            if (x && !x->used) {
                x->n++;
                if (s->begin_ns > x->last)
                    x->last = s->begin_ns;
                if (s->begin_ns < x->first)
                    x->first = s->begin_ns;
            }
        }
    }
    for (int r = 0; r < nrows; r++) {
        int li = t->aVis[t->lane_top + r];
        tui_lanebuf *lb = &t->aBuf[li];
        if (!lb->raw)
            continue;
        tui_cell *row = &t->aCell[(size_t)r * (size_t)ncols];
        memset(acc, 0, (size_t)ncols * CS_TK_N * sizeof *acc);
        for (int i = 0; i < lb->n; i++) {
            tui_span *s = &lb->a[i];
            int kind = s->kind;
            if (kind == CS_TK_COLL && s->seq >= 0 && t->aOpAll[s->op]) {
                tui_inst *y = tui_inst_get(t, s->comm, s->seq);
                if (y && !y->used) {
                    int sz = tui_comm_size(t, s->comm);
                    if (sz > 0 && y->n >= sz)
                        y->used = 1;
                }
                const tui_inst *x = y && y->used ? y : tui_instance(t, s->comm, s->seq);
                if (x) {
                    int64_t w = x->last - s->begin_ns;
                    s->wait_ns = w < 0 ? 0 : w > s->end_ns - s->begin_ns ? s->end_ns - s->begin_ns : w;
                }
            }
            if (s->wait_ns > 0) {
                tui_cells_add(row, acc, ncols, t->t0, colns, s->begin_ns, s->begin_ns + s->wait_ns, CS_TK_WAIT);
                if (s->end_ns > s->begin_ns + s->wait_ns)
                    tui_cells_add(row, acc, ncols, t->t0, colns, s->begin_ns + s->wait_ns, s->end_ns, CS_TK_COLL);
            } else {
                tui_cells_add(row, acc, ncols, t->t0, colns, s->begin_ns, s->end_ns, kind);
            }
        }
        tui_cells_finish(row, acc, ncols);
    }
    /* mark the instance cache entries we filled from partial views unused:
     * only complete queries are kept */
    for (int r = 0; r < nrows; r++) {
        int li = t->aVis[t->lane_top + r];
        tui_lanebuf *lb = &t->aBuf[li];
        if (!lb->raw)
            continue;
        for (int i = 0; i < lb->n; i++)
            if (lb->a[i].seq >= 0 && lb->a[i].op >= 0 && lb->a[i].op < t->nOp && t->aOpAll[lb->a[i].op]) {
                tui_inst *x = tui_inst_get(t, lb->a[i].comm, lb->a[i].seq);
                if (x && !x->used) {
                    x->last = INT64_MIN;
                    x->first = INT64_MAX;
                    x->n = 0;
                }
            }
    }
    free(acc);
    free(bk);
    return 0;
}

/* ---- selection ---- */

static int tui_frame_cb(const cs_tui_frame *f, void *arg)
{
    tui *t = arg;
    if (t->sel_nframes >= 12)
        return 1;
    char *o = t->sel_frames[t->sel_nframes++];
    const char *file = f->file ? strrchr(f->file, '/') : NULL;
    file = file ? file + 1 : f->file;
    if (f->func && file && f->line > 0)
        snprintf(o, 160, "#%d %s  %s:%d", f->level, f->func, file, f->line);
    else if (f->func)
        snprintf(o, 160, "#%d %s", f->level, f->func);
    else if (f->module) {
        const char *m = strrchr(f->module, '/');
        snprintf(o, 160, "#%d %s+0x%llx", f->level, m ? m + 1 : f->module, (unsigned long long)f->pc);
    } else
        snprintf(o, 160, "#%d 0x%llx", f->level, (unsigned long long)f->pc);
    return 0;
}

int tui_select_span(tui *t, const cs_span *s)
{
    t->has_sel = 1;
    t->sel = *s;
    t->sel_last_rank = -1;
    t->sel_members = 0;
    t->sel_wait = -1;
    t->sel_skew = -1;
    t->sel_nframes = 0;
    t->sel_site[0] = '\0';
    if (s->seq >= 0 && s->comm) {
        cs_instance in;
        cs_wait *w = NULL;
        int nw = 0;
        if (t->analysed && cs_store_instance_of_span(t->st, s->id, &in, &w, &nw) == 0) {
            t->sel_last_rank = in.last_rank;
            t->sel_members = in.nranks;
            t->sel_skew = in.skew_ns;
            t->sel_last_begin = in.last_entry_ns;
            for (int i = 0; i < nw; i++)
                if (w[i].span == s->id)
                    t->sel_wait = w[i].wait_ns;
            free(w);
        } else {
            tui_instq q = { INT64_MIN, INT64_MAX, 0, -1 };
            if (cs_tui_instance(t->q, s->comm, s->seq, tui_instq_cb, &q) == 0 && q.n > 0) {
                t->sel_last_rank = q.last_rank;
                t->sel_members = q.n;
                t->sel_skew = q.last - q.first;
                t->sel_last_begin = q.last;
                int64_t w2 = q.last - s->begin_ns;
                t->sel_wait = w2 < 0 ? 0 : w2;
            }
        }
    }
    if (s->callsite) {
        cs_store_callsite_label(t->st, s->rank, s->callsite, t->sel_site, sizeof t->sel_site);
        cs_tui_frames(t->q, s->rank, s->callsite, tui_frame_cb, t);
    }
    return 0;
}

int tui_select_at_cursor(tui *t)
{
    if (t->nVis == 0)
        return -1;
    int li = t->aVis[t->cur_lane];
    const cs_tui_lane *L = &t->aLane[li];
    double colns = (double)(t->t1 - t->t0) / (t->ncols > 0 ? t->ncols : 1);
    int64_t tc = tui_cursor_time(t);
    int64_t half = (int64_t)(colns / 2) + 1;
    /* the span under the cursor, else the nearest within two columns */
    for (int widen = 0; widen < 2; widen++) {
        int64_t r = widen ? (int64_t)(colns * 2) + 1 : half;
        tui_lanebuf tmp = { 0 };
        tui_rawctx c = { t, &tmp, 20000, L->sidx > 0 };
        tui_lane_window(t, L, tc - r, tc + r, tui_raw_cb, &c);
        int best = -1;
        int64_t bd = INT64_MAX;
        for (int i = 0; i < tmp.n; i++) {
            if (!tmp.a[i].id)
                continue; /* a kernel: not a span */
            int64_t d = tc < tmp.a[i].begin_ns ? tmp.a[i].begin_ns - tc
                        : tc > tmp.a[i].end_ns ? tc - tmp.a[i].end_ns
                                               : 0;
            /* prefer communication over markers */
            if (tmp.a[i].kind == CS_TK_OTHER)
                d += (int64_t)colns;
            if (d < bd) {
                bd = d;
                best = i;
            }
        }
        if (best >= 0) {
            cs_span s;
            int64_t id = tmp.a[best].id;
            free(tmp.a);
            if (cs_tui_span(t->q, id, &s) != 0)
                return -1;
            return tui_select_span(t, &s);
        }
        free(tmp.a);
    }
    return -1;
}

/* ---- analysis navigation ---- */

static const char *tui_op_name(const tui *t, int op)
{
    return op >= 0 && op < t->nOp && t->aOp[op].name[0] ? t->aOp[op].name : "?";
}

static int tui_need_analysis(tui *t, const char *what)
{
    if (t->analysed)
        return 0;
    tui_status(t, 1, "%s: not analysed yet; run 'collscope analyze %s' (or press A)", what, t->dir);
    return -1;
}

typedef struct tui_spanfind {
    int rank;
    cs_span s;
    int found;
} tui_spanfind;

static int tui_spanfind_cb(const cs_span *s, void *arg)
{
    tui_spanfind *f = arg;
    if (s->rank == f->rank && !f->found) {
        f->s = *s;
        f->found = 1;
    }
    return 0;
}

int tui_next_worst(tui *t, int dir)
{
    if (tui_need_analysis(t, "worst instances"))
        return -1;
    if (!t->worst_loaded) {
        cs_instance_iter *it = cs_store_instances_by_skew(t->st, t->f_comm, 0, 0);
        int cap = 0;
        cs_instance x;
        t->nWorst = 0;
        while (it && t->nWorst < 10000 && cs_instance_next(it, &x) == 1) {
            if (x.op < 0 || x.op >= t->nOp || (t->f_op >= 0 && x.op != t->f_op))
                continue;
            if (t->nWorst == cap) {
                cap = cap ? cap * 2 : 256;
                cs_instance *na = realloc(t->aWorst, (size_t)cap * sizeof *na);
                if (!na)
                    break;
                t->aWorst = na;
            }
            t->aWorst[t->nWorst++] = x;
        }
        cs_instance_iter_free(it);
        t->worst_loaded = 1;
        t->iWorst = -1;
    }
    if (t->nWorst == 0) {
        tui_status(t, 1, "no collective instances in the analysis");
        return -1;
    }
    int i = t->iWorst + dir;
    if (i < 0 || i >= t->nWorst) {
        tui_status(t, 1, "%s worst instance", dir > 0 ? "no further" : "this is the");
        return -1;
    }
    t->iWorst = i;
    const cs_instance *x = &t->aWorst[i];
    int64_t end = x->last_exit_ns > x->last_entry_ns ? x->last_exit_ns : x->last_entry_ns;
    int64_t w = (end - x->first_entry_ns) * 4 + 1000;
    tui_center(t, x->last_entry_ns, w);
    tui_spanfind f = { x->last_rank, { 0 }, 0 };
    cs_tui_instance(t->q, x->comm, x->seq, tui_spanfind_cb, &f);
    if (f.found) {
        int l = tui_lane_of(t, f.s.rank, f.s.tid);
        if (l >= 0)
            t->cur_lane = l;
        tui_select_span(t, &f.s);
        tui_center(t, f.s.begin_ns, w);
    }
    char b1[32];
    tui_status(t, 0, "worst #%d of %d: %s seq %lld, arrival skew %s, last rank %d", i + 1, t->nWorst,
               tui_op_name(t, x->op), (long long)x->seq, tui_fmt_ns(x->skew_ns, b1, sizeof b1), x->last_rank);
    return 0;
}

static int tui_step_cb(const cs_step_row *r, void *arg)
{
    tui *t = arg;
    if (r->slowest_rank < 0)
        return 0;
    cs_step_row *na = realloc(t->aStep, (size_t)(t->nStep + 1) * sizeof *na);
    if (!na)
        return -1;
    t->aStep = na;
    na[t->nStep++] = *r;
    return 0;
}

int tui_next_step(tui *t, int dir)
{
    if (tui_need_analysis(t, "straggler steps"))
        return -1;
    if (!t->steps_loaded) {
        t->nStep = 0;
        cs_store_steps_list(t->st, tui_step_cb, t);
        t->steps_loaded = 1;
        t->iStep = -1;
    }
    if (t->nStep == 0) {
        tui_status(t, 1, "no straggler steps: no step had a late rank");
        return -1;
    }
    int i = t->iStep + dir;
    if (i < 0 || i >= t->nStep) {
        tui_status(t, 1, "%s straggler step", dir > 0 ? "no further" : "this is the first");
        return -1;
    }
    t->iStep = i;
    const cs_step_row *s = &t->aStep[i];
    int64_t w = (s->end_ns - s->begin_ns);
    tui_center(t, s->begin_ns + w / 2, w + w / 5 + 1000);
    int l = tui_lane_of(t, s->slowest_rank, -1);
    if (l >= 0)
        t->cur_lane = l;
    t->has_sel = 0;
    char b1[32], b2[32];
    tui_status(t, 0, "straggler step %lld (%d of %d): rank %d set the step time %s (on time: %s)", (long long)s->step,
               i + 1, t->nStep, s->slowest_rank, tui_fmt_ns(s->time_ns, b1, sizeof b1),
               tui_fmt_ns(s->whatif_ns, b2, sizeof b2));
    return 0;
}

/* ---- stats ---- */

static int tui_strag_cb(const cs_straggler *s, void *arg)
{
    tui *t = arg;
    if (t->nStrag >= 64)
        return 1;
    cs_straggler *na = realloc(t->aStrag, (size_t)(t->nStrag + 1) * sizeof *na);
    if (!na)
        return 1;
    t->aStrag = na;
    na[t->nStrag++] = *s;
    return 0;
}

int tui_load_stats(tui *t)
{
    if (t->stats_loaded)
        return 0;
    static const char *const by[3] = { "op", "comm", "callsite" };
    for (int i = 0; i < 3; i++) {
        size_t n = 0;
        free(t->aGroup[i]);
        t->aGroup[i] = NULL;
        t->nGroup[i] = 0;
        if (cs_store_group_stats(t->st, by[i], &t->aGroup[i], &n) != 0) {
            tui_status(t, 1, "cannot read the stats (corrupt trace?)");
            return -1;
        }
        t->nGroup[i] = (int)n;
    }
    if (t->analysed)
        cs_store_stragglers(t->st, tui_strag_cb, t);
    t->stats_loaded = 1;
    tui_sort_stats(t);
    return 0;
}

static int tui_sort_col, tui_sort_rev;
static int64_t tui_group_val(const tui_group *g, int col)
{
    switch (col) {
    case 1: return g->count;
    case 2: return g->bytes;
    case 3: return g->total;
    case 4: return g->p50;
    case 5: return g->p90;
    case 6: return g->p99;
    default: return g->max;
    }
}
static int tui_group_cmp(const void *x, const void *y)
{
    const tui_group *a = x, *b = y;
    int r;
    if (tui_sort_col == 0)
        r = strcmp(a->key, b->key);
    else {
        int64_t va = tui_group_val(a, tui_sort_col), vb = tui_group_val(b, tui_sort_col);
        r = va < vb ? 1 : va > vb ? -1 : strcmp(a->key, b->key);
    }
    return tui_sort_rev ? -r : r;
}

void tui_sort_stats(tui *t)
{
    tui_sort_col = t->stats_sort;
    tui_sort_rev = t->stats_rev;
    for (int i = 0; i < 3; i++)
        if (t->nGroup[i])
            qsort(t->aGroup[i], (size_t)t->nGroup[i], sizeof *t->aGroup[i], tui_group_cmp);
}

/* ---- ranks ---- */

static tui_rankrow *tui_rank_row(tui *t, int rank)
{
    for (int i = 0; i < t->nRank; i++)
        if (t->aRank[i].rank == rank)
            return &t->aRank[i];
    tui_rankrow *na = realloc(t->aRank, (size_t)(t->nRank + 1) * sizeof *na);
    if (!na)
        return NULL;
    t->aRank = na;
    memset(&na[t->nRank], 0, sizeof *na);
    na[t->nRank].rank = rank;
    return &na[t->nRank++];
}

static int tui_busy_cb(int rank, int64_t busy, int64_t wall, int64_t spans, void *arg)
{
    tui_rankrow *r = tui_rank_row(arg, rank);
    if (r) {
        r->busy_ns = busy;
        r->wall_ns = wall;
        r->spans = spans;
    }
    return 0;
}

static int tui_rstat_cb(const cs_rank_stat *s, void *arg)
{
    tui_rankrow *r = tui_rank_row(arg, s->rank);
    if (r) {
        r->times_last = s->times_last;
        r->imposed_ns = s->imposed_wait_ns;
        r->lateness_ns = s->median_lateness_ns;
        r->has_stat = 1;
    }
    return 0;
}

static int tui_rank_cmp(const void *x, const void *y)
{
    const tui_rankrow *a = x, *b = y;
    if (a->has_stat || b->has_stat) {
        /* the waiting a rank imposed on the others, then how often it was
         * last: a rank late by a little in every step outranks one late
         * by much once */
        if (a->imposed_ns != b->imposed_ns)
            return a->imposed_ns < b->imposed_ns ? 1 : -1;
        if (a->times_last != b->times_last)
            return a->times_last < b->times_last ? 1 : -1;
    } else {
        /* without the analysis: the rank that spends least time in calls
         * is the one the others wait for */
        double sa = a->wall_ns ? (double)a->busy_ns / (double)a->wall_ns : 0;
        double sb = b->wall_ns ? (double)b->busy_ns / (double)b->wall_ns : 0;
        if (sa != sb)
            return sa < sb ? -1 : 1;
    }
    return a->rank - b->rank;
}

int tui_load_ranks(tui *t)
{
    if (t->ranks_loaded)
        return 0;
    t->nRank = 0;
    if (cs_store_rank_busy(t->st, tui_busy_cb, t) != 0) {
        tui_status(t, 1, "cannot read the ranks (corrupt trace?)");
        return -1;
    }
    if (t->analysed)
        cs_store_rank_stats(t->st, tui_rstat_cb, t);
    qsort(t->aRank, (size_t)t->nRank, sizeof *t->aRank, tui_rank_cmp);
    t->ranks_loaded = 1;
    return 0;
}
