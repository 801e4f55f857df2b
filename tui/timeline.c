/* timeline.c: the timeline screen: one lane per rank (thread, stream),
 * the time axis, the selected span's details, the legend; its keys move
 * the view and the cursor, select, filter, step through the analysis
 * results and run the analysis. */
#include "config.h"
#include "tui/analysis.h"
#include "tui/lanes.h"
#include "tui/screen.h"

#include "common/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

typedef struct tui_timeline {
    tui_lanes lanes;  /* the cells of the last frame */
    tui_analysis nav; /* worst instances and straggler steps */
    int rows;         /* the lanes' rows of the last frame, without the details */
    int label_w;      /* the width of the lane labels of the last frame */
} tui_timeline;

static void *timeline_create(void)
{
    return calloc(1, sizeof(tui_timeline));
}

static void timeline_reset(void *st)
{
    tui_timeline *tl = st;
    tui_lanes_free(&tl->lanes);
    tui_analysis_free(&tl->nav);
}

static void timeline_destroy(void *st)
{
    if (st)
        timeline_reset(st);
    free(st);
}

/* ---- drawing ---- */

/* A tick step of 1, 2 or 5 times a power of ten, at least min_ns. */
static int64_t nice_step(double min_ns)
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

/* A tick label: a multiple of step in the unit of step, "20ms", "2.5us". */
static void fmt_tick(int64_t v, int64_t step, char *buf, size_t len)
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

static void draw_axis(const tui_model *m, WINDOW *w, int y, int x0, int ncols)
{
    double colns = ((double)m->t1 - (double)m->t0) / ncols;
    if (!(colns > 0))
        colns = 1;
    int64_t step = nice_step(colns * 12);
    /* ticks at multiples of step from the start of the trace: the first
     * at or after the window's start, then at most one per column */
    double rel0 = (double)m->t0 - (double)m->t_begin;
    double k0 = ceil(rel0 / (double)step);
    wmove(w, y, 0);
    wclrtoeol(w);
    wmove(w, y + 1, 0);
    wclrtoeol(w);
    tui_draw_text(w, y, 0, x0 - 1, A_BOLD, "time");
    for (int c = 0; c < ncols; c++)
        tui_draw_put(w, y + 1, x0 + c, m->utf8 ? L'\x2500' : L'-', A_NORMAL);
    int lastend = -1;
    for (int i = 0; i <= ncols; i++) {
        double rel = (k0 + i) * (double)step;
        double cx = (rel - rel0) / colns;
        if (!(cx < ncols))
            break;
        if (cx < 0)
            continue;
        int c = (int)cx;
        tui_draw_put(w, y + 1, x0 + c, m->utf8 ? L'\x253c' : L'+', A_NORMAL);
        char lbl[32];
        fmt_tick(rel > 9e18 ? INT64_MAX : rel < -9e18 ? INT64_MIN : (int64_t)rel, step, lbl, sizeof lbl);
        int n = (int)strlen(lbl);
        if (c > lastend && c + n <= ncols) {
            tui_draw_text(w, y, x0 + c, n, A_NORMAL, lbl);
            lastend = c + n;
        }
    }
    if (m->cur_col >= 0 && m->cur_col < ncols)
        tui_draw_put(w, y + 1, x0 + m->cur_col, m->utf8 ? L'\x25bc' : L'v', A_BOLD);
}

/* Does the selection have a stream, a group or GPU times (one more line)? */
static int details_gpu(const tui_model *m)
{
    const cs_span *s = &m->sel;
    return m->has_sel && (s->stream >= 0 || s->grp || s->gpu_begin_ns);
}

static void draw_details(const tui_model *m, WINDOW *w, int y, int h, int cols)
{
    char buf[1024], b1[32], b2[32], b3[32];
    const cs_span *s = &m->sel;
    const char *op = s->op >= 0 && s->op < m->nOp ? m->aOp[s->op].name : "?";
    const char *kind = s->op >= 0 && s->op < m->nOp ? m->aOp[s->op].kind : "";
    snprintf(buf, sizeof buf, "Selected: %s (%s)  rank %d thread %d  span #%lld", op, kind, s->rank, s->tid,
             (long long)s->id);
    tui_draw_line(w, y, cols, A_BOLD, buf);
    int line = 1;
    if (line < h) {
        int n = snprintf(buf, sizeof buf, "  bytes %s (count %lld)", cs_fmt_bytes(s->bytes, b1, sizeof b1),
                         (long long)s->count);
        if (s->comm) {
            char name[CS_COMMS_DISPLAY_MAX];
            n += snprintf(buf + n, sizeof buf - (size_t)n, "  comm %s",
                          cs_store_comms_label(&m->comms, s->comm, name, sizeof name));
        }
        if (s->seq >= 0)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "  seq %lld", (long long)s->seq);
        if (s->peer >= 0)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "  peer %d", s->peer);
        if (s->tag >= 0 && s->peer >= 0)
            snprintf(buf + n, sizeof buf - (size_t)n, "  tag %d", s->tag);
        tui_draw_line(w, y + line++, cols, A_NORMAL, buf);
    }
    if (line < h) {
        int n =
            snprintf(buf, sizeof buf, "  begin %s  duration %s", cs_fmt_dns(s->begin_ns - m->t_begin, 1, b1, sizeof b1),
                     cs_fmt_ns(s->end_ns - s->begin_ns, b2, sizeof b2));
        if (m->sel_wait >= 0)
            snprintf(buf + n, sizeof buf - (size_t)n, "  wait %s  who was last: rank %d  (skew %s, %d ranks)",
                     cs_fmt_ns(m->sel_wait, b3, sizeof b3), m->sel_last_rank, cs_fmt_ns(m->sel_skew, b1, sizeof b1),
                     m->sel_members);
        tui_draw_line(w, y + line++, cols, A_NORMAL, buf);
    }
    if (line < h && details_gpu(m)) {
        int n = 0;
        buf[0] = '\0';
        if (s->stream >= 0) {
            int si = tui_model_stream_index(m, s->rank, s->stream);
            if (si)
                n += snprintf(buf + n, sizeof buf - (size_t)n, "  stream s%d (%#llx)", si,
                              (unsigned long long)s->stream);
            else
                n += snprintf(buf + n, sizeof buf - (size_t)n, "  stream %#llx", (unsigned long long)s->stream);
        }
        if (s->grp)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "  group %lld", (long long)s->grp);
        if (s->gpu_begin_ns && s->gpu_end_ns >= s->gpu_begin_ns)
            snprintf(buf + n, sizeof buf - (size_t)n, "  GPU begin %s  end %s  duration %s",
                     cs_fmt_dns(s->gpu_begin_ns - m->t_begin, 1, b1, sizeof b1),
                     cs_fmt_dns(s->gpu_end_ns - m->t_begin, 1, b2, sizeof b2),
                     cs_fmt_ns(s->gpu_end_ns - s->gpu_begin_ns, b3, sizeof b3));
        tui_draw_line(w, y + line++, cols, A_NORMAL, buf);
    }
    if (line < h) {
        snprintf(buf, sizeof buf, "  call site: %s", m->sel_site[0] ? m->sel_site : "(unknown)");
        tui_draw_line(w, y + line++, cols, A_NORMAL, buf);
    }
    for (int i = 0; i < m->sel_nframes && line < h; i++, line++) {
        snprintf(buf, sizeof buf, "    %s", m->sel_frames[i]);
        tui_draw_line(w, y + line, cols, A_NORMAL, buf);
    }
    for (; line < h; line++) {
        wmove(w, y + line, 0);
        wclrtoeol(w);
    }
}

static void lane_label(const tui_model *m, int vi, char *buf, size_t len)
{
    int g = tui_model_row_group(m, vi);
    if (g >= 0) {
        tui_model_group_label(m, g, buf, len);
        return;
    }
    const cs_tui_lane *L = &m->aLane[m->aVis[vi]];
    if (L->sidx > 0)
        snprintf(buf, len, "r%d s%d", L->rank, L->sidx);
    else if (m->multi_tid)
        snprintf(buf, len, "r%d t%d", L->rank, L->tid);
    else
        snprintf(buf, len, "rank %d", L->rank);
}

/* The width of the lane labels: TUI_LABEL_W, wider where the labels of
 * the lanes on screen need it (ranks past 9999, groups' lanes), at most
 * 40 % of the window. */
static int label_width(const tui_model *m, int rows, int cols)
{
    int w = TUI_LABEL_W, max = cols * 2 / 5;
    char buf[TUI_LABEL_MAX];
    int top = m->lane_top, bot = top + rows + 1;
    if (m->cur_lane < top)
        top = m->cur_lane;
    if (m->cur_lane > bot)
        bot = m->cur_lane;
    for (int vi = top; vi < m->nVis && vi <= bot; vi++) {
        lane_label(m, vi, buf,
                   (size_t)(max > 2 ? max - 1 : 1) < sizeof buf ? (size_t)(max > 2 ? max - 1 : 1) : sizeof buf);
        int need = (int)strlen(buf) + 2;
        if (need > w)
            w = need;
    }
    return w > max && max > TUI_LABEL_W ? max : w;
}

static void draw_lane(const tui_model *m, const tui_lanes *f, WINDOW *w, int y, int r, int lw)
{
    char buf[TUI_LABEL_MAX], lbl[TUI_LABEL_MAX + 8];
    int vi = m->lane_top + r;
    int li = m->aVis[vi];
    const cs_tui_lane *L = &m->aLane[li];
    int ncols = f->ncols;
    lane_label(m, vi, buf, (size_t)(lw - 1) < sizeof buf ? (size_t)(lw - 1) : sizeof buf);
    int cur = vi == m->cur_lane;
    snprintf(lbl, sizeof lbl, "%c%-*.*s", cur ? '>' : ' ', lw - 2, lw - 2, buf);
    tui_draw_text(w, y, 0, lw - 1, cur ? A_REVERSE | A_BOLD : A_BOLD, lbl);
    const tui_cell *row = tui_lanes_row(f, r);
    double colns = (double)(m->t1 - m->t0) / ncols;
    for (int c = 0; c < ncols; c++) {
        int kind = row[c].kind;
        int64_t tc0 = m->t0 + (int64_t)(colns * c), tc1 = m->t0 + (int64_t)(colns * (c + 1));
        wchar_t g;
        /* a stream is idle between its spans: no compute there */
        if (kind == CS_TK_GAP && (L->sidx > 0 || tc1 < L->first_ns || tc0 > L->last_ns))
            g = L' ';
        else
            g = tui_draw_glyph(m, kind);
        attr_t a = tui_draw_kind_attr(m, kind);
        if (row[c].light && m->colour)
            a |= A_DIM;
        if (row[c].fly) {
            g = m->utf8 ? L'\x00bb' : L'>';
            a = tui_draw_kind_attr(m, CS_TK_WAIT) | A_BOLD;
        }
        if (cur && c == m->cur_col)
            a |= A_REVERSE;
        tui_draw_put(w, y, lw + c, g, a);
    }
}

static void timeline_draw(void *st, tui_model *m, WINDOW *w, int rows, int cols)
{
    tui_timeline *tl = st;
    char buf[512], b1[32], b2[32];
    tui_draw_header(m, w, cols, tui_timeline_screen.name);
    /* alike ranks grouped when they outnumber the rows (or c asked) */
    tl->rows = rows - 5 > 1 ? rows - 5 : 1;
    tui_model_group_fit(m, tl->rows);
    int lw = label_width(m, tl->rows, cols);
    tl->label_w = lw;
    int ncols = cols - lw;
    int det_h = m->has_sel ? 4 + details_gpu(m) + (m->sel_nframes < 5 ? m->sel_nframes : 5) : 0;
    int lanes_h = rows - 3 - 2 - det_h;
    if (lanes_h < 2 && det_h) {
        det_h -= 2 - lanes_h;
        if (det_h < 2)
            det_h = 0;
        lanes_h = rows - 5 - det_h;
    }
    if (lanes_h < 1)
        lanes_h = 1;
    int ok = tui_lanes_frame(&tl->lanes, m, ncols, lanes_h) == 0;
    draw_axis(m, w, 1, lw, ncols);
    for (int r = 0; r < lanes_h; r++) {
        int y = 3 + r;
        wmove(w, y, 0);
        wclrtoeol(w);
        if (ok && r < tl->lanes.rows)
            draw_lane(m, &tl->lanes, w, y, r, lw);
    }
    int y = 3 + lanes_h;
    if (det_h)
        draw_details(m, w, y, det_h, cols);
    y += det_h;
    /* legend */
    wmove(w, y, 0);
    wclrtoeol(w);
    int x = 0;
    for (int k = 1; k < CS_TK_N + 1 && x < cols; k++) {
        int kind = k % CS_TK_N;
        tui_draw_put(w, y, x, tui_draw_glyph(m, kind), tui_draw_kind_attr(m, kind));
        x += 1;
        int n = snprintf(buf, sizeof buf, " %s  ", tui_draw_kind_name[kind]);
        tui_draw_text(w, y, x, cols - x, A_NORMAL, buf);
        x += n;
    }
    if (m->nFly && x + 24 < cols) {
        tui_draw_put(w, y, x, m->utf8 ? L'\x00bb' : L'>', tui_draw_kind_attr(m, CS_TK_WAIT) | A_BOLD);
        tui_draw_text(w, y, x + 1, cols - x - 1, A_NORMAL, " never returned  ");
        x += 18;
    }
    int n = 0;
    buf[0] = '\0';
    if (m->f_rank >= 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "rank=%d ", m->f_rank);
    if (m->f_op >= 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "op=%s ", m->aOp[m->f_op].name);
    if (m->f_comm) {
        char name[CS_COMMS_DISPLAY_MAX];
        n += snprintf(buf + n, sizeof buf - (size_t)n, "comm=%s ",
                      cs_store_comms_name(&m->comms, m->f_comm, name, sizeof name));
    }
    char right[256];
    snprintf(right, sizeof right, "%s%s%s", n ? "filter: " : "", buf, m->lod_level >= 0 ? "summary" : "raw");
    if (x + (int)strlen(right) + 1 < cols)
        tui_draw_text(w, y, cols - (int)strlen(right), (int)strlen(right), A_DIM, right);
    snprintf(right, sizeof right, " cursor %s  view %s ",
             cs_fmt_dns(tui_model_cursor_time(m) - m->t_begin, 1, b1, sizeof b1),
             cs_fmt_ns(m->t1 - m->t0, b2, sizeof b2));
    tui_draw_statusline(m, w, rows - 1, cols, right);
}

/* ---- keys ---- */

static int key_goto(tui_model *m, tui_ui *ui)
{
    char line[160];
    if (tui_ui_prompt(ui, "go to time (e.g. 12.5ms, 3s, 40%): ", line, sizeof line) != 0)
        return 0;
    int64_t x = tui_model_parse_time(m, line);
    if (x < 0) {
        tui_model_status(m, 1, "go to: '%s' is not a time (12.5ms, 3s, 800us, 40%%)", line);
    } else {
        char b[32];
        tui_model_center(m, m->t_begin + x, 0);
        tui_model_status(m, 0, "at %s", cs_fmt_dns(x, 1, b, sizeof b));
    }
    return 0;
}

/* 'A': run the analysis off screen, then reopen the trace to show it. */
static int key_analyze(tui_model *m, tui_ui *ui)
{
    char err[1024], e2[1024];
    tui_ui_suspend(ui);
    int rc = tui_analyze(m, err, sizeof err);
    if (tui_model_reopen(m, e2, sizeof e2) != 0) {
        char msg[1100];
        snprintf(msg, sizeof msg, "collscope-tui: %s", e2);
        tui_ui_fail(ui, msg);
        return TUI_HANDLED | TUI_BREAK;
    }
    tui_ui_resume(ui);
    if (rc == 0)
        tui_model_status(m, 0, "analysis done: w/W worst instances, s/S straggler steps, R ranks");
    else
        tui_model_status(m, 1, "%s; see the messages above after quitting", err);
    return TUI_HANDLED | TUI_REDRAW | TUI_RELOADED;
}

static int timeline_key(void *st, tui_model *m, tui_ui *ui, int ch)
{
    tui_timeline *tl = st;
    int ncols = m->ncols > 0 ? m->ncols : 1;
    int64_t w = m->t1 - m->t0;
    char line[160];
    switch (ch) {
    case '+':
    case '=': tui_model_zoom(m, 0.5); break;
    case '-':
    case '_': tui_model_zoom(m, 2.0); break;
    case 'f':
        m->t0 = m->t_begin;
        m->t1 = m->t_end + (m->t_end - m->t_begin) / 50 + 1;
        break;
    case KEY_LEFT:
    case 'h':
        if (--m->cur_col < 0) {
            tui_model_pan(m, -w / 4);
            m->cur_col = ncols / 4 - 1;
        }
        break;
    case KEY_RIGHT:
    case 'l':
        if (++m->cur_col >= ncols) {
            tui_model_pan(m, w / 4);
            m->cur_col = ncols - ncols / 4;
        }
        break;
    case KEY_SLEFT:
    case 'H':
    case '<': tui_model_pan(m, -w / 4); break;
    case KEY_SRIGHT:
    case 'L':
    case '>': tui_model_pan(m, w / 4); break;
    case KEY_DOWN:
    case 'j':
        if (m->cur_lane + 1 < m->nVis)
            m->cur_lane++;
        tui_model_group_status(m, m->cur_lane);
        break;
    case KEY_UP:
    case 'k':
        if (m->cur_lane > 0)
            m->cur_lane--;
        tui_model_group_status(m, m->cur_lane);
        break;
    case KEY_NPAGE: m->cur_lane = m->cur_lane + 10 < m->nVis ? m->cur_lane + 10 : m->nVis - 1; break;
    case KEY_PPAGE: m->cur_lane = m->cur_lane > 10 ? m->cur_lane - 10 : 0; break;
    case 'c': tui_model_group_toggle(m, tl->rows > 0 ? tl->rows : 20); break;
    case 'e': tui_model_group_expand(m, m->cur_lane); break;
    case KEY_HOME:
    case '0':
        tui_model_center(m, m->t_begin + w / 2 - w / 50, w);
        m->cur_col = 0;
        break;
    case KEY_END:
    case '$':
        tui_model_center(m, m->t_end - w / 2 + w / 50, w);
        m->cur_col = ncols - 1;
        break;
    case 'g': key_goto(m, ui); break;
    case '\n':
    case '\r':
    case KEY_ENTER:
        if (tui_model_row_group(m, m->cur_lane) >= 0)
            tui_model_group_expand(m, m->cur_lane);
        else if (tui_model_select_at_cursor(m) != 0)
            tui_model_status(m, 1, "no span at the cursor on this lane");
        else
            tui_model_status(m, 0, "selected %s; Esc unselects", m->aOp[m->sel.op].name);
        break;
    case 27: m->has_sel = 0; break;
    case 'w': tui_analysis_next_worst(&tl->nav, m, 1); break;
    case 'W': tui_analysis_next_worst(&tl->nav, m, -1); break;
    case 's': tui_analysis_next_step(&tl->nav, m, 1); break;
    case 'S': tui_analysis_next_step(&tl->nav, m, -1); break;
    case '/':
        if (tui_ui_prompt(ui, "filter (op NAME | rank N | comm NAME|ID | clear): ", line, sizeof line) == 0 &&
            tui_model_filter(m, line) == 0)
            tui_analysis_forget_worst(&tl->nav);
        break;
    case 'x':
        tui_model_filter(m, "clear");
        tui_analysis_forget_worst(&tl->nav);
        break;
    case 'A': return key_analyze(m, ui);
    case 'F': tui_model_next_failure(m, 1); break;
    default: return TUI_IGNORED;
    }
    return TUI_HANDLED | TUI_REDRAW;
}

const tui_screen tui_timeline_screen = {
    .name = "timeline",
    .keys = "1t",
    .create = timeline_create,
    .destroy = timeline_destroy,
    .reset = timeline_reset,
    .draw = timeline_draw,
    .key = timeline_key,
};
