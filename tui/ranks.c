/* ranks.c: the ranks screen: ranks, latest first (by the waiting each
 * imposed on the others when it came last, from the analysis; else by
 * share of time in calls). j k move the cursor; Enter shows the rank's lane
 * on the timeline (out of its group's lane when alike ranks are grouped).
 * On a trace with GPU time (the analysis's gpu_time table), g shows instead
 * each rank's GPU window as a bar split into compute, comm exposed, memory
 * and idle, with the shares, sorted by one of them (s cycles the key). */
#include "config.h"
#include "tui/screen.h"

#include "analyzer/report/report.h"
#include "common/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tui_rankrow {
    int rank;
    int64_t times_last, imposed_ns, lateness_ns;
    int64_t busy_ns, wall_ns, spans;
    int has_stat;
    /* the GPU time of the whole trace (gpu_time, step -1) */
    int has_gpu, gpu_outlier;
    int64_t gpu_window_ns, gpu_ns[4]; /* TUI_GPU_*: compute, comm exposed, memory, idle */
    int64_t gpu_overlapped_ns;
} tui_rankrow;

/* The parts of the GPU bar, in the order drawn; they fill the window. */
enum { TUI_GPU_COMPUTE, TUI_GPU_EXPOSED, TUI_GPU_MEMORY, TUI_GPU_IDLE, TUI_GPU_N };
static const char *const tui_gpu_name[TUI_GPU_N] = { "compute", "comm exposed", "memory", "idle" };
/* their glyphs (UTF-8, ASCII) and drawing kinds (colours) */
static const wchar_t tui_gpu_glyph_u[TUI_GPU_N] = { L'\x2588', L'\x2593', L'\x2592', L'\x00b7' };
static const wchar_t tui_gpu_glyph_a[TUI_GPU_N] = { L'#', L'=', L'~', L'.' };
static const int tui_gpu_kind[TUI_GPU_N] = { CS_TK_GPU, CS_TK_WAIT, CS_TK_OTHER, CS_TK_GAP };

typedef struct tui_ranks {
    tui_rankrow *aRank;
    int nRank;
    size_t capRank;
    int loaded;
    int top;  /* first row shown */
    int sel;  /* the row of the cursor */
    int room; /* rows shown by the last frame */
    int ngpu; /* ranks with GPU time */
    int gpu;  /* the GPU view is shown */
    int key;  /* its sort key: a TUI_GPU_* part (largest share first), or TUI_GPU_N: by rank */
} tui_ranks;

static void *ranks_create(void)
{
    return calloc(1, sizeof(tui_ranks));
}

static void ranks_reset(void *st)
{
    tui_ranks *rs = st;
    free(rs->aRank);
    memset(rs, 0, sizeof *rs);
}

static void ranks_destroy(void *st)
{
    if (st)
        ranks_reset(st);
    free(st);
}

/* ---- reading ---- */

static tui_rankrow *rank_row(tui_ranks *rs, int rank)
{
    /* the rows come by rank: the last one first */
    if (rs->nRank && rs->aRank[rs->nRank - 1].rank == rank)
        return &rs->aRank[rs->nRank - 1];
    for (int i = 0; i < rs->nRank; i++)
        if (rs->aRank[i].rank == rank)
            return &rs->aRank[i];
    if (CS_VEC_RESERVE(rs->aRank, rs->capRank, (size_t)rs->nRank + 1) != 0)
        return NULL;
    tui_rankrow *r = &rs->aRank[rs->nRank++];
    memset(r, 0, sizeof *r);
    r->rank = rank;
    return r;
}

static int busy_cb(int rank, int64_t busy, int64_t wall, int64_t spans, void *arg)
{
    tui_rankrow *r = rank_row(arg, rank);
    if (r) {
        r->busy_ns = busy;
        r->wall_ns = wall;
        r->spans = spans;
    }
    return 0;
}

static int rstat_cb(const cs_rank_stat *s, void *arg)
{
    tui_rankrow *r = rank_row(arg, s->rank);
    if (r) {
        r->times_last = s->times_last;
        r->imposed_ns = s->imposed_wait_ns;
        r->lateness_ns = s->median_lateness_ns;
        r->has_stat = 1;
    }
    return 0;
}

static int gpu_cb(const cs_gpu_time_row *g, void *arg)
{
    tui_ranks *rs = arg;
    if (g->step != -1)
        return 0;
    tui_rankrow *r = rank_row(rs, g->rank);
    if (r) {
        r->has_gpu = 1;
        r->gpu_outlier = g->outlier;
        r->gpu_window_ns = g->window_ns;
        r->gpu_ns[TUI_GPU_COMPUTE] = g->compute_ns;
        r->gpu_ns[TUI_GPU_EXPOSED] = g->comm_exposed_ns;
        r->gpu_ns[TUI_GPU_MEMORY] = g->memory_ns;
        r->gpu_ns[TUI_GPU_IDLE] = g->idle_ns;
        r->gpu_overlapped_ns = g->comm_overlapped_ns;
        rs->ngpu++;
    }
    return 0;
}

/* The share (0..1) of a rank's GPU window in part k (TUI_GPU_*, or
 * TUI_GPU_N: comm overlapped); 0 without GPU time. */
static double gpu_share(const tui_rankrow *r, int k)
{
    if (!r->has_gpu || r->gpu_window_ns <= 0)
        return 0;
    return (double)(k < TUI_GPU_N ? r->gpu_ns[k] : r->gpu_overlapped_ns) / (double)r->gpu_window_ns;
}

/* the sort key of the GPU view, for gpu_cmp (qsort has no argument) */
static int gpu_sort_key;

/* The GPU view's order: ranks with GPU time first, the largest share of
 * the key's part first (by rank for TUI_GPU_N), then by rank. */
static int gpu_cmp(const void *x, const void *y)
{
    const tui_rankrow *a = x, *b = y;
    if (a->has_gpu != b->has_gpu)
        return a->has_gpu ? -1 : 1;
    if (gpu_sort_key < TUI_GPU_N) {
        double sa = gpu_share(a, gpu_sort_key), sb = gpu_share(b, gpu_sort_key);
        if (sa != sb)
            return sa < sb ? 1 : -1;
    }
    return a->rank - b->rank;
}

static int rank_cmp(const void *x, const void *y)
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

/* The rows in the order of the view shown. */
static void ranks_sort(tui_ranks *rs)
{
    gpu_sort_key = rs->key;
    qsort(rs->aRank, (size_t)rs->nRank, sizeof *rs->aRank, rs->gpu ? gpu_cmp : rank_cmp);
}

static int ranks_load(tui_ranks *rs, tui_model *m)
{
    if (rs->loaded)
        return 0;
    rs->nRank = 0;
    /* a pass over the spans, kept beside a current summary */
    int cur = m->idx.present && !m->idx.stale && !m->job;
    if (!cur || cs_tui_rank_busy_load(m->q, m->nSpan, busy_cb, rs) != 0) {
        rs->nRank = 0;
        if (cs_store_rank_busy(m->st, busy_cb, rs) != 0) {
            tui_model_status(m, 1, "cannot read the ranks (corrupt trace?)");
            return -1;
        }
        cs_tui_busy *rows = cur ? malloc(sizeof *rows * (size_t)(rs->nRank + 1)) : NULL;
        char err[512];
        for (int i = 0; rows && i < rs->nRank; i++)
            rows[i] =
                (cs_tui_busy){ rs->aRank[i].rank, rs->aRank[i].busy_ns, rs->aRank[i].wall_ns, rs->aRank[i].spans };
        if (rows)
            cs_tui_rank_busy_save(m->path, m->nSpan, rows, rs->nRank, err, sizeof err);
        free(rows);
    }
    if (m->analysed) {
        cs_store_rank_stats(m->st, rstat_cb, rs);
        rs->ngpu = 0;
        if (cs_store_gpu_time(m->st, gpu_cb, rs) != 0)
            tui_model_status(m, 1, "cannot read the GPU time of the ranks");
    }
    if (!rs->ngpu)
        rs->gpu = 0;
    ranks_sort(rs);
    rs->loaded = 1;
    return 0;
}

/* ---- drawing ---- */

/* The GPU bar of a row: width cells from x, each part's cells up to its
 * cumulative share of the window (the parts fill it), in its glyph. */
static void gpu_bar(const tui_model *m, WINDOW *w, int y, int x, int width, const tui_rankrow *r)
{
    double cum = 0;
    int c = 0;
    for (int k = 0; k < TUI_GPU_N && r->has_gpu; k++) {
        cum += gpu_share(r, k);
        int end = k == TUI_GPU_N - 1 ? width : (int)(cum * width + 0.5);
        if (end > width)
            end = width;
        wchar_t g = m->utf8 ? tui_gpu_glyph_u[k] : tui_gpu_glyph_a[k];
        for (; c < end; c++)
            tui_draw_put(w, y, x + c, g, tui_draw_kind_attr(m, tui_gpu_kind[k]));
    }
}

/* The window's first and last rows to show, the cursor kept on screen. */
static void ranks_scroll(tui_ranks *rs, int room)
{
    rs->room = room;
    if (rs->sel >= rs->nRank)
        rs->sel = rs->nRank > 0 ? rs->nRank - 1 : 0;
    if (rs->sel < rs->top)
        rs->top = rs->sel;
    if (room > 0 && rs->sel >= rs->top + room)
        rs->top = rs->sel - room + 1;
    if (rs->top > rs->nRank - room)
        rs->top = rs->nRank - room > 0 ? rs->nRank - room : 0;
}

/* The GPU view: a row per rank, its shares and its bar. */
static void ranks_draw_gpu(tui_ranks *rs, tui_model *m, WINDOW *w, int rows, int cols)
{
    char buf[1024], legend[256];
    int y = 1;
    snprintf(buf, sizeof buf, " GPU time per rank (%% of its GPU window), by %s%s", rs->key < TUI_GPU_N ? "" : "rank",
             rs->key < TUI_GPU_N ? tui_gpu_name[rs->key] : "");
    if (rs->key < TUI_GPU_N)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " share, largest first");
    tui_draw_line(w, y++, cols, A_BOLD, buf);
    /* the legend: each part's glyph */
    int n = snprintf(legend, sizeof legend, " bar:");
    for (int k = 0; k < TUI_GPU_N && n < (int)sizeof legend; k++)
        n += snprintf(legend + n, sizeof legend - (size_t)n, "   %s", tui_gpu_name[k]);
    tui_draw_line(w, y, cols, A_NORMAL, legend);
    int x = 5;
    for (int k = 0; k < TUI_GPU_N; k++) {
        x += 3;
        if (x < cols)
            tui_draw_put(w, y, x - 1, m->utf8 ? tui_gpu_glyph_u[k] : tui_gpu_glyph_a[k],
                         tui_draw_kind_attr(m, tui_gpu_kind[k]));
        x += (int)strlen(tui_gpu_name[k]);
    }
    y++;
    /* the windows in one unit, chosen by the longest of all ranks' */
    int64_t most = 0;
    for (int ri = 0; ri < rs->nRank; ri++)
        if (rs->aRank[ri].has_gpu && rs->aRank[ri].gpu_window_ns > most)
            most = rs->aRank[ri].gpu_window_ns;
    cs_tunit wu = cs_report_tunit(most);
    char wh[32];
    snprintf(buf, sizeof buf, " %6s %12s %8s %8s %8s %8s %8s  %s", "rank",
             cs_report_thead("window", &wu, wh, sizeof wh), "compute", "exposed", "overlap", "memory", "idle",
             "GPU window");
    tui_draw_line(w, y++, cols, A_REVERSE, buf);
    ranks_scroll(rs, rows - 1 - y);
    int fixed = 1 + 6 + 1 + 12 + 5 * 9 + 2; /* the figures before the bar */
    int width = cols - fixed - 1;
    for (int i = 0; i < rs->room; i++, y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
        int ri = rs->top + i;
        if (ri >= rs->nRank)
            continue;
        const tui_rankrow *r = &rs->aRank[ri];
        char b[32];
        if (!r->has_gpu) {
            snprintf(buf, sizeof buf, " %6d %12s  no GPU activity", r->rank, "-");
        } else {
            snprintf(buf, sizeof buf, " %6d %12s %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%%%s", r->rank,
                     cs_report_tnum(&wu, r->gpu_window_ns, b, sizeof b), 100 * gpu_share(r, TUI_GPU_COMPUTE),
                     100 * gpu_share(r, TUI_GPU_EXPOSED), 100 * gpu_share(r, TUI_GPU_N),
                     100 * gpu_share(r, TUI_GPU_MEMORY), 100 * gpu_share(r, TUI_GPU_IDLE), r->gpu_outlier ? "!" : " ");
        }
        attr_t a = r->gpu_outlier ? A_BOLD : A_NORMAL;
        tui_draw_text(w, y, 0, cols, ri == rs->sel ? a | A_REVERSE : a, buf);
        if (r->has_gpu && width >= 10)
            gpu_bar(m, w, y, fixed, width, r);
    }
    tui_draw_statusline(m, w, rows - 1, cols,
                        " j k: move  s: sort key  g: lateness view  Enter: its lane  t: timeline  q: quit ");
}

static void ranks_draw(void *st, tui_model *m, WINDOW *w, int rows, int cols)
{
    tui_ranks *rs = st;
    char buf[1024], b[6][32];
    tui_draw_header(m, w, cols, tui_ranks_screen.name);
    ranks_load(rs, m);
    if (rs->gpu) {
        ranks_draw_gpu(rs, m, w, rows, cols);
        return;
    }
    int y = 1;
    int stat = m->analysed != 0;
    snprintf(buf, sizeof buf, " Ranks, latest first (%s)",
             stat ? "by the waiting each imposed on the others when it came last"
                  : "not analysed: by share of time in calls; run collscope analyze for lateness");
    tui_draw_line(w, y++, cols, A_BOLD, buf);
    /* one unit per column, chosen by its largest value over all ranks,
     * named in its header */
    int64_t most[4] = { 0 };
    for (int ri = 0; ri < rs->nRank; ri++) {
        const tui_rankrow *r = &rs->aRank[ri];
        const int64_t v[4] = { r->has_stat ? r->lateness_ns : 0, r->has_stat ? r->imposed_ns : 0, r->busy_ns,
                               r->wall_ns };
        for (int k = 0; k < 4; k++)
            if (v[k] > most[k])
                most[k] = v[k];
    }
    cs_tunit u[4];
    char h[4][32];
    static const char *const tname[4] = { "lateness", "imposed wait", "in calls", "wall" };
    for (int k = 0; k < 4; k++) {
        u[k] = cs_report_tunit(most[k]);
        cs_report_thead(tname[k], &u[k], h[k], sizeof h[k]);
    }
    snprintf(buf, sizeof buf, " %6s %10s %13s %17s %13s %12s %7s %10s", "rank", "times last", h[0], h[1], h[2], h[3],
             "share", "spans");
    tui_draw_line(w, y++, cols, A_REVERSE, buf);
    int room = rows - 1 - y;
    ranks_scroll(rs, room);
    for (int i = 0; i < room; i++, y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
        int ri = rs->top + i;
        if (ri >= rs->nRank)
            continue;
        const tui_rankrow *r = &rs->aRank[ri];
        if (r->has_stat)
            snprintf(b[0], 32, "%lld", (long long)r->times_last);
        else
            snprintf(b[0], 32, "-");
        snprintf(buf, sizeof buf, " %6d %10s %13s %17s %13s %12s %6.1f%% %10lld", r->rank, b[0],
                 r->has_stat ? cs_report_tnum(&u[0], r->lateness_ns, b[1], 32) : "-",
                 r->has_stat ? cs_report_tnum(&u[1], r->imposed_ns, b[2], 32) : "-",
                 cs_report_tnum(&u[2], r->busy_ns, b[3], 32), cs_report_tnum(&u[3], r->wall_ns, b[4], 32),
                 r->wall_ns ? 100.0 * (double)r->busy_ns / (double)r->wall_ns : 0.0, (long long)r->spans);
        attr_t a = ri == 0 && r->has_stat && r->times_last > 0 ? A_BOLD : A_NORMAL;
        tui_draw_text(w, y, 0, cols, ri == rs->sel ? a | A_REVERSE : a, buf);
    }
    tui_draw_statusline(m, w, rows - 1, cols,
                        rs->ngpu ? " j k: move  g: GPU time  Enter: its lane  t: timeline  q: quit "
                                 : " j k: move  Enter: its lane  t: timeline  q: quit ");
}

/* ---- keys ---- */

static int ranks_key(void *st, tui_model *m, tui_ui *ui, int ch)
{
    tui_ranks *rs = st;
    (void)ui;
    int page = rs->room > 1 ? rs->room - 1 : 1;
    switch (ch) {
    case KEY_DOWN:
    case 'j':
        if (rs->sel + 1 < rs->nRank)
            rs->sel++;
        break;
    case KEY_UP:
    case 'k':
        if (rs->sel > 0)
            rs->sel--;
        break;
    case KEY_NPAGE: rs->sel = rs->sel + page < rs->nRank ? rs->sel + page : (rs->nRank ? rs->nRank - 1 : 0); break;
    case KEY_PPAGE: rs->sel = rs->sel > page ? rs->sel - page : 0; break;
    case 'g':
        if (!rs->ngpu) {
            tui_model_status(m, 1,
                             m->analysed ? "no GPU activity in this trace"
                                         : "not analysed: run collscope analyze (or A) for the GPU time");
            break;
        }
        rs->gpu = !rs->gpu;
        ranks_sort(rs);
        rs->sel = rs->top = 0;
        break;
    case 's':
        if (!rs->gpu)
            return TUI_IGNORED;
        rs->key = (rs->key + 1) % (TUI_GPU_N + 1);
        ranks_sort(rs);
        rs->sel = rs->top = 0;
        tui_model_status(m, 0, "sorted by %s", rs->key < TUI_GPU_N ? tui_gpu_name[rs->key] : "rank");
        break;
    case '\n':
    case '\r':
    case KEY_ENTER:
        if (rs->sel < rs->nRank) {
            int rank = rs->aRank[rs->sel].rank;
            int l = tui_model_show_rank(m, rank, -1);
            if (l >= 0) {
                m->cur_lane = l;
                tui_model_status(m, 0, "rank %d (row %d of the ranks by lateness)", rank, rs->sel + 1);
            } else {
                tui_model_status(m, 1, "rank %d is hidden by the filter: x clears it", rank);
            }
            m->screen = TUI_TIMELINE;
        }
        break;
    default: return TUI_IGNORED;
    }
    return TUI_HANDLED | TUI_REDRAW;
}

const tui_screen tui_ranks_screen = {
    .name = "ranks",
    .keys = "3R",
    .create = ranks_create,
    .destroy = ranks_destroy,
    .reset = ranks_reset,
    .draw = ranks_draw,
    .key = ranks_key,
};
