/* draw.c: every screen of the terminal browser, drawn into a curses
 * WINDOW from the model (model.c). Used by collscope-tui and, off screen,
 * by bench/tui_bench. Works with and without colours and UTF-8: every kind
 * has its own glyph, colours only add to it. */
#include "config.h"
#include "tui/tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

enum { P_COLL = 1, P_WAIT, P_P2P, P_GPU, P_OTHER, P_GAP, P_HEAD, P_WARN, P_AXIS };

/* glyphs per kind: UTF-8, ASCII */
static const wchar_t tui_glyph_u[CS_TK_N] = { L'\x00b7', L'\x2588', L'\x2591', L'\x2592', L'\x2593', L'\x258c' };
static const wchar_t tui_glyph_a[CS_TK_N] = { L'.', L'#', L':', L'=', L'%', L'|' };
static const char *const tui_kind_name[CS_TK_N] = { "compute", "collective", "waiting", "p2p", "GPU", "other" };

void tui_draw_init(tui *t)
{
    if (t->colour && has_colors()) {
        start_color();
        use_default_colors();
        init_pair(P_COLL, COLOR_BLUE, -1);
        init_pair(P_WAIT, COLOR_YELLOW, -1);
        init_pair(P_P2P, COLOR_GREEN, -1);
        init_pair(P_GPU, COLOR_MAGENTA, -1);
        init_pair(P_OTHER, COLOR_CYAN, -1);
        init_pair(P_GAP, -1, -1);
        init_pair(P_HEAD, COLOR_BLACK, COLOR_CYAN);
        init_pair(P_WARN, COLOR_RED, -1);
        init_pair(P_AXIS, COLOR_WHITE, -1);
    } else {
        t->colour = 0;
    }
}

static attr_t tui_kind_attr(const tui *t, int kind)
{
    if (!t->colour)
        return kind == CS_TK_GAP ? A_DIM : A_NORMAL;
    static const short pair[CS_TK_N] = { P_GAP, P_COLL, P_WAIT, P_P2P, P_GPU, P_OTHER };
    return COLOR_PAIR(pair[kind]) | (kind == CS_TK_GAP ? A_DIM : A_NORMAL);
}

static void tui_put(WINDOW *w, int y, int x, wchar_t ch, attr_t attr)
{
    cchar_t cc;
    wchar_t s[2] = { ch, 0 };
    setcchar(&cc, s, attr, (short)PAIR_NUMBER(attr), NULL);
    mvwadd_wch(w, y, x, &cc);
}

/* Text clipped to n columns at (y, x). */
static void tui_text(WINDOW *w, int y, int x, int n, attr_t attr, const char *s)
{
    if (n <= 0)
        return;
    wattrset(w, attr);
    mvwaddnstr(w, y, x, s, n);
    wattrset(w, A_NORMAL);
}

static void tui_fill(WINDOW *w, int y, int x, int n, attr_t attr)
{
    wattrset(w, attr);
    for (int i = 0; i < n; i++)
        mvwaddch(w, y, x + i, ' ');
    wattrset(w, A_NORMAL);
}

static attr_t tui_head_attr(const tui *t)
{
    return t->colour ? COLOR_PAIR(P_HEAD) : A_REVERSE;
}

static void tui_header(tui *t, WINDOW *w, int cols, const char *title)
{
    char buf[1024];
    tui_fill(w, 0, 0, cols, tui_head_attr(t));
    snprintf(buf, sizeof buf, " collscope-tui | %s | %s | %d lanes, %lld spans | analysis: %s", title, t->dir, t->nLane,
             (long long)t->nSpan,
             t->analysed == 2   ? "yes"
             : t->analysed == 1 ? "stale"
                                : "none");
    tui_text(w, 0, 0, cols, tui_head_attr(t), buf);
}

static void tui_statusline(tui *t, WINDOW *w, int y, int cols, const char *right)
{
    int rl = right ? (int)strlen(right) : 0;
    wmove(w, y, 0);
    wclrtoeol(w);
    attr_t a = t->status_warn ? (t->colour ? COLOR_PAIR(P_WARN) | A_BOLD : A_BOLD) : A_NORMAL;
    int room = cols - rl - 1;
    tui_text(w, y, 0, room > 0 ? room : cols, a, t->status);
    if (right && rl < cols)
        tui_text(w, y, cols - rl, rl, A_NORMAL, right);
}

/* A tick step of 1, 2 or 5 times a power of ten, at least min_ns. */
static int64_t tui_nice_step(double min_ns)
{
    int64_t p = 1;
    for (;;) {
        if ((double)p >= min_ns)
            return p;
        if ((double)(2 * p) >= min_ns)
            return 2 * p;
        if ((double)(5 * p) >= min_ns)
            return 5 * p;
        if (p > INT64_MAX / 20)
            return p;
        p *= 10;
    }
}

static void tui_fmt_tick(int64_t v, int64_t step, char *buf, size_t len)
{
    const char *unit = "ns";
    double div = 1;
    if (step >= 1000000000) {
        unit = "s";
        div = 1e9;
    } else if (step >= 1000000) {
        unit = "ms";
        div = 1e6;
    } else if (step >= 1000) {
        unit = "us";
        div = 1e3;
    }
    double x = (double)v / div;
    if (x == (double)(int64_t)x)
        snprintf(buf, len, "%lld%s", (long long)x, unit);
    else
        snprintf(buf, len, "%g%s", x, unit);
}

static void tui_axis(tui *t, WINDOW *w, int y, int x0, int ncols)
{
    double colns = (double)(t->t1 - t->t0) / ncols;
    int64_t step = tui_nice_step(colns * 12);
    /* ticks at multiples of step from the start of the trace */
    int64_t rel0 = t->t0 - t->t_begin;
    int64_t k = rel0 >= 0 ? (rel0 + step - 1) / step : -((-rel0) / step);
    wmove(w, y, 0);
    wclrtoeol(w);
    wmove(w, y + 1, 0);
    wclrtoeol(w);
    char unitlbl[32];
    snprintf(unitlbl, sizeof unitlbl, "time");
    tui_text(w, y, 0, TUI_LABEL_W - 1, A_BOLD, unitlbl);
    for (int c = 0; c < ncols; c++)
        tui_put(w, y + 1, x0 + c, t->utf8 ? L'\x2500' : L'-', A_NORMAL);
    int lastend = -1;
    for (;; k++) {
        int64_t rel = k * step;
        double cx = (double)(rel - rel0) / colns;
        int c = (int)cx;
        if (c >= ncols)
            break;
        if (c < 0)
            continue;
        tui_put(w, y + 1, x0 + c, t->utf8 ? L'\x253c' : L'+', A_NORMAL);
        char lbl[32];
        tui_fmt_tick(rel, step, lbl, sizeof lbl);
        int n = (int)strlen(lbl);
        if (c > lastend && c + n <= ncols) {
            tui_text(w, y, x0 + c, n, A_NORMAL, lbl);
            lastend = c + n;
        }
    }
    if (t->cur_col >= 0 && t->cur_col < ncols)
        tui_put(w, y + 1, x0 + t->cur_col, t->utf8 ? L'\x25bc' : L'v', A_BOLD);
}

/* Does the selection have a stream, a group or GPU times (one more line)? */
static int tui_details_gpu(const tui *t)
{
    const cs_span *s = &t->sel;
    return t->has_sel && (s->stream >= 0 || s->grp || s->gpu_begin_ns);
}

static void tui_details(tui *t, WINDOW *w, int y, int h, int cols)
{
    char buf[1024], b1[32], b2[32], b3[32];
    const cs_span *s = &t->sel;
    const char *op = s->op >= 0 && s->op < t->nOp ? t->aOp[s->op].name : "?";
    const char *kind = s->op >= 0 && s->op < t->nOp ? t->aOp[s->op].kind : "";
    wmove(w, y, 0);
    wclrtoeol(w);
    snprintf(buf, sizeof buf, "Selected: %s (%s)  rank %d thread %d  span #%lld", op, kind, s->rank, s->tid,
             (long long)s->id);
    tui_text(w, y, 0, cols, A_BOLD, buf);
    int line = 1;
    if (line < h) {
        int n = snprintf(buf, sizeof buf, "  bytes %s (count %lld)", tui_fmt_bytes(s->bytes, b1, sizeof b1),
                         (long long)s->count);
        if (s->comm)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "  comm %#llx", (unsigned long long)s->comm);
        if (s->seq >= 0)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "  seq %lld", (long long)s->seq);
        if (s->peer >= 0)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "  peer %d", s->peer);
        if (s->tag >= 0 && s->peer >= 0)
            snprintf(buf + n, sizeof buf - (size_t)n, "  tag %d", s->tag);
        wmove(w, y + line, 0);
        wclrtoeol(w);
        tui_text(w, y + line, 0, cols, A_NORMAL, buf);
        line++;
    }
    if (line < h) {
        int n =
            snprintf(buf, sizeof buf, "  begin +%s  duration %s", tui_fmt_ns(s->begin_ns - t->t_begin, b1, sizeof b1),
                     tui_fmt_ns(s->end_ns - s->begin_ns, b2, sizeof b2));
        if (t->sel_wait >= 0)
            snprintf(buf + n, sizeof buf - (size_t)n, "  wait %s  who was last: rank %d  (skew %s, %d ranks)",
                     tui_fmt_ns(t->sel_wait, b3, sizeof b3), t->sel_last_rank, tui_fmt_ns(t->sel_skew, b1, sizeof b1),
                     t->sel_members);
        wmove(w, y + line, 0);
        wclrtoeol(w);
        tui_text(w, y + line, 0, cols, A_NORMAL, buf);
        line++;
    }
    if (line < h && tui_details_gpu(t)) {
        int n = 0;
        buf[0] = '\0';
        if (s->stream >= 0) {
            int si = tui_stream_index(t, s->rank, s->stream);
            if (si)
                n += snprintf(buf + n, sizeof buf - (size_t)n, "  stream s%d (%#llx)", si,
                              (unsigned long long)s->stream);
            else
                n += snprintf(buf + n, sizeof buf - (size_t)n, "  stream %#llx", (unsigned long long)s->stream);
        }
        if (s->grp)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "  group %lld", (long long)s->grp);
        if (s->gpu_begin_ns && s->gpu_end_ns >= s->gpu_begin_ns)
            snprintf(buf + n, sizeof buf - (size_t)n, "  GPU begin +%s  end +%s  duration %s",
                     tui_fmt_ns(s->gpu_begin_ns - t->t_begin, b1, sizeof b1),
                     tui_fmt_ns(s->gpu_end_ns - t->t_begin, b2, sizeof b2),
                     tui_fmt_ns(s->gpu_end_ns - s->gpu_begin_ns, b3, sizeof b3));
        wmove(w, y + line, 0);
        wclrtoeol(w);
        tui_text(w, y + line, 0, cols, A_NORMAL, buf);
        line++;
    }
    if (line < h) {
        snprintf(buf, sizeof buf, "  call site: %s", t->sel_site[0] ? t->sel_site : "(unknown)");
        wmove(w, y + line, 0);
        wclrtoeol(w);
        tui_text(w, y + line, 0, cols, A_NORMAL, buf);
        line++;
    }
    for (int i = 0; i < t->sel_nframes && line < h; i++, line++) {
        snprintf(buf, sizeof buf, "    %s", t->sel_frames[i]);
        wmove(w, y + line, 0);
        wclrtoeol(w);
        tui_text(w, y + line, 0, cols, A_NORMAL, buf);
    }
    for (; line < h; line++) {
        wmove(w, y + line, 0);
        wclrtoeol(w);
    }
}

static void tui_lane_label(const tui *t, int li, char *buf, size_t len)
{
    const cs_tui_lane *L = &t->aLane[li];
    if (L->sidx > 0)
        snprintf(buf, len, "r%d s%d", L->rank, L->sidx);
    else if (t->multi_tid)
        snprintf(buf, len, "r%d t%d", L->rank, L->tid);
    else
        snprintf(buf, len, "rank %d", L->rank);
}

static void tui_draw_timeline(tui *t, WINDOW *w, int rows, int cols)
{
    char buf[512], b1[32], b2[32];
    tui_header(t, w, cols, "timeline");
    int ncols = cols - TUI_LABEL_W;
    int det_h = t->has_sel ? 4 + tui_details_gpu(t) + (t->sel_nframes < 5 ? t->sel_nframes : 5) : 0;
    int lanes_h = rows - 3 - 2 - det_h;
    if (lanes_h < 2 && det_h) {
        det_h -= 2 - lanes_h;
        if (det_h < 2)
            det_h = 0;
        lanes_h = rows - 5 - det_h;
    }
    if (lanes_h < 1)
        lanes_h = 1;
    tui_frame(t, ncols, lanes_h);
    tui_axis(t, w, 1, TUI_LABEL_W, ncols);
    for (int r = 0; r < lanes_h; r++) {
        int y = 3 + r;
        wmove(w, y, 0);
        wclrtoeol(w);
        if (r >= t->cell_rows)
            continue;
        int vi = t->lane_top + r;
        int li = t->aVis[vi];
        const cs_tui_lane *L = &t->aLane[li];
        tui_lane_label(t, li, buf, sizeof buf);
        int cur = vi == t->cur_lane;
        char lbl[32];
        snprintf(lbl, sizeof lbl, "%c%-*.*s", cur ? '>' : ' ', TUI_LABEL_W - 2, TUI_LABEL_W - 2, buf);
        tui_text(w, y, 0, TUI_LABEL_W - 1, cur ? A_REVERSE | A_BOLD : A_BOLD, lbl);
        const tui_cell *row = &t->aCell[(size_t)r * (size_t)ncols];
        double colns = (double)(t->t1 - t->t0) / ncols;
        for (int c = 0; c < ncols; c++) {
            int kind = row[c].kind;
            int64_t tc0 = t->t0 + (int64_t)(colns * c), tc1 = t->t0 + (int64_t)(colns * (c + 1));
            wchar_t g;
            /* a stream is idle between its spans: no compute there */
            if (kind == CS_TK_GAP && (L->sidx > 0 || tc1 < L->first_ns || tc0 > L->last_ns))
                g = L' ';
            else
                g = t->utf8 ? tui_glyph_u[kind] : tui_glyph_a[kind];
            attr_t a = tui_kind_attr(t, kind);
            if (row[c].light && t->colour)
                a |= A_DIM;
            if (cur && c == t->cur_col)
                a |= A_REVERSE;
            tui_put(w, y, TUI_LABEL_W + c, g, a);
        }
    }
    int y = 3 + lanes_h;
    if (det_h)
        tui_details(t, w, y, det_h, cols);
    y += det_h;
    /* legend */
    wmove(w, y, 0);
    wclrtoeol(w);
    int x = 0;
    for (int k = 1; k < CS_TK_N + 1 && x < cols; k++) {
        int kind = k % CS_TK_N;
        tui_put(w, y, x, t->utf8 ? tui_glyph_u[kind] : tui_glyph_a[kind], tui_kind_attr(t, kind));
        x += 1;
        int n = snprintf(buf, sizeof buf, " %s  ", tui_kind_name[kind]);
        tui_text(w, y, x, cols - x, A_NORMAL, buf);
        x += n;
    }
    int n = 0;
    buf[0] = '\0';
    if (t->f_rank >= 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "rank=%d ", t->f_rank);
    if (t->f_op >= 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "op=%s ", t->aOp[t->f_op].name);
    if (t->f_comm)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "comm=%#llx ", (unsigned long long)t->f_comm);
    char right[256];
    snprintf(right, sizeof right, "%s%s%s%s", n ? "filter: " : "", buf, t->lod_level >= 0 ? "summary" : "raw", "");
    if (x + (int)strlen(right) + 1 < cols)
        tui_text(w, y, cols - (int)strlen(right), (int)strlen(right), A_DIM, right);
    snprintf(right, sizeof right, " cursor +%s  view %s ", tui_fmt_ns(tui_cursor_time(t) - t->t_begin, b1, sizeof b1),
             tui_fmt_ns(t->t1 - t->t0, b2, sizeof b2));
    tui_statusline(t, w, rows - 1, cols, right);
}

/* ---- stats ---- */

static const char *const tui_stat_cols[8] = { "key", "calls", "bytes", "total", "p50", "p90", "p99", "max" };
static const char *const tui_stat_titles[3] = { "Per op", "Per communicator", "Per call site" };

static void tui_draw_stats(tui *t, WINDOW *w, int rows, int cols)
{
    char buf[1024], b[7][32];
    tui_header(t, w, cols, "stats");
    tui_load_stats(t);
    int y = 1;
    snprintf(buf, sizeof buf, " Tables: %s%s%s | %s%s%s | %s%s%s   (Tab: next table, </>: sort column, r: reverse)",
             t->stats_table == 0 ? "[" : "", tui_stat_titles[0], t->stats_table == 0 ? "]" : "",
             t->stats_table == 1 ? "[" : "", tui_stat_titles[1], t->stats_table == 1 ? "]" : "",
             t->stats_table == 2 ? "[" : "", tui_stat_titles[2], t->stats_table == 2 ? "]" : "");
    wmove(w, y, 0);
    wclrtoeol(w);
    tui_text(w, y++, 0, cols, A_NORMAL, buf);
    if (t->nStrag > 0) {
        wmove(w, y, 0);
        wclrtoeol(w);
        tui_text(w, y++, 0, cols, A_BOLD, " Stragglers (by cost):");
        for (int i = 0; i < t->nStrag && i < 3 && y < rows - 4; i++) {
            const cs_straggler *s = &t->aStrag[i];
            snprintf(buf, sizeof buf, "  %s rank %d, steps %lld-%lld, cost %s/step: %s", s->kind, s->rank,
                     (long long)s->first_step, (long long)s->last_step, tui_fmt_ns(s->cost_ns, b[0], 32), s->evidence);
            wmove(w, y, 0);
            wclrtoeol(w);
            tui_text(w, y++, 0, cols, A_NORMAL, buf);
        }
    }
    int keyw = cols - 8 * 10 - 2;
    if (keyw > 40)
        keyw = 40;
    if (keyw < 12)
        keyw = 12;
    wmove(w, y, 0);
    wclrtoeol(w);
    snprintf(buf, sizeof buf, " %s (sorted by %s%s)", tui_stat_titles[t->stats_table], tui_stat_cols[t->stats_sort],
             t->stats_rev ? ", reversed" : "");
    tui_text(w, y++, 0, cols, A_BOLD, buf);
    int n = snprintf(buf, sizeof buf, " %-*.*s", keyw, keyw, t->stats_sort == 0 ? "key*" : "key");
    for (int c = 1; c < 8; c++) {
        char h[16];
        snprintf(h, sizeof h, "%s%s", tui_stat_cols[c], t->stats_sort == c ? "*" : "");
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %9s", h);
    }
    wmove(w, y, 0);
    wclrtoeol(w);
    tui_text(w, y++, 0, cols, A_REVERSE, buf);
    int ng = t->nGroup[t->stats_table];
    int room = rows - 1 - y;
    if (t->stats_top > ng - room)
        t->stats_top = ng - room > 0 ? ng - room : 0;
    for (int i = 0; i < room; i++, y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
        int gi = t->stats_top + i;
        if (gi >= ng)
            continue;
        const tui_group *g = &t->aGroup[t->stats_table][gi];
        char key[256];
        if (t->stats_table == 0)
            snprintf(key, sizeof key, "%s", g->key);
        else if (t->stats_table == 1) {
            long long id = strtoll(g->key, NULL, 10);
            snprintf(key, sizeof key, "%#llx [%s]", id, g->op);
        } else
            snprintf(key, sizeof key, "%s [%s]", g->key, g->op);
        snprintf(buf, sizeof buf, " %-*.*s %9lld %9s %9s %9s %9s %9s %9s", keyw, keyw, key, (long long)g->count,
                 tui_fmt_bytes(g->bytes, b[0], 32), tui_fmt_ns(g->total, b[1], 32), tui_fmt_ns(g->p50, b[2], 32),
                 tui_fmt_ns(g->p90, b[3], 32), tui_fmt_ns(g->p99, b[4], 32), tui_fmt_ns(g->max, b[5], 32));
        tui_text(w, y, 0, cols, A_NORMAL, buf);
    }
    tui_statusline(t, w, rows - 1, cols, " t: timeline  ?: help  q: quit ");
}

/* ---- ranks ---- */

static void tui_draw_ranks(tui *t, WINDOW *w, int rows, int cols)
{
    char buf[1024], b[6][32];
    tui_header(t, w, cols, "ranks");
    tui_load_ranks(t);
    int y = 1;
    int stat = t->analysed != 0;
    snprintf(buf, sizeof buf, " Ranks, latest first (%s)",
             stat ? "by the waiting each imposed on the others when it came last"
                  : "not analysed: by share of time in calls; run collscope analyze for lateness");
    wmove(w, y, 0);
    wclrtoeol(w);
    tui_text(w, y++, 0, cols, A_BOLD, buf);
    snprintf(buf, sizeof buf, " %6s %10s %12s %12s %12s %12s %7s %10s", "rank", "times last", "lateness",
             "imposed wait", "in calls", "wall", "share", "spans");
    wmove(w, y, 0);
    wclrtoeol(w);
    tui_text(w, y++, 0, cols, A_REVERSE, buf);
    int room = rows - 1 - y;
    if (t->ranks_top > t->nRank - room)
        t->ranks_top = t->nRank - room > 0 ? t->nRank - room : 0;
    for (int i = 0; i < room; i++, y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
        int ri = t->ranks_top + i;
        if (ri >= t->nRank)
            continue;
        const tui_rankrow *r = &t->aRank[ri];
        if (r->has_stat)
            snprintf(b[0], 32, "%lld", (long long)r->times_last);
        else
            snprintf(b[0], 32, "-");
        snprintf(buf, sizeof buf, " %6d %10s %12s %12s %12s %12s %6.1f%% %10lld", r->rank, b[0],
                 r->has_stat ? tui_fmt_ns(r->lateness_ns, b[1], 32) : "-",
                 r->has_stat ? tui_fmt_ns(r->imposed_ns, b[2], 32) : "-", tui_fmt_ns(r->busy_ns, b[3], 32),
                 tui_fmt_ns(r->wall_ns, b[4], 32), r->wall_ns ? 100.0 * (double)r->busy_ns / (double)r->wall_ns : 0.0,
                 (long long)r->spans);
        tui_text(w, y, 0, cols, ri == 0 && r->has_stat && r->times_last > 0 ? A_BOLD : A_NORMAL, buf);
    }
    tui_statusline(t, w, rows - 1, cols, " t: timeline  ?: help  q: quit ");
}

/* ---- help ---- */

static const char *const tui_help_lines[] = {
    "Timeline",
    "  + =  zoom in around the cursor       -  zoom out         f  fit the whole trace",
    "  h l  Left Right  move the cursor (the view follows)      H L  < >  pan by a quarter",
    "  j k  Down Up  next / previous lane                        Home 0  start   End $  end",
    "  g    go to a time (12.5ms, 3s, 40%)  Enter  select the span at the cursor  Esc  unselect",
    "  w W  next / previous worst collective instance, by arrival skew (needs the analysis)",
    "  s S  next / previous straggler step (needs the analysis)",
    "  /    filter: 'op NAME', 'rank N', 'comm ID' or 'clear'     x  clear the filters",
    "  A    run 'collscope analyze' on this trace now",
    "Screens",
    "  1 t  timeline    2 T  stats (Tab: next table, < >: sort column, r: reverse)    3 R  ranks by lateness",
    "  ?  this help  q  quit (from any screen)",
    "Glyphs",
    "  collective (transfer part), waiting part of a collective, point-to-point, GPU kernel,",
    "  other calls (init, markers), compute (no traced call); dim: busy less than a quarter.",
    NULL
};

static void tui_draw_help(tui *t, WINDOW *w, int rows, int cols)
{
    tui_header(t, w, cols, "help");
    int y = 1;
    for (int i = 0; tui_help_lines[i] && y < rows - 2; i++, y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
        tui_text(w, y, 0, cols, tui_help_lines[i][0] != ' ' ? A_BOLD : A_NORMAL, tui_help_lines[i]);
    }
    wmove(w, y, 0);
    wclrtoeol(w);
    int x = 2;
    for (int k = 1; k < CS_TK_N + 1 && x < cols - 12; k++) {
        int kind = k % CS_TK_N;
        tui_put(w, y, x, t->utf8 ? tui_glyph_u[kind] : tui_glyph_a[kind], tui_kind_attr(t, kind));
        char buf[32];
        int n = snprintf(buf, sizeof buf, " %s  ", tui_kind_name[kind]);
        tui_text(w, y, x + 1, cols - x - 1, A_NORMAL, buf);
        x += n + 1;
    }
    for (y++; y < rows - 1; y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
    }
    tui_statusline(t, w, rows - 1, cols, " any key: back ");
}

int tui_draw(tui *t, WINDOW *w, int rows, int cols)
{
    if (rows < TUI_MIN_ROWS || cols < TUI_MIN_COLS) {
        werase(w);
        char msg[128];
        snprintf(msg, sizeof msg, "Terminal too small (%dx%d): need at least %dx%d. Resize, or q to quit.", cols, rows,
                 TUI_MIN_COLS, TUI_MIN_ROWS);
        /* wrap at word boundaries */
        int y = 0, len = (int)strlen(msg), i = 0;
        while (i < len && y < rows) {
            int n = len - i < cols ? len - i : cols;
            if (i + n < len)
                for (int j = n; j > cols / 2; j--)
                    if (msg[i + j] == ' ') {
                        n = j;
                        break;
                    }
            mvwaddnstr(w, y++, 0, msg + i, n);
            i += n;
            while (msg[i] == ' ')
                i++;
        }
        return 0;
    }
    switch (t->screen) {
    case TUI_STATS: tui_draw_stats(t, w, rows, cols); break;
    case TUI_RANKS: tui_draw_ranks(t, w, rows, cols); break;
    case TUI_HELP: tui_draw_help(t, w, rows, cols); break;
    default: tui_draw_timeline(t, w, rows, cols); break;
    }
    return 0;
}
