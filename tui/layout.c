/* layout.c: the layout screen: the ranks drawn as the job's parallel grid
 * (pipeline stages down, data-parallel replicas and tensor-parallel ranks
 * across; analyzer/analysis/an_layout.c), each cell shaded by how much of the
 * slowdown its rank explains (S_w and its share, analyzer/analysis/an_slowdown.c).
 * The arrows move between cells; Enter shows the rank's lane on the
 * timeline at the worst step (the most slowdown: replayed time over ideal). */
#include "config.h"
#include "tui/screen.h"

#include "analyzer/report/report.h"
#include "common/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tui_cell {
    int rank, dp, pp, tp;
    double s, share; /* -1: not replayed alone */
} tui_cell;

typedef struct tui_layout {
    tui_cell *aCell;
    int nCell;
    size_t capCell;
    int loaded;
    int D, P, T;
    char text[96], verdict[512];
    double S;
    int cur_pp, cur_col; /* the cursor: a stage, a column (dp * T + tp) */
} tui_layout;

static void *layout_create(void)
{
    return calloc(1, sizeof(tui_layout));
}

static void layout_reset(void *st)
{
    tui_layout *ls = st;
    free(ls->aCell);
    memset(ls, 0, sizeof *ls);
}

static void layout_destroy(void *st)
{
    if (st)
        layout_reset(st);
    free(st);
}

static int layout_row_cb(const cs_layout_row *r, void *arg)
{
    tui_layout *ls = arg;
    if (CS_VEC_RESERVE(ls->aCell, ls->capCell, (size_t)ls->nCell + 1) != 0)
        return -1;
    ls->aCell[ls->nCell++] = (tui_cell){ r->rank, r->dp, r->pp, r->tp, -1, -1 };
    return 0;
}

static int layout_sd_cb(const cs_slowdown_row *r, void *arg)
{
    tui_layout *ls = arg;
    if (strcmp(r->kind, "rank") != 0)
        return 0;
    int rank = atoi(r->ranks);
    for (int i = 0; i < ls->nCell; i++)
        if (ls->aCell[i].rank == rank) {
            ls->aCell[i].s = r->s;
            ls->aCell[i].share = r->share;
        }
    return 0;
}

static void layout_load(tui_layout *ls, tui_model *m)
{
    if (ls->loaded)
        return;
    ls->loaded = 1;
    ls->nCell = 0;
    if (!m->analysed)
        return;
    char buf[64];
    if (cs_store_meta_get(m->st, "analysis_layout", ls->text, sizeof ls->text) != 0 ||
        sscanf(ls->text, "dp %d x pp %d, tp %d", &ls->D, &ls->P, &ls->T) != 3) {
        ls->text[0] = '\0';
        return;
    }
    if (cs_store_layout(m->st, layout_row_cb, ls) != 0) {
        tui_model_status(m, 1, "cannot read the layout (corrupt trace?)");
        ls->nCell = 0;
        return;
    }
    cs_store_slowdown(m->st, layout_sd_cb, ls);
    ls->S = 0;
    if (cs_store_meta_get(m->st, "slowdown_S", buf, sizeof buf) == 0)
        ls->S = strtod(buf, NULL);
    if (cs_store_meta_get(m->st, "slowdown_text", ls->verdict, sizeof ls->verdict) != 0)
        ls->verdict[0] = '\0';
}

static const tui_cell *layout_cell(const tui_layout *ls, int pp, int col)
{
    for (int i = 0; i < ls->nCell; i++)
        if (ls->aCell[i].pp == pp && ls->aCell[i].dp * ls->T + ls->aCell[i].tp == col)
            return &ls->aCell[i];
    return NULL;
}

static void layout_draw(void *st, tui_model *m, WINDOW *w, int rows, int cols)
{
    tui_layout *ls = st;
    char buf[1024];
    tui_draw_header(m, w, cols, tui_layout_screen.name);
    layout_load(ls, m);
    int y = 1;
    if (!m->analysed) {
        tui_draw_line(w, y, cols, A_BOLD, " Layout: not analysed yet (A analyses the trace)");
        tui_draw_statusline(m, w, rows - 1, cols, " A: analyse  t: timeline  ?: help  q: quit ");
        return;
    }
    if (!ls->text[0] || ls->nCell == 0) {
        tui_draw_line(w, y, cols, A_BOLD, " Layout: none found in this trace (the report's notes say why)");
        tui_draw_statusline(m, w, rows - 1, cols, " t: timeline  ?: help  q: quit ");
        return;
    }
    snprintf(buf, sizeof buf, " Layout: %s; slowdown S %.3f: %s", ls->text, ls->S,
             ls->verdict[0] ? ls->verdict : "not attributed (fewer than 3 steps)");
    tui_draw_line(w, y++, cols, A_BOLD, buf);
    tui_draw_line(w, y++, cols, A_NORMAL,
                  " each cell: rank, S with only it slow (S_w), its share of the slowdown; bold >= 20 %, "
                  "reverse >= 50 %");
    int ncol = ls->D * ls->T, cw = 22;
    int first_col = ls->cur_col - (cols - 12) / cw + 1 > 0 ? ls->cur_col - (cols - 12) / cw + 1 : 0;
    int n = snprintf(buf, sizeof buf, " %-9s", "stage");
    for (int c = first_col; c < ncol && n < (int)sizeof buf - cw; c++) {
        char h[32];
        if (ls->T > 1)
            snprintf(h, sizeof h, "dp %d tp %d", c / ls->T, c % ls->T);
        else
            snprintf(h, sizeof h, "dp %d", c);
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %-*s", cw - 1, h);
    }
    tui_draw_line(w, y++, cols, A_REVERSE, buf);
    int top = ls->cur_pp - (rows - 2 - y) + 1 > 0 ? ls->cur_pp - (rows - 2 - y) + 1 : 0;
    for (int p = top; p < ls->P && y < rows - 1; p++, y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
        snprintf(buf, sizeof buf, " pp %-6d", p);
        tui_draw_text(w, y, 0, 10, A_NORMAL, buf);
        for (int c = first_col, x = 10; c < ncol && x + cw <= cols; c++, x += cw) {
            const tui_cell *e = layout_cell(ls, p, c);
            char cell[64];
            if (!e)
                snprintf(cell, sizeof cell, " -");
            else if (e->share < -0.5)
                snprintf(cell, sizeof cell, " r%d      -", e->rank);
            else
                snprintf(cell, sizeof cell, " r%d %6.3f %4.0f%%", e->rank, e->s, 100 * e->share);
            attr_t a = A_NORMAL;
            if (e && e->share >= 0.5)
                a = A_REVERSE | tui_draw_warn_attr(m);
            else if (e && e->share >= 0.2)
                a = A_BOLD;
            if (p == ls->cur_pp && c == ls->cur_col)
                a |= A_UNDERLINE;
            tui_draw_text(w, y, x, cw - 1, a, cell);
            if (p == ls->cur_pp && c == ls->cur_col)
                tui_draw_text(w, y, x, 1, A_BOLD, ">");
        }
    }
    for (; y < rows - 1; y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
    }
    tui_draw_statusline(m, w, rows - 1, cols, " arrows: move  Enter: its worst step  t: timeline  q: quit ");
}

/* ---- keys ---- */

/* The step with the most slowdown (its replayed time over its ideal
 * one, analyzer/analysis/an_slowdown.c), and where it lies. */
typedef struct layout_worst {
    int64_t step, excess, actual, ideal;
    cs_step_row row;
    int found, have_row;
} layout_worst;

static int layout_worst_cb(const cs_slowdown_row *r, void *arg)
{
    layout_worst *q = arg;
    long long k;
    if (strcmp(r->kind, "step") != 0 || sscanf(r->name, "step %lld", &k) != 1)
        return 0;
    if (!q->found || r->actual_ns - r->ideal_ns > q->excess) {
        q->step = k;
        q->excess = r->actual_ns - r->ideal_ns;
        q->actual = r->actual_ns;
        q->ideal = r->ideal_ns;
        q->found = 1;
    }
    return 0;
}

static int layout_row_of_cb(const cs_step_row *r, void *arg)
{
    layout_worst *q = arg;
    if (r->step == q->step) {
        q->row = *r;
        q->have_row = 1;
    }
    return 0;
}

static int layout_key(void *st, tui_model *m, tui_ui *ui, int ch)
{
    tui_layout *ls = st;
    (void)ui;
    int ncol = ls->D * ls->T;
    switch (ch) {
    case KEY_DOWN:
    case 'j':
        if (ls->cur_pp + 1 < ls->P)
            ls->cur_pp++;
        break;
    case KEY_UP:
    case 'k':
        if (ls->cur_pp > 0)
            ls->cur_pp--;
        break;
    case KEY_RIGHT:
    case 'l':
        if (ls->cur_col + 1 < ncol)
            ls->cur_col++;
        break;
    case KEY_LEFT:
    case 'h':
        if (ls->cur_col > 0)
            ls->cur_col--;
        break;
    case '\n':
    case '\r':
    case KEY_ENTER: {
        const tui_cell *e = layout_cell(ls, ls->cur_pp, ls->cur_col);
        if (!e)
            break;
        int l = tui_model_show_rank(m, e->rank, -1);
        if (l >= 0)
            m->cur_lane = l;
        layout_worst q;
        memset(&q, 0, sizeof q);
        cs_store_slowdown(m->st, layout_worst_cb, &q);
        if (q.found)
            cs_store_steps_list(m->st, layout_row_of_cb, &q);
        char b1[32], b2[32];
        if (q.have_row) {
            int64_t wd = q.row.end_ns - q.row.begin_ns;
            tui_model_center(m, q.row.begin_ns + wd / 2, wd + wd / 5 + 1000);
            cs_tunit u = cs_report_tunit(q.actual > q.ideal ? q.actual : q.ideal); /* one unit for the sentence */
            tui_model_status(m, 0, "rank %d in its worst step %lld: %s %s replayed, %s %s with ideal durations",
                             e->rank, (long long)q.step, cs_report_tnum(&u, q.actual, b1, sizeof b1), u.name,
                             cs_report_tnum(&u, q.ideal, b2, sizeof b2), u.name);
        } else {
            tui_model_status(m, 0, "rank %d: no step to show (no slowdown attribution)", e->rank);
        }
        m->has_sel = 0;
        m->screen = TUI_TIMELINE;
        break;
    }
    default: return TUI_IGNORED;
    }
    return TUI_HANDLED | TUI_REDRAW;
}

const tui_screen tui_layout_screen = {
    .name = "layout",
    .keys = "4G",
    .create = layout_create,
    .destroy = layout_destroy,
    .reset = layout_reset,
    .draw = layout_draw,
    .key = layout_key,
};
